"""SimAI / AICB workload files (``HYBRID_TRANSFORMER_FWD_IN_BCKWD``) read into the same DAG.

File format (AICB output, as SimAI reads it)::

    HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 2 vpp: 1 ga: 4 all_gpus: 64 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 8388608
    <number of rows>
    name depen fwd_compute fwd_comm_type fwd_comm_bytes ig_compute ig_comm_type ig_comm_bytes wg_compute wg_comm_type wg_comm_bytes wg_update

Compute times are ns.  Comm types: ``NONE``, ``ALLREDUCE``, ``ALLGATHER``, ``REDUCESCATTER``,
``ALLTOALL``, optionally suffixed ``_EP``, ``_DP`` or ``_DP_EP`` to pick the group.

How this module interprets it (our reading of the published format, documented so results can
be compared):

* ``TP = model_parallel_NPU_group``, ``PP = pp``, ``EP = ep``, ``DP = all_gpus / (TP*PP)``;
  ranks are placed as in :mod:`~ns3wormhole.workload.placement`.
* The rows describe one rank's share of the model; every pipeline stage runs all rows.
* ``ga`` is the number of micro-batches per iteration (0 counts as 1), scheduled 1F1B.  Between
  stages each GPU sends ``pp_comm`` bytes per micro-batch forward and backward (required when
  ``pp > 1``).  ``vpp`` (interleaving), ``depen`` and the checkpoint fields are not modelled.
* Forward: per row, ``fwd_compute`` then the ``fwd`` collective.  Backward, rows in reverse:
  ``ig_compute``, the ``ig`` collective, ``wg_compute``.  Unsuffixed ``fwd``/``ig`` collectives
  run over the TP group, unsuffixed ``wg`` collectives over the DP group.  ``fwd``/``ig``
  collectives block the compute stream.
* ``wg`` collectives (gradient sync) are issued once per iteration, after the row's
  ``wg_compute`` of the last micro-batch, on a separate per-GPU communication stream
  (one after another, overlapping the remaining backward); the optimizer step (the sum of
  ``wg_update``) waits for the stream.
* Byte counts are the collective's full buffer: a ring all-reduce / all-gather / reduce-scatter
  moves ``bytes/N`` per step; an all-to-all sends ``bytes/N`` to every other rank.
* A group entirely inside one server is one NVLink delay per rank (ring time at the NVLink
  rate); otherwise the collective becomes flows (:mod:`~ns3wormhole.workload.collectives`).
  ``ComputeSpec.tp_comm = False`` drops TP-group collectives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from .collectives import all_to_all, ring_allgather, ring_allreduce, ring_reducescatter
from .dag import (
    COLL_ALLGATHER,
    COLL_ALLREDUCE,
    COLL_ALLTOALL,
    COLL_OP_NAMES,
    COLL_P2P,
    COLL_REDUCESCATTER,
    KIND_DP_ALLREDUCE,
    KIND_DP_COMM,
    KIND_EDP_ALLREDUCE,
    KIND_EP_A2A_BWD,
    KIND_EP_A2A_FWD,
    KIND_PP_FWD,
    KIND_TP_COMM,
    PHASE_BWD,
    PHASE_FWD,
    PHASE_OPT,
    Dag,
    DagBuilder,
    gpipe,
    one_f_one_b,
    run_pipeline,
)
from .. import limits
from .models import ComputeSpec, ParallelSpec
from .placement import Placement

__all__ = ["AicbComm", "AicbRow", "AicbWorkload", "aicb_dag", "read_aicb"]

_OPS = {"ALLREDUCE": COLL_ALLREDUCE, "ALLGATHER": COLL_ALLGATHER, "REDUCESCATTER": COLL_REDUCESCATTER,
        "ALLTOALL": COLL_ALLTOALL}
_SUFFIXES = (("_DP_EP", "dp_ep"), ("_EP", "ep"), ("_DP", "dp"))
_HEADER_KEYS = ("model_parallel_NPU_group", "ep", "pp", "vpp", "ga", "all_gpus", "checkpoints",
                "checkpoint_initiates", "pp_comm")


@dataclass(frozen=True)
class AicbComm:
    """One collective of a row: algorithm (``COLL_*``), group (``"tp"``, ``"dp"``, ``"ep"``,
    ``"dp_ep"``) and bytes."""

    op: int
    group: str
    nbytes: int

    def __str__(self) -> str:
        return f"{COLL_OP_NAMES[self.op]}/{self.group}/{self.nbytes}B"


@dataclass(frozen=True)
class AicbRow:
    name: str
    line: int
    fwd_ns: int
    fwd_comm: AicbComm | None
    ig_ns: int
    ig_comm: AicbComm | None
    wg_ns: int
    wg_comm: AicbComm | None
    wg_update_ns: int


@dataclass(frozen=True)
class AicbWorkload:
    source: str
    policy: str
    tp: int
    ep: int
    pp: int
    vpp: int
    ga: int
    all_gpus: int
    pp_comm_bytes: int
    rows: list[AicbRow] = field(default_factory=list)

    @property
    def dp(self) -> int:
        return self.all_gpus // (self.tp * self.pp)

    @property
    def num_microbatches(self) -> int:
        return max(1, self.ga)

    def parallel(self, gpus_per_server: int = 8) -> ParallelSpec:
        return ParallelSpec(tp=self.tp, dp=self.dp, pp=self.pp, ep=self.ep, gpus_per_server=gpus_per_server)


def _int(token: str, what: str, src: str, line: int, whole: bool = True) -> int:
    """A count or byte size (``whole``: 4.4 GPUs or 0.4 bytes are refused, never rounded)
    or a compute time in ns (rounded); every value within what a run can represent."""
    try:
        v = float(token)
    except ValueError:
        raise InputError(src, line, f"{what}: expected a number, got {token!r}") from None
    if v < 0 or v != v:
        raise InputError(src, line, f"{what}: must be >= 0, got {token!r}")
    if v == float("inf"):
        raise InputError(src, line, f"{what}: expected a finite number, got {token!r}")
    if whole and not v.is_integer():
        raise InputError(src, line, f"{what}: expected a whole number, got {token!r}")
    if whole:
        n = int(token) if token.isdigit() else int(v)
        if n > 2**63 - 1:
            raise InputError(src, line, f"{what}: {token} is too large")
        return n
    if v > limits.HORIZON_NS:
        raise InputError(src, line, f"{what}: {token} ns is beyond the {limits.fmt_ns(limits.HORIZON_NS)} a run can simulate")
    return int(round(v))


def _comm(kind: str, size: str, default_group: str, what: str, src: str, line: int) -> AicbComm | None:
    nbytes = _int(size, f"{what}_comm_bytes", src, line)
    if kind.upper() == "NONE":
        return None
    name, group = kind.upper(), default_group
    for suffix, g in _SUFFIXES:
        if name.endswith(suffix):
            name, group = name[: -len(suffix)], g
            break
    if name not in _OPS:
        known = ", ".join(["NONE", *(o + s for o in _OPS for s in ("", "_EP", "_DP", "_DP_EP"))][:9])
        raise InputError(src, line, f"{what}_comm_type: unknown collective {kind!r} (known: {known}, ...)")
    if nbytes == 0:
        return None
    return AicbComm(_OPS[name], group, nbytes)


def read_aicb(path: str | PathLike[str]) -> AicbWorkload:
    """Parse an AICB/SimAI workload file; errors name the file and line."""
    src = str(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise InputError(src, None, f"cannot read: {e.strerror or e}") from None
    lines = [(i + 1, ln.split()) for i, ln in enumerate(text.splitlines())]
    lines = [(i, t) for i, t in lines if t and not t[0].startswith("#")]
    if len(lines) < 2:
        raise InputError(src, None, "expected a header line and a row count")
    hline, head = lines[0]
    policy = head[0]
    if policy != "HYBRID_TRANSFORMER_FWD_IN_BCKWD":
        raise InputError(src, hline, f"parallelism policy {policy!r} is not supported "
                                     "(only HYBRID_TRANSFORMER_FWD_IN_BCKWD)")
    vals: dict[str, int] = {}
    toks = head[1:]
    i = 0
    while i < len(toks):
        key = toks[i].rstrip(":")
        if key not in _HEADER_KEYS:
            raise InputError(src, hline, f"unknown header key {toks[i]!r}")
        if i + 1 >= len(toks):
            raise InputError(src, hline, f"header key {key!r} has no value")
        vals[key] = _int(toks[i + 1], key, src, hline)
        i += 2
    for key in ("model_parallel_NPU_group", "pp", "all_gpus"):
        if key not in vals:
            raise InputError(src, hline, f"header lacks {key}:")
    tp, pp, n = vals["model_parallel_NPU_group"], vals["pp"], vals["all_gpus"]
    ep = vals.get("ep", 1) or 1
    if tp < 1 or pp < 1 or n < 1:
        raise InputError(src, hline, "model_parallel_NPU_group, pp and all_gpus must be >= 1")
    if n % (tp * pp):
        raise InputError(src, hline, f"all_gpus ({n}) is not a multiple of TP x PP ({tp} x {pp})")
    if (n // pp) % ep:
        raise InputError(src, hline, f"ep ({ep}) must divide TP x DP ({n // pp})")
    pp_comm = vals.get("pp_comm", 0)
    if pp > 1 and pp_comm <= 0:
        raise InputError(src, hline, "pp > 1 needs pp_comm <bytes> in the header")
    cline, ctoks = lines[1]
    count = _int(ctoks[0], "row count", src, cline)
    body = lines[2:]
    if len(body) != count:
        raise InputError(src, cline, f"row count says {count}, the file has {len(body)} rows")
    rows = []
    for ln, t in body:
        if len(t) < 12:
            raise InputError(src, ln, f"expected 12 fields (name depen fwd_compute fwd_comm_type fwd_comm_bytes "
                                      f"ig_compute ig_comm_type ig_comm_bytes wg_compute wg_comm_type "
                                      f"wg_comm_bytes wg_update), got {len(t)}")
        rows.append(AicbRow(
            name=t[0], line=ln,
            fwd_ns=_int(t[2], "fwd_compute", src, ln, whole=False), fwd_comm=_comm(t[3], t[4], "tp", "fwd", src, ln),
            ig_ns=_int(t[5], "ig_compute", src, ln, whole=False), ig_comm=_comm(t[6], t[7], "tp", "ig", src, ln),
            wg_ns=_int(t[8], "wg_compute", src, ln, whole=False), wg_comm=_comm(t[9], t[10], "dp", "wg", src, ln),
            wg_update_ns=_int(t[11], "wg_update", src, ln, whole=False),
        ))
    return AicbWorkload(source=src, policy=policy, tp=tp, ep=ep, pp=pp, vpp=vals.get("vpp", 1), ga=vals.get("ga", 1),
                        all_gpus=n, pp_comm_bytes=pp_comm, rows=rows)


# --------------------------------------------------------------------------- DAG


class _AicbStage:
    def __init__(self, b: DagBuilder, wl: AicbWorkload, stage: int) -> None:
        self.b, self.wl, self.s = b, wl, stage
        pl = b.placement
        self.ranks = pl.stage_ranks(stage)
        self.base = stage * pl.stage_size
        self.groups = {"tp": pl.tp_groups(stage), "dp": pl.dp_groups(stage), "ep": pl.ep_groups(stage),
                       "dp_ep": pl.edp_groups(stage)}
        self.m = wl.num_microbatches
        self.backwards_done = 0
        self.comm_last: np.ndarray | None = None

    def _kind(self, comm: AicbComm, phase: int, wg: bool) -> int:
        if comm.group == "tp":
            return KIND_TP_COMM
        if comm.group == "ep":
            return KIND_EP_A2A_FWD if phase == PHASE_FWD else KIND_EP_A2A_BWD
        if comm.group == "dp_ep":
            return KIND_EDP_ALLREDUCE if comm.op == COLL_ALLREDUCE else KIND_DP_COMM
        return KIND_DP_ALLREDUCE if comm.op == COLL_ALLREDUCE and wg else KIND_DP_COMM

    def _collective(self, comm: AicbComm | None, ready: np.ndarray, phase: int, mb: int, wg: bool = False) -> np.ndarray:
        b, pl = self.b, self.b.placement
        if comm is None or (comm.group == "tp" and not b.compute.tp_comm):
            return ready
        groups = self.groups[comm.group]
        n = groups.shape[1]
        if n < 2:
            return ready
        kind = self._kind(comm, phase, wg)
        tags = dict(phase=phase, micro=mb)
        g_ready = ready[groups - self.base]
        servers = pl.server_of_rank(groups)
        if (servers == servers[:, :1]).all():  # every group inside one server: NVLink time
            c = b.compute
            step = c.nvlink_latency_ns + comm.nbytes / n / c.nvlink_Bps * 1e9
            if comm.op == COLL_ALLREDUCE:
                t = 2 * (n - 1) * step
            elif comm.op == COLL_ALLTOALL:
                t = c.nvlink_latency_ns + (n - 1) * comm.nbytes / n / c.nvlink_Bps * 1e9
            else:
                t = (n - 1) * step
            cids = b.new_collectives(kind, comm.op, groups.shape[0], n)
            done = b.delay(groups, int(round(t)), kind=kind, deps=[g_ready], collective=cids[:, None], **tags)
        elif comm.op == COLL_ALLTOALL:
            done = all_to_all(b, groups, g_ready, max(1, comm.nbytes // n), kind=kind, **tags)
        else:
            fn = {COLL_ALLREDUCE: ring_allreduce, COLL_ALLGATHER: ring_allgather,
                  COLL_REDUCESCATTER: ring_reducescatter}[comm.op]
            done = fn(b, groups, g_ready, comm.nbytes, kind=kind, **tags)
        out = np.empty_like(ready)
        out[groups - self.base] = done
        return out

    def _delay(self, ns: int, deps: list[np.ndarray | None], **tags: int) -> np.ndarray:
        return self.b.delay(self.ranks, ns, deps=deps, **tags)

    def forward(self, mb: int, deps: list[np.ndarray | None]) -> np.ndarray:
        x: list[np.ndarray | None] = deps
        cur = None
        for li, row in enumerate(self.wl.rows):
            cur = self._delay(row.fwd_ns, x, phase=PHASE_FWD, micro=mb, layer=li)
            cur = self._collective(row.fwd_comm, cur, PHASE_FWD, mb)
            x = [cur]
        if cur is None:
            cur = self.b.join(self.ranks, kind=0, deps=x, phase=PHASE_FWD, micro=mb)
        return cur

    def backward(self, mb: int, deps: list[np.ndarray | None]) -> np.ndarray:
        self.backwards_done += 1
        final = self.backwards_done == self.m
        x: list[np.ndarray | None] = deps
        cur = None
        for li in reversed(range(len(self.wl.rows))):
            row = self.wl.rows[li]
            cur = self._delay(row.ig_ns, x, phase=PHASE_BWD, micro=mb, layer=li)
            cur = self._collective(row.ig_comm, cur, PHASE_BWD, mb)
            cur = self._delay(row.wg_ns, [cur], phase=PHASE_BWD, micro=mb, layer=li)
            if final and row.wg_comm is not None:
                ready = cur if self.comm_last is None else self.b.join(
                    self.ranks, kind=0, deps=[cur, self.comm_last], phase=PHASE_BWD, micro=mb, layer=li)
                self.comm_last = self._collective(row.wg_comm, ready, PHASE_BWD, mb, wg=True)
            x = [cur]
        if cur is None:
            cur = self.b.join(self.ranks, kind=0, deps=x, phase=PHASE_BWD, micro=mb)
        return cur

    def send(self, to_stage: int, mb: int, ready: np.ndarray, kind: int) -> np.ndarray:
        pl = self.b.placement
        cid = self.b.new_collectives(kind, COLL_P2P, 1, 2 * pl.stage_size)[0]
        phase = PHASE_FWD if kind == KIND_PP_FWD else PHASE_BWD
        return self.b.transfer(self.ranks, pl.stage_ranks(to_stage), self.wl.pp_comm_bytes, kind=kind,
                               deps=[ready], collective=cid, micro=mb, phase=phase)

    def grad_sync(self, ready: np.ndarray) -> np.ndarray:
        update = sum(r.wg_update_ns for r in self.wl.rows)
        out = self._delay(update, [ready, self.comm_last], phase=PHASE_OPT)
        self.backwards_done = 0
        self.comm_last = None
        return out


def aicb_dag(workload: AicbWorkload | str | PathLike[str], *, iterations: int = 1, compute: ComputeSpec | None = None,
             gpus_per_server: int = 8, placement: Placement | None = None, schedule: str = "1f1b") -> Dag:
    """The DAG of an AICB workload (a path or a parsed :class:`AicbWorkload`)."""
    wl = workload if isinstance(workload, AicbWorkload) else read_aicb(workload)
    if iterations < 1:
        raise ValueError("iterations must be >= 1")
    par = wl.parallel(gpus_per_server)
    pl = placement or Placement(par)
    order_of = {"1f1b": one_f_one_b, "gpipe": gpipe}.get(schedule)
    if order_of is None:
        raise ValueError(f"unknown pipeline schedule {schedule!r}")
    b = DagBuilder(pl, compute or ComputeSpec())
    stages = [_AicbStage(b, wl, s) for s in range(par.pp)]
    m = wl.num_microbatches
    run_pipeline(b, stages, [order_of(par.pp, s, m) for s in range(par.pp)], iterations)
    meta = {"workload": wl.source, "parallel": par.label(), "schedule": schedule, "microbatches": m,
            "gpus": par.world, "format": "aicb"}
    return b.build(meta)
