"""The training-step DAG: compute delays and flows with dependencies, as numpy arrays.

Node columns (all length ``N``; node ids are topological: every predecessor of node ``i``
has an id ``< i``):

=============  ========  ===============================================================
column         dtype     meaning
=============  ========  ===============================================================
op             uint8     :data:`OP_DELAY` (``duration_ns`` on GPU ``src``) or :data:`OP_FLOW`
                         (``bytes`` from GPU ``src`` to GPU ``dst`` over the network)
kind           uint8     :data:`KIND_NAMES` index: compute, dp_allreduce, pp_fwd, pp_bwd, ...
src, dst       uint32    GPU (host) ids; ``dst == src`` for compute; an intra-server (NVLink)
                         transfer is a delay with ``src != dst``
bytes          uint64    payload of a flow or NVLink transfer, else 0
duration_ns    uint64    delay length (0 for flows)
iteration      uint32    training iteration
collective     int64     collective instance id (index into ``coll_*``), -1 for compute
phase          uint8     :data:`PHASE_NONE`, :data:`PHASE_FWD`, :data:`PHASE_BWD`, :data:`PHASE_OPT`
micro          int32     micro-batch index, -1 if none
layer          int32     global layer index of per-layer nodes, else -1
=============  ========  ===============================================================

Edges are held twice, CSR style: ``pred_ptr[N+1], pred_idx`` (predecessors of each node)
and ``succ_ptr[N+1], succ_idx`` (successors; what the C++ executor takes).  Collectives:
``coll_kind``, ``coll_op`` (:data:`COLL_OP_NAMES`), ``coll_iteration``, ``coll_size``
(GPUs in the group).

:func:`build_dag` turns a :class:`~ns3wormhole.workload.models.Workload` into a DAG
(1F1B pipeline schedule, EP all-to-alls, DP ring all-reduce, optimizer step, several
iterations); :func:`reference_execute` times it analytically with uncongested flows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from typing import Iterable, Sequence

import numpy as np

from .models import ComputeSpec, Workload
from .placement import Placement

__all__ = [
    "Dag",
    "DagBuilder",
    "Timeline",
    "build_dag",
    "one_f_one_b",
    "gpipe",
    "run_pipeline",
    "reference_execute",
    "OP_DELAY",
    "OP_FLOW",
    "KIND_NAMES",
    "KIND_COMPUTE",
    "KIND_DP_ALLREDUCE",
    "KIND_PP_FWD",
    "KIND_PP_BWD",
    "KIND_EP_A2A_FWD",
    "KIND_EP_A2A_BWD",
    "KIND_EDP_ALLREDUCE",
    "KIND_TP_COMM",
    "KIND_DP_COMM",
    "COLL_OP_NAMES",
    "COLL_ALLREDUCE",
    "COLL_ALLGATHER",
    "COLL_REDUCESCATTER",
    "COLL_ALLTOALL",
    "COLL_P2P",
    "PHASE_NONE",
    "PHASE_FWD",
    "PHASE_BWD",
    "PHASE_OPT",
]

OP_DELAY = 0
OP_FLOW = 1

KIND_COMPUTE = 0
KIND_DP_ALLREDUCE = 1
KIND_PP_FWD = 2
KIND_PP_BWD = 3
KIND_EP_A2A_FWD = 4
KIND_EP_A2A_BWD = 5
KIND_EDP_ALLREDUCE = 6
"""Expert-gradient all-reduce over an expert-data-parallel group."""
KIND_TP_COMM = 7
"""TP collectives given explicitly (AICB files); preset DAGs fold TP into compute."""
KIND_DP_COMM = 8
"""Other DP-group collectives (all-gather / reduce-scatter of a distributed optimizer)."""
KIND_NAMES = (
    "compute", "dp_allreduce", "pp_fwd", "pp_bwd", "ep_a2a_fwd", "ep_a2a_bwd", "edp_allreduce", "tp_comm", "dp_comm",
)

COLL_ALLREDUCE = 0
COLL_ALLGATHER = 1
COLL_REDUCESCATTER = 2
COLL_ALLTOALL = 3
COLL_P2P = 4
COLL_OP_NAMES = ("allreduce", "allgather", "reducescatter", "alltoall", "p2p")

PHASE_NONE = 0
PHASE_FWD = 1
PHASE_BWD = 2
PHASE_OPT = 3

_NODE_COLUMNS: tuple[tuple[str, type], ...] = (
    ("op", np.uint8),
    ("kind", np.uint8),
    ("src", np.uint32),
    ("dst", np.uint32),
    ("bytes", np.uint64),
    ("duration_ns", np.uint64),
    ("iteration", np.uint32),
    ("collective", np.int64),
    ("phase", np.uint8),
    ("micro", np.int32),
    ("layer", np.int32),
)
_COLL_COLUMNS: tuple[tuple[str, type], ...] = (
    ("coll_kind", np.uint8),
    ("coll_op", np.uint8),
    ("coll_iteration", np.uint32),
    ("coll_size", np.uint32),
)


def _csr(keys: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((values, keys))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(ptr, keys + 1, 1)
    return np.cumsum(ptr), values[order].astype(np.uint32)


# --------------------------------------------------------------------------- the DAG


@dataclass(eq=False)
class Dag:
    """A training DAG (see the module docstring for the columns)."""

    op: np.ndarray
    kind: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    bytes: np.ndarray
    duration_ns: np.ndarray
    iteration: np.ndarray
    collective: np.ndarray
    phase: np.ndarray
    micro: np.ndarray
    layer: np.ndarray
    pred_ptr: np.ndarray
    pred_idx: np.ndarray
    succ_ptr: np.ndarray
    succ_idx: np.ndarray
    coll_kind: np.ndarray
    coll_op: np.ndarray
    coll_iteration: np.ndarray
    coll_size: np.ndarray
    num_iterations: int = 1
    meta: dict = field(default_factory=dict)

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_edges(
        cls, columns: dict[str, np.ndarray], edge_pred: np.ndarray, edge_succ: np.ndarray,
        coll: dict[str, np.ndarray] | None = None, meta: dict | None = None,
    ) -> "Dag":
        """Build from node columns and an edge list (duplicates removed)."""
        n = int(np.asarray(columns["op"]).size)
        cols = {}
        for name, dtype in _NODE_COLUMNS:
            default = -1 if name in ("collective", "micro", "layer") else 0
            v = columns.get(name, default)
            cols[name] = np.broadcast_to(np.asarray(v), (n,)).astype(dtype, copy=True)
        if "dst" not in columns:
            cols["dst"] = cols["src"].copy()
        p = np.asarray(edge_pred, dtype=np.int64).reshape(-1)
        s = np.asarray(edge_succ, dtype=np.int64).reshape(-1)
        if p.size:
            key = np.sort(p * max(n, 1) + s)
            key = key[np.concatenate(([True], key[1:] != key[:-1]))]
            p, s = key // max(n, 1), key % max(n, 1)
        pred_ptr, pred_idx = _csr(s, p, n)
        succ_ptr, succ_idx = _csr(p, s, n)
        coll = coll or {}
        ccols = {name: np.asarray(coll.get(name, np.zeros(0)), dtype=dtype) for name, dtype in _COLL_COLUMNS}
        iters = int(cols["iteration"].max()) + 1 if n else 0
        dag = cls(**cols, pred_ptr=pred_ptr, pred_idx=pred_idx, succ_ptr=succ_ptr, succ_idx=succ_idx, **ccols,
                  num_iterations=iters, meta=dict(meta or {}))
        dag.check()
        return dag

    # ---------------------------------------------------------------- queries
    @property
    def num_nodes(self) -> int:
        return int(self.op.size)

    @property
    def num_edges(self) -> int:
        return int(self.pred_idx.size)

    @property
    def num_collectives(self) -> int:
        return int(self.coll_kind.size)

    @property
    def is_flow(self) -> np.ndarray:
        return self.op == OP_FLOW

    @property
    def num_flows(self) -> int:
        return int(np.count_nonzero(self.is_flow))

    @property
    def num_gpus(self) -> int:
        if not self.num_nodes:
            return 0
        return int(max(self.src.max(), self.dst.max())) + 1

    def preds(self, node: int) -> np.ndarray:
        return self.pred_idx[self.pred_ptr[node]: self.pred_ptr[node + 1]]

    def succs(self, node: int) -> np.ndarray:
        return self.succ_idx[self.succ_ptr[node]: self.succ_ptr[node + 1]]

    def in_degree(self) -> np.ndarray:
        return np.diff(self.pred_ptr).astype(np.uint32)

    def nodes_of(self, kind: str | int, iteration: int | None = None) -> np.ndarray:
        k = KIND_NAMES.index(kind) if isinstance(kind, str) else int(kind)
        mask = self.kind == k
        if iteration is not None:
            mask &= self.iteration == iteration
        return np.flatnonzero(mask)

    def kind_name(self, node: int) -> str:
        return KIND_NAMES[int(self.kind[node])]

    def summary(self) -> dict:
        """Counts and bytes per kind (flows and NVLink transfers separately)."""
        out: dict = {"nodes": self.num_nodes, "edges": self.num_edges, "flows": self.num_flows,
                     "collectives": self.num_collectives, "iterations": self.num_iterations, "gpus": self.num_gpus,
                     "kinds": {}}
        for k, name in enumerate(KIND_NAMES):
            m = self.kind == k
            if not m.any():
                continue
            f = m & self.is_flow
            nv = m & ~self.is_flow & (self.src != self.dst)
            out["kinds"][name] = {
                "nodes": int(m.sum()), "flows": int(f.sum()), "flow_bytes": int(self.bytes[f].sum()),
                "nvlink_transfers": int(nv.sum()), "nvlink_bytes": int(self.bytes[nv].sum()),
            }
        return out

    def flows(self) -> dict[str, np.ndarray]:
        """The flow nodes: ``node, src, dst, bytes, iteration, kind, collective``."""
        idx = np.flatnonzero(self.is_flow)
        return {"node": idx, "src": self.src[idx], "dst": self.dst[idx], "bytes": self.bytes[idx],
                "iteration": self.iteration[idx], "kind": self.kind[idx], "collective": self.collective[idx]}

    def remap_gpus(self, gpu_to_host: Sequence[int] | np.ndarray) -> "Dag":
        """A copy with every GPU id ``g`` replaced by ``gpu_to_host[g]``."""
        m = np.asarray(gpu_to_host, dtype=np.int64)
        if m.size < self.num_gpus:
            raise ValueError(f"gpu_to_host has {m.size} entries, the DAG uses {self.num_gpus} GPUs")
        cols = {name: getattr(self, name) for name, _ in _NODE_COLUMNS}
        if (m < 0).any() or m.max(initial=0) > np.iinfo(np.uint32).max:
            raise ValueError("gpu_to_host: host ids must fit in uint32")
        cols["src"] = m[self.src].astype(np.uint32)
        cols["dst"] = m[self.dst].astype(np.uint32)
        d = Dag(**{**{f: getattr(self, f) for f in self.__dataclass_fields__}, **cols})  # type: ignore[arg-type]
        d.check()
        return d

    # ---------------------------------------------------------------- checks
    def check(self) -> None:
        """Structural invariants; raises ``ValueError``."""
        n = self.num_nodes
        for name, dtype in _NODE_COLUMNS:
            col = getattr(self, name)
            if col.shape != (n,) or col.dtype != dtype:
                raise ValueError(f"Dag.{name}: expected {np.dtype(dtype)}[{n}], got {col.dtype}{list(col.shape)}")
        for ptr, idx, what in ((self.pred_ptr, self.pred_idx, "pred"), (self.succ_ptr, self.succ_idx, "succ")):
            if ptr.shape != (n + 1,) or ptr[0] != 0 or ptr[-1] != idx.size or (np.diff(ptr) < 0).any():
                raise ValueError(f"Dag.{what}_ptr is not a CSR index over {n} nodes")
            if idx.size and int(idx.max()) >= n:
                raise ValueError(f"Dag.{what}_idx refers to a node >= {n}")
        if self.pred_idx.size != self.succ_idx.size:
            raise ValueError("Dag: predecessor and successor lists differ in size")
        succ_of = np.repeat(np.arange(n), np.diff(self.pred_ptr))
        if (self.pred_idx >= succ_of).any():
            bad = int(np.flatnonzero(self.pred_idx >= succ_of)[0])
            raise ValueError(f"Dag: node {succ_of[bad]} depends on node {self.pred_idx[bad]} (ids must be topological)")
        if (self.op > OP_FLOW).any():
            raise ValueError("Dag.op: values must be 0 (delay) or 1 (flow)")
        if (self.kind >= len(KIND_NAMES)).any():
            raise ValueError("Dag.kind: unknown kind")
        f = self.is_flow
        if (f & (self.bytes == 0)).any():
            raise ValueError(f"Dag: flow node {int(np.flatnonzero(f & (self.bytes == 0))[0])} has 0 bytes")
        if (f & (self.src == self.dst)).any():
            raise ValueError(f"Dag: flow node {int(np.flatnonzero(f & (self.src == self.dst))[0])} has src == dst")
        nc = self.num_collectives
        for name, _ in _COLL_COLUMNS:
            if getattr(self, name).shape != (nc,):
                raise ValueError(f"Dag.{name}: expected {nc} entries")
        if n and (self.collective >= nc).any():
            raise ValueError("Dag.collective refers to an unknown collective")

    # ---------------------------------------------------------------- I/O
    def save(self, path: str | PathLike[str]) -> None:
        """Write all columns to a ``.npz`` file."""
        arrays = {f: getattr(self, f) for f in self.__dataclass_fields__ if f not in ("meta", "num_iterations")}
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: str | PathLike[str]) -> "Dag":
        with np.load(path) as z:
            arrays = {k: z[k] for k in z.files}
        iters = int(arrays["iteration"].max()) + 1 if arrays["iteration"].size else 0
        dag = cls(**arrays, num_iterations=iters)
        dag.check()
        return dag

    def __repr__(self) -> str:
        return (f"Dag({self.num_nodes} nodes, {self.num_flows} flows, {self.num_edges} edges, "
                f"{self.num_collectives} collectives, {self.num_iterations} iterations)")


# --------------------------------------------------------------------------- builder


class DagBuilder:
    """Appends nodes in topological order, vectorised: every call adds a batch of nodes.

    Ranks are mapped to GPU ids and servers through ``placement``; ``compute`` times NVLink
    transfers.  ``iteration`` is the tag given to nodes added next.
    """

    def __init__(self, placement: Placement, compute: ComputeSpec | None = None) -> None:
        self.placement = placement
        self.compute = compute or ComputeSpec()
        self.iteration = 0
        self._chunks: dict[str, list[np.ndarray]] = {name: [] for name, _ in _NODE_COLUMNS}
        self._edges_p: list[np.ndarray] = []
        self._edges_s: list[np.ndarray] = []
        self._coll: dict[str, list[int]] = {name: [] for name, _ in _COLL_COLUMNS}
        self._n = 0

    @property
    def num_nodes(self) -> int:
        return self._n

    def new_collectives(self, kind: int, op: int, count: int, size: int) -> np.ndarray:
        """Allocate ``count`` collective ids of one kind (one per group)."""
        start = len(self._coll["coll_kind"])
        self._coll["coll_kind"] += [kind] * count
        self._coll["coll_op"] += [op] * count
        self._coll["coll_iteration"] += [self.iteration] * count
        self._coll["coll_size"] += [size] * count
        return np.arange(start, start + count, dtype=np.int64)

    def add(
        self, *, op: int | np.ndarray, kind: int | np.ndarray, src_rank: np.ndarray,
        dst_rank: np.ndarray | None = None, nbytes: int | np.ndarray = 0, duration_ns: int | np.ndarray = 0,
        phase: int | np.ndarray = PHASE_NONE, micro: int | np.ndarray = -1, layer: int | np.ndarray = -1,
        collective: int | np.ndarray = -1, deps: Iterable[np.ndarray | None] = (),
    ) -> np.ndarray:
        """Add ``len(src_rank)`` nodes; returns their ids shaped like ``src_rank``.

        ``deps``: arrays of predecessor ids shaped like ``src_rank`` (one each) or with one
        extra trailing axis (several each); entries < 0 are ignored."""
        src_rank = np.asarray(src_rank, dtype=np.int64)
        shape = src_rank.shape
        n = src_rank.size
        ids = np.arange(self._n, self._n + n, dtype=np.int64)
        dst_rank = src_rank if dst_rank is None else np.asarray(dst_rank, dtype=np.int64)
        cols = {
            "op": op, "kind": kind, "src": self.placement.gpu(src_rank), "dst": self.placement.gpu(dst_rank),
            "bytes": nbytes, "duration_ns": duration_ns, "iteration": self.iteration, "collective": collective,
            "phase": phase, "micro": micro, "layer": layer,
        }
        for name, dtype in _NODE_COLUMNS:
            v = np.broadcast_to(np.asarray(cols[name]), shape).astype(dtype).reshape(-1)
            self._chunks[name].append(v)
        for d in deps:
            if d is None:
                continue
            d = np.asarray(d, dtype=np.int64)
            if d.shape == shape:
                d = d.reshape(n, 1)
            elif d.shape[:-1] == shape:
                d = d.reshape(n, -1)
            else:
                d = np.broadcast_to(d, shape).reshape(n, 1)
            succ = np.broadcast_to(ids[:, None], d.shape)
            ok = d >= 0
            if (d[ok] >= self._n).any():
                raise ValueError("DagBuilder.add: a dependency refers to a node not yet added")
            self._edges_p.append(d[ok])
            self._edges_s.append(succ[ok])
        self._n += n
        return ids.reshape(shape)

    # ---------------------------------------------------------------- node helpers
    def delay(self, ranks: np.ndarray, duration_ns: int | np.ndarray, *, kind: int = KIND_COMPUTE,
              deps: Iterable[np.ndarray | None] = (), **tags: int | np.ndarray) -> np.ndarray:
        """A delay (compute) node on each rank."""
        return self.add(op=OP_DELAY, kind=kind, src_rank=ranks, duration_ns=duration_ns, deps=deps, **tags)

    def join(self, ranks: np.ndarray, *, kind: int, deps: Iterable[np.ndarray | None], **tags: int | np.ndarray) -> np.ndarray:
        """A zero-length node on each rank that completes when all ``deps`` have."""
        return self.add(op=OP_DELAY, kind=kind, src_rank=ranks, duration_ns=0, deps=deps, **tags)

    def transfer(self, src_rank: np.ndarray, dst_rank: np.ndarray, nbytes: int | np.ndarray, *, kind: int,
                 deps: Iterable[np.ndarray | None] = (), **tags: int | np.ndarray) -> np.ndarray:
        """Move ``nbytes`` from each src to each dst: a network flow between servers, an
        NVLink delay (``nvlink_latency + bytes/nvlink_bw``) inside a server."""
        src_rank = np.asarray(src_rank, dtype=np.int64)
        dst_rank = np.broadcast_to(np.asarray(dst_rank, dtype=np.int64), src_rank.shape)
        b = np.broadcast_to(np.asarray(nbytes, dtype=np.int64), src_rank.shape)
        if (b <= 0).any():
            raise ValueError("DagBuilder.transfer: byte counts must be > 0")
        if (src_rank == dst_rank).any():
            raise ValueError("DagBuilder.transfer: src == dst")
        intra = self.placement.same_server(src_rank, dst_rank)
        c = self.compute
        nv = np.rint(c.nvlink_latency_ns + b / c.nvlink_Bps * 1e9).astype(np.int64)
        return self.add(op=np.where(intra, OP_DELAY, OP_FLOW), kind=kind, src_rank=src_rank, dst_rank=dst_rank,
                        nbytes=b, duration_ns=np.where(intra, nv, 0), deps=deps, **tags)

    def build(self, meta: dict | None = None) -> Dag:
        cols = {name: (np.concatenate(ch) if ch else np.zeros(0, dtype=dt))
                for (name, dt), ch in zip(_NODE_COLUMNS, self._chunks.values())}
        p = np.concatenate(self._edges_p) if self._edges_p else np.zeros(0, dtype=np.int64)
        s = np.concatenate(self._edges_s) if self._edges_s else np.zeros(0, dtype=np.int64)
        coll = {name: np.asarray(v, dtype=dt) for (name, dt), v in zip(_COLL_COLUMNS, self._coll.values())}
        return Dag.from_edges(cols, p, s, coll, meta)


# --------------------------------------------------------------------------- pipeline schedules


def one_f_one_b(pp: int, stage: int, m: int) -> list[tuple[str, int]]:
    """The 1F1B (PipeDream-Flush) order of one stage: ``[("F", 0), ..., ("B", m-1)]``.

    Warm-up: ``min(pp - stage - 1, m)`` forwards; steady state: alternate one forward and
    one backward; cool-down: the remaining backwards."""
    if not 0 <= stage < pp or m < 1:
        raise ValueError(f"one_f_one_b: need 0 <= stage < pp and m >= 1 (pp={pp}, stage={stage}, m={m})")
    warm = min(pp - stage - 1, m)
    order = [("F", i) for i in range(warm)]
    for i in range(m - warm):
        order += [("F", warm + i), ("B", i)]
    order += [("B", i) for i in range(m - warm, m)]
    return order


def gpipe(pp: int, stage: int, m: int) -> list[tuple[str, int]]:
    """GPipe order: all forwards, then all backwards."""
    if not 0 <= stage < pp or m < 1:
        raise ValueError(f"gpipe: need 0 <= stage < pp and m >= 1 (pp={pp}, stage={stage}, m={m})")
    return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]


_SCHEDULES = {"1f1b": one_f_one_b, "gpipe": gpipe}


# --------------------------------------------------------------------------- workload -> DAG


class _StageBuilder:
    """Emits one stage's forward / backward passes (vectorised over the stage's GPUs)."""

    def __init__(self, b: DagBuilder, w: Workload, stage: int) -> None:
        self.b, self.w, self.s = b, w, stage
        pl = b.placement
        self.ranks = pl.stage_ranks(stage)
        self.base = stage * pl.stage_size
        self.ep_groups = pl.ep_groups(stage) if w.model.is_moe and w.parallel.ep > 1 else None
        layers = w.layers_per_stage()
        self.first_layer = sum(layers[:stage])
        self.num_layers = layers[stage]
        self.last = stage == w.parallel.pp - 1
        self.layer_ns = w.layer_fwd_ns()
        self.expert_ns = w.expert_fwd_ns()
        self.head_ns = w.head_fwd_ns() if self.last else 0

    def _a2a(self, ready: np.ndarray, kind: int, micro: int, layer: int, phase: int) -> np.ndarray:
        from .collectives import all_to_all

        g = self.ep_groups
        done = all_to_all(self.b, g, ready[g - self.base], self.w.a2a_pair_bytes(), kind=kind,
                          micro=micro, layer=layer, phase=phase)
        out = np.empty_like(ready)
        out[g - self.base] = done
        return out

    def forward(self, mb: int, deps: list[np.ndarray | None]) -> np.ndarray:
        b, w = self.b, self.w
        tag = dict(phase=PHASE_FWD, micro=mb)
        if not w.model.is_moe:
            dur = self.num_layers * self.layer_ns + self.head_ns
            return b.delay(self.ranks, dur, deps=deps, **tag)
        x: list[np.ndarray | None] = deps
        cur = None
        for li in range(self.num_layers):
            layer = self.first_layer + li
            cur = b.delay(self.ranks, self.layer_ns, deps=x, layer=layer, **tag)
            if self.ep_groups is not None:
                cur = self._a2a(cur, KIND_EP_A2A_FWD, mb, layer, PHASE_FWD)
            cur = b.delay(self.ranks, self.expert_ns, deps=[cur], layer=layer, **tag)
            if self.ep_groups is not None and w.a2a_per_layer == 2:
                cur = self._a2a(cur, KIND_EP_A2A_FWD, mb, layer, PHASE_FWD)
            x = [cur]
        if self.head_ns:
            cur = b.delay(self.ranks, self.head_ns, deps=x, **tag)
        return cur

    def backward(self, mb: int, deps: list[np.ndarray | None]) -> np.ndarray:
        b, w = self.b, self.w
        tag = dict(phase=PHASE_BWD, micro=mb)
        if not w.model.is_moe:
            dur = w.bwd_ns(self.num_layers * self.layer_ns + self.head_ns)
            return b.delay(self.ranks, dur, deps=deps, **tag)
        x: list[np.ndarray] = [d for d in deps if d is not None]
        if self.head_ns:
            x = [b.delay(self.ranks, w.bwd_ns(self.head_ns), deps=x, **tag)]
        cur = None
        for li in reversed(range(self.num_layers)):
            layer = self.first_layer + li
            cur = x[0] if len(x) == 1 else b.join(self.ranks, kind=KIND_COMPUTE, deps=x, layer=layer, **tag)
            if self.ep_groups is not None and w.a2a_per_layer == 2:
                cur = self._a2a(cur, KIND_EP_A2A_BWD, mb, layer, PHASE_BWD)
            cur = b.delay(self.ranks, w.bwd_ns(self.expert_ns), deps=[cur], layer=layer, **tag)
            if self.ep_groups is not None:
                cur = self._a2a(cur, KIND_EP_A2A_BWD, mb, layer, PHASE_BWD)
            cur = b.delay(self.ranks, w.bwd_ns(self.layer_ns), deps=[cur], layer=layer, **tag)
            x = [cur]
        return cur

    def send(self, to_stage: int, mb: int, ready: np.ndarray, kind: int) -> np.ndarray:
        pl = self.b.placement
        cid = self.b.new_collectives(kind, COLL_P2P, 1, 2 * pl.stage_size)[0]
        phase = PHASE_FWD if kind == KIND_PP_FWD else PHASE_BWD
        return self.b.transfer(self.ranks, pl.stage_ranks(to_stage), self.w.pp_bytes(), kind=kind, deps=[ready],
                               collective=cid, micro=mb, phase=phase)

    def grad_sync(self, ready: np.ndarray) -> np.ndarray:
        """DP ring all-reduce of dense gradients (and expert gradients over EDP), then the optimizer."""
        from .collectives import ring_allreduce

        b, w, pl = self.b, self.w, self.b.placement
        done: list[np.ndarray] = []
        syncs = [(pl.dp_groups(self.s), w.dense_grad_bytes(self.s), KIND_DP_ALLREDUCE)]
        if w.model.is_moe:
            syncs.append((pl.edp_groups(self.s), w.expert_grad_bytes(self.s), KIND_EDP_ALLREDUCE))
        for groups, nbytes, kind in syncs:
            if groups.shape[1] < 2 or nbytes <= 0:
                continue
            d = ring_allreduce(b, groups, ready[groups - self.base], nbytes, kind=kind)
            out = np.empty_like(ready)
            out[groups - self.base] = d
            done.append(out)
        deps = done if done else [ready]
        return b.delay(self.ranks, w.compute.optimizer_ns, deps=deps, phase=PHASE_OPT)


def run_pipeline(b: DagBuilder, stages: Sequence, programs: Sequence[Sequence[tuple[str, int]]],
                 iterations: int) -> None:
    """Emit ``iterations`` training iterations of a pipeline into ``b``.

    ``stages[s]`` provides ``forward(mb, deps)``, ``backward(mb, deps)`` (each returns the
    stage's last node per GPU), ``send(to_stage, mb, ready, kind)`` (returns the flows) and
    ``grad_sync(ready)`` (gradient collectives and optimizer, returns the last node per GPU);
    ``programs[s]`` is the stage's order of ``("F"|"B", micro)``.  Passes are emitted as soon
    as their inputs exist, so node ids stay topological."""
    pp = len(stages)
    last: list[np.ndarray | None] = [None] * pp
    for it in range(iterations):
        b.iteration = it
        ptr = [0] * pp
        fwd_in: dict[tuple[int, int], np.ndarray] = {}  # (receiving stage, micro) -> flow ids
        bwd_in: dict[tuple[int, int], np.ndarray] = {}
        remaining = sum(len(p) for p in programs)
        while remaining:
            progress = False
            for s, st in enumerate(stages):
                prog = programs[s]
                while ptr[s] < len(prog):
                    what, mb = prog[ptr[s]]
                    if what == "F":
                        if s > 0 and (s, mb) not in fwd_in:
                            break
                        recv = fwd_in.pop((s, mb), None)
                        last[s] = st.forward(mb, [last[s], recv])
                        if s < pp - 1:
                            fwd_in[(s + 1, mb)] = st.send(s + 1, mb, last[s], KIND_PP_FWD)
                    else:
                        if s < pp - 1 and (s, mb) not in bwd_in:
                            break
                        recv = bwd_in.pop((s, mb), None)
                        last[s] = st.backward(mb, [last[s], recv])
                        if s > 0:
                            bwd_in[(s - 1, mb)] = st.send(s - 1, mb, last[s], KIND_PP_BWD)
                    ptr[s] += 1
                    remaining -= 1
                    progress = True
            if not progress:
                raise RuntimeError("pipeline schedule deadlocks")
        for s, st in enumerate(stages):
            last[s] = st.grad_sync(last[s])


def build_dag(workload: Workload, placement: Placement | None = None, *, schedule: str = "1f1b") -> Dag:
    """The DAG of ``workload.iterations`` training iterations.

    Per iteration and pipeline stage (all GPUs of a stage run the same program):

    * the stage's micro-batches in ``schedule`` order (``"1f1b"`` or ``"gpipe"``); a forward
      (backward) needs the previous node of the GPU and, except on the first (last) stage, the
      activation (gradient) flow of the same micro-batch from the matching GPU of the
      previous (next) stage; sends are asynchronous (the sender goes on computing);
    * MoE layers: attention compute, EP all-to-all (dispatch), expert compute, EP all-to-all
      (combine); backward in reverse;
    * after the last backward: ring all-reduce of the stage's gradients over each DP group
      (and of expert gradients over each EDP group), then an optimizer delay; iteration
      ``i+1`` starts on each GPU after its optimizer step of iteration ``i``.
    """
    w = workload
    par = w.parallel
    pl = placement or Placement(par)
    if pl.parallel != par:
        raise ValueError("build_dag: placement is for a different ParallelSpec")
    try:
        order_of = _SCHEDULES[schedule]
    except KeyError:
        raise ValueError(f"unknown pipeline schedule {schedule!r}; known: {', '.join(_SCHEDULES)}") from None
    b = DagBuilder(pl, w.compute)
    m = w.num_microbatches
    stages = [_StageBuilder(b, w, s) for s in range(par.pp)]
    run_pipeline(b, stages, [order_of(par.pp, s, m) for s in range(par.pp)], w.iterations)
    meta = {"workload": w.name or w.model.name, "parallel": par.label(), "schedule": schedule,
            "microbatches": m, "gpus": par.world}
    return b.build(meta)


# --------------------------------------------------------------------------- reference executor


@dataclass
class Timeline:
    """Start and end of every node (ns, float) and what follows from them."""

    start_ns: np.ndarray
    end_ns: np.ndarray
    iteration_start_ns: np.ndarray
    iteration_end_ns: np.ndarray
    collective_start_ns: np.ndarray
    collective_end_ns: np.ndarray

    @property
    def makespan_ns(self) -> float:
        return float(self.end_ns.max()) if self.end_ns.size else 0.0

    @property
    def iteration_times_ns(self) -> np.ndarray:
        """End of iteration i minus end of iteration i-1 (the first from time 0)."""
        return np.diff(np.concatenate([[0.0], self.iteration_end_ns]))

    @property
    def collective_times_ns(self) -> np.ndarray:
        return self.collective_end_ns - self.collective_start_ns


def reference_execute(dag: Dag, rate_bps: float = 100e9, latency_ns: float = 0.0) -> Timeline:
    """Time the DAG with no congestion: a node starts when its last predecessor ends; a
    delay lasts ``duration_ns``, a flow ``latency_ns + bytes*8/rate_bps`` seconds (every
    flow gets the full link rate; nothing is serialised at a NIC)."""
    if rate_bps <= 0:
        raise ValueError("rate_bps must be > 0")
    n = dag.num_nodes
    dur = np.where(dag.is_flow, latency_ns + dag.bytes.astype(np.float64) * 8e9 / rate_bps,
                   dag.duration_ns.astype(np.float64)).tolist()
    ptr = dag.pred_ptr.tolist()
    idx = dag.pred_idx.tolist()
    start = [0.0] * n
    end = [0.0] * n
    for i in range(n):
        a, z = ptr[i], ptr[i + 1]
        t = max([end[j] for j in idx[a:z]], default=0.0)
        start[i] = t
        end[i] = t + dur[i]
    s = np.asarray(start)
    e = np.asarray(end)
    it = dag.iteration.astype(np.int64)
    ni = dag.num_iterations
    it_start = np.full(ni, np.inf)
    it_end = np.zeros(ni)
    np.minimum.at(it_start, it, s)
    np.maximum.at(it_end, it, e)
    nc = dag.num_collectives
    c_start = np.full(nc, np.inf)
    c_end = np.full(nc, -np.inf)
    in_c = dag.collective >= 0
    np.minimum.at(c_start, dag.collective[in_c], s[in_c])
    np.maximum.at(c_end, dag.collective[in_c], e[in_c])
    return Timeline(s, e, it_start, it_end, c_start, c_end)
