"""Run a topology + fabric + flow list under a chosen kernel and get results
back as numpy arrays. The simulation itself runs in C++ (``_core.run_rdma``);
nothing here is per packet or per event."""

from __future__ import annotations

import dataclasses
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Literal, Sequence

import numpy as np

from .errors import InputError
from .limits import MAX_FACTOR, check_count, check_finite, check_time_ns, check_whole
from .fabric import FabricConfig
from .flows import FlowSet
from .link_events import LinkEvent, link_event_arrays
from .topology import Topology

Kernel = Literal["baseline", "wormhole"]
KERNELS: tuple[str, ...] = ("baseline", "wormhole")
MAX_WINDOW = 1_000_000
"""Every flow keeps this many rate samples in the kernel."""


@dataclass(frozen=True)
class WormholeConfig:
    """Knobs of ``ns3::WormholeSimulatorImpl`` (ns-3 attributes)."""

    fast_forward: bool = True
    theta: float = 0.05
    window: int = 2000
    max_extrapolation: float = 1.0
    pool_shares: bool = True
    memo: bool = True
    memo_restore_queues: bool = True
    memo_replay_joins: bool = True
    decouple_transit: bool = True
    memo_direct_steady: bool = False
    memo_confirmations: int = 0
    memo_agreement: float = 0.02
    memo_db: str | None = None
    min_skip_us: float = 20.0
    completion_margin_us: float = 20.0

    def check(self, source: str = "wormhole") -> None:
        check_finite(self.theta, f"{source}.theta", lo=0, hi=1, lo_open=True)
        if not self.theta < 1:
            raise InputError(f"{source}.theta", None, f"must be in (0, 1), got {self.theta}")
        check_count(self.window, f"{source}.window", lo=2, hi=MAX_WINDOW)
        check_count(self.memo_confirmations, f"{source}.memo_confirmations", lo=0, hi=16)
        check_finite(self.memo_agreement, f"{source}.memo_agreement", lo=0, hi=1)
        check_finite(self.max_extrapolation, f"{source}.max_extrapolation", lo=0, hi=MAX_FACTOR)
        for name in ("min_skip_us", "completion_margin_us"):
            us = check_finite(getattr(self, name), f"{source}.{name}", lo=0, hi=None)
            check_time_ns(round(us * 1000), f"{source}.{name}")

    def to_ns3_attributes(self) -> dict[str, str]:
        base = "ns3::WormholeSimulatorImpl::"
        return {
            base + "FastForward": "true" if self.fast_forward else "false",
            base + "Theta": repr(float(self.theta)),
            base + "Window": str(int(self.window)),
            base + "MaxExtrapolation": repr(float(self.max_extrapolation)),
            base + "PoolShares": "true" if self.pool_shares else "false",
            base + "Memo": "true" if self.memo else "false",
            base + "MemoRestoreQueues": "true" if self.memo_restore_queues else "false",
            base + "MemoReplayJoins": "true" if self.memo_replay_joins else "false",
            base + "DecoupleTransitLinks": "true" if self.decouple_transit else "false",
            base + "MemoDirectSteady": "true" if self.memo_direct_steady else "false",
            base + "MemoConfirmations": str(int(self.memo_confirmations or 2)),
            base + "MemoAgreement": repr(float(self.memo_agreement)),
            base + "MinSkip": f"{int(round(self.min_skip_us * 1000))}ns",
            base + "CompletionMargin": f"{int(round(self.completion_margin_us * 1000))}ns",
        }

    @classmethod
    def from_mapping(cls, data: dict, source: str = "wormhole") -> "WormholeConfig":
        known = {f.name: f for f in fields(cls)}
        values = {}
        for key, value in data.items():
            if key not in known:
                raise InputError(f"{source}.{key}", None, f"unknown key; known: {', '.join(known)}")
            if key == "memo_db":
                if value is not None and not isinstance(value, str):
                    raise InputError(f"{source}.{key}", None, f"must be a file path, got {value!r}")
                values[key] = value
                continue
            want = type(getattr(cls(), key))
            if want is bool and not isinstance(value, bool):
                raise InputError(f"{source}.{key}", None, f"must be true or false, got {value!r}")
            if want in (int, float) and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise InputError(f"{source}.{key}", None, f"must be a number, got {value!r}")
            if want is int:  # 2.7 samples is refused, never rounded
                value = check_whole(value, f"{source}.{key}", "a whole number")
            values[key] = want(value) if want is not float else check_finite(value, f"{source}.{key}", hi=None)
        cfg = cls(**values)
        cfg.check(source)
        return cfg


FLOW_DTYPE = np.dtype(
    [
        ("id", np.uint32), ("src", np.uint32), ("dst", np.uint32), ("pg", np.uint32),
        ("bytes", np.uint64), ("start_ns", np.int64), ("finish_ns", np.int64), ("fct_ns", np.int64),
        ("ideal_fct_ns", np.float64), ("data_packets", np.uint64), ("retransmitted_packets", np.uint64),
        ("timeouts", np.uint64), ("credited_bytes", np.uint64),
    ]
)


def _table(columns: dict[str, np.ndarray]) -> np.ndarray:
    """Dict of equal-length columns -> one structured array."""
    names = list(columns)
    n = len(columns[names[0]]) if names else 0
    out = np.empty(n, dtype=[(k, np.asarray(columns[k]).dtype) for k in names])
    for k in names:
        out[k] = columns[k]
    return out


@dataclass
class RunResult:
    kernel: str
    wall_s: float
    setup_s: float
    events: int
    sim_time_ns: int
    interrupted: bool
    flows: np.ndarray  # FLOW_DTYPE
    pfc: np.ndarray  # node, port, link, pauses, resumes
    queues: np.ndarray  # time_ns, link, node, bytes
    rates: np.ndarray  # time_ns, flow, rate_bps (CC rate), delivered_bytes
    counters: dict[str, int]
    stats: dict[str, Any]  # counters (int); why-not and partition tables (dict, list): README "JSON"
    flow_time_skipped_ns: dict[int, int] = field(default_factory=dict)
    kernel_credited_bytes: dict[int, int] = field(default_factory=dict)  # as the model took them
    paths: list[list[int]] = field(default_factory=list)
    stalled: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint32))  # ids without a path
    pfc_events: np.ndarray | None = None  # time_ns, node, port, priority, pause: every PFC frame received
    qlen: list[tuple[int, int, int, list[int]]] = field(default_factory=list)  # (time_ns, node, port, 1 KB bins)

    @property
    def completed(self) -> np.ndarray:
        return self.flows["finish_ns"] >= 0

    @property
    def makespan_ns(self) -> int:
        done = self.flows["finish_ns"][self.completed]
        return int(done.max()) if done.size else 0

    def fct_by_id(self) -> dict[int, int]:
        return {int(i): int(f) for i, f in zip(self.flows["id"], self.flows["fct_ns"])}


ProgressFn = Callable[[int, int, int], None]


def run_flows(
    topology: Topology,
    flows: FlowSet,
    fabric: FabricConfig | None = None,
    kernel: Kernel = "baseline",
    wormhole: WormholeConfig | None = None,
    stop_ns: int = 0,
    progress: ProgressFn | None = None,
    check: bool = True,
    link_events: Sequence[LinkEvent] = (),
    scheduler: str | None = None,
) -> RunResult:
    """Simulate ``flows`` on ``topology`` with ``fabric`` parameters under
    ``kernel`` ("baseline" = ns-3's DefaultSimulatorImpl, "wormhole" =
    ns3::WormholeSimulatorImpl). ``progress(now_ns, flows_done, flows_total)``
    is called a few times a second of wall time. ``link_events`` take links down
    and up during the run (:mod:`ns3wormhole.link_events`). ``scheduler``: ns-3's
    event queue (``"ns3::HeapScheduler"``, ...; default: ns-3's ``MapScheduler``
    for the baseline, :data:`WORMHOLE_EVENT_QUEUE` for the Wormhole kernel)."""
    from . import _core

    fabric, wormhole = _settings(kernel, fabric, wormhole, topology)
    if check:
        flows.validate(topology)
        fabric.check_topology(topology)
    with _one_simulation(progress) as progress, _memo_session(kernel, fabric, wormhole):
        raw = _core.run_rdma(
            topology=_topology_arrays(topology, link_events),
            flow_id=flows.id,
            flow_src=flows.src,
            flow_dst=flows.dst,
            flow_pg=flows.pg,
            flow_bytes=flows.bytes,
            flow_start_ns=flows.start_ns,
            attributes=_attributes(fabric, wormhole, scheduler, kernel),
            kernel=kernel,
            stop_ns=int(stop_ns),
            progress=progress,
        )
    return _result(raw, kernel)


def _settings(
    kernel: str, fabric: FabricConfig | None, wormhole: WormholeConfig | None, topology: Topology | None = None
) -> tuple[FabricConfig, WormholeConfig]:
    """Checked kernel name and the configurations, defaults filled in."""
    if kernel not in KERNELS:
        raise InputError("kernel", None, f"must be one of {', '.join(KERNELS)}, got {kernel!r}")
    wormhole = wormhole or WormholeConfig()
    wormhole.check()
    fabric = fabric or FabricConfig()
    if wormhole.memo_confirmations == 0:
        # A transient is a random draw only where the model draws: ECN marking
        # by probability (kmin < kmax at some rate) or lossy links. Otherwise
        # one occurrence is the outcome (docs/memo.md).
        by_chance = fabric.kmin_bytes_per_100g < fabric.kmax_bytes_per_100g and fabric.pmax > 0
        by_chance |= any(kmin < kmax and pmax > 0 for _, kmin, kmax, pmax in fabric.ecn_map)
        by_chance |= topology is not None and bool(np.any(topology.error_rate > 0))
        wormhole = dataclasses.replace(wormhole, memo_confirmations=2 if by_chance else 1)
    return fabric, wormhole


_SIMULATION = threading.Lock()


@contextmanager
def _one_simulation(progress: ProgressFn | None):
    """ns-3's simulator is one per process: a second run while one is going (another
    thread, or a progress callback) is refused instead of corrupting it. Yields the
    progress callback to pass on: one that raises stops the run at that tick as Ctrl-C
    does (the result is ``interrupted``) and its exception becomes a warning."""
    if not _SIMULATION.acquire(blocking=False):
        raise RuntimeError("another simulation is running in this process (ns-3's simulator is a process-wide "
                           "singleton): wait for it to finish, or run in another process (ns3wormhole.sweep)")
    raised: list[BaseException] = []

    def guarded(now_ns: int, done: int, total: int) -> None:
        try:
            progress(now_ns, done, total)  # type: ignore[misc]
        except BaseException as exc:
            raised.append(exc)
            raise

    try:
        yield guarded if progress is not None else None
    finally:
        _SIMULATION.release()
    for exc in raised[:1]:
        if isinstance(exc, KeyboardInterrupt):
            continue  # a Ctrl-C that landed in the callback: an interruption like any other
        warnings.warn(f"the progress callback raised {type(exc).__name__}: {exc}; the run stopped there "
                      "(interrupted), as on Ctrl-C", UserWarning, stacklevel=4)


@contextmanager
def _memo_session(kernel: str, fabric: FabricConfig, wormhole: WormholeConfig):
    """Every Wormhole run starts from the memo of its database (or an empty
    one, so a run's results never depend on an earlier run in the same
    process) and writes back what it learnt, even when interrupted."""
    from . import _core

    _core.memo_clear()
    if kernel != "wormhole" or not wormhole.memo or not wormhole.memo_db:
        yield
        return
    from .memo import MemoDatabase, scope_of

    scope = scope_of(fabric.to_ns3_attributes(), wormhole.to_ns3_attributes())
    with MemoDatabase(wormhole.memo_db) as db:
        malformed, implausible = _core.memo_load_checked(db.load(scope))
        if malformed:
            raise InputError(wormhole.memo_db, None, f"{malformed} memo records are malformed: the file is corrupt")
        if implausible:
            import warnings

            warnings.warn(f"{wormhole.memo_db}: {implausible} memo record(s) hold numbers no fabric produces "
                          "(NaN, infinite, negative or inconsistent) and were ignored", UserWarning, stacklevel=3)
        try:
            yield
        finally:
            _save_memo(db, scope)


def _save_memo(db, scope: str) -> None:
    """What the run learnt goes back to the database; a database that cannot take it
    (read-only, full disk, locked for a minute) costs the records, never the results."""
    import sqlite3

    from . import _core

    stats = _core.kernel_stats()
    new = _core.memo_take_new()
    try:
        db.save(scope, new)
        db.record_usage(scope, stats["memo_hits"], stats["memo_misses"], stats["memo_inserts"])
    except (sqlite3.Error, OSError) as exc:
        warnings.warn(f"{db.path}: memo database not updated ({len(new)} new records lost): {exc}",
                      UserWarning, stacklevel=3)


def _topology_arrays(topology: Topology, link_events: Sequence[LinkEvent] = ()):
    from . import _core

    event_time_ns, event_link, event_up = link_event_arrays(link_events)
    return _core.TopologyArrays(
        num_nodes=topology.num_nodes,
        is_switch=np.asarray(topology.is_switch, dtype=np.uint8),
        link_a=topology.link_a,
        link_b=topology.link_b,
        rate_bps=topology.rate_bps,
        delay_ns=topology.delay_ns,
        error_rate=topology.error_rate,
        event_time_ns=event_time_ns,
        event_link=event_link,
        event_up=event_up,
    )


#: The Wormhole kernel's event queue unless the caller names one: a heap that
#: allocates nothing per event (ns-3's MapScheduler allocates a tree node per
#: event), in the same (time, uid) order as every ns-3 scheduler, so the run
#: is the same event for event. The baseline keeps ns-3's default.
WORMHOLE_EVENT_QUEUE = "ns3::WormholeEventQueue"


def _attributes(fabric: FabricConfig, wormhole: WormholeConfig, scheduler: str | None = None,
                kernel: Kernel = "baseline") -> dict[str, str]:
    attributes = fabric.to_ns3_attributes()
    attributes.update(wormhole.to_ns3_attributes())
    if scheduler is None and kernel == "wormhole":
        scheduler = WORMHOLE_EVENT_QUEUE
    if scheduler:
        attributes["SchedulerType"] = scheduler
    return attributes


def _result(raw: dict, kernel: str) -> RunResult:
    from . import _core

    stats = dict(_core.kernel_stats()) if kernel == "wormhole" else {"events_executed": int(raw["events"])}
    skipped = dict(_core.flow_time_skipped()) if kernel == "wormhole" else {}
    credited = dict(_core.flow_credited()) if kernel == "wormhole" else {}
    return RunResult(
        kernel=kernel,
        wall_s=float(raw["wall_s"]),
        setup_s=float(raw["setup_s"]),
        events=int(raw["events"]),
        sim_time_ns=int(raw["sim_time_ns"]),
        interrupted=bool(raw["interrupted"]),
        flows=_table(raw["flows"]).astype(FLOW_DTYPE),
        pfc=_table(raw["pfc"]),
        queues=_table(raw["queues"]),
        rates=_table(raw["rates"]),
        counters=dict(raw["counters"]),
        stats=stats,
        flow_time_skipped_ns={int(k): int(v) for k, v in skipped.items()},
        kernel_credited_bytes={int(k): int(v) for k, v in credited.items()},
        paths=[list(p) for p in raw["paths"]],
        stalled=np.asarray(raw["stalled"], dtype=np.uint32),
        pfc_events=_table(raw["pfc_events"]),
        qlen=[(int(t), int(n), int(p), list(c)) for t, n, p, c in raw["qlen"]],
    )


@dataclass
class WorkloadResult:
    """A training-step run: the network's results plus the DAG's timeline."""

    network: RunResult
    node_start_ns: np.ndarray
    node_end_ns: np.ndarray
    node_flow_id: np.ndarray  # model flow id of each flow node (0xffffffff for delays)
    iteration_start_ns: np.ndarray
    iteration_end_ns: np.ndarray
    collective_start_ns: np.ndarray
    collective_end_ns: np.ndarray
    finished: bool
    foreseen: int = 0  # flow starts announced to the Wormhole kernel in advance (docs/memo.md)

    @property
    def iteration_times_ns(self) -> np.ndarray:
        return self.iteration_end_ns - self.iteration_start_ns


def run_workload(
    topology: Topology,
    dag,
    fabric: FabricConfig | None = None,
    kernel: Kernel = "baseline",
    wormhole: WormholeConfig | None = None,
    stop_ns: int = 0,
    progress: ProgressFn | None = None,
    link_events: Sequence[LinkEvent] = (),
    scheduler: str | None = None,
) -> WorkloadResult:
    """Execute a training DAG (``ns3wormhole.workload.build_dag``) on
    ``topology`` inside ns-3: compute nodes are delays, flow nodes become RDMA
    queue pairs, a node starts when all its predecessors have finished."""
    from . import _core

    fabric, wormhole = _settings(kernel, fabric, wormhole, topology)
    hosts = set(int(h) for h in topology.hosts())
    used = set(np.unique(dag.src[dag.op == 1]).tolist()) | set(np.unique(dag.dst[dag.op == 1]).tolist())
    missing = sorted(used - hosts)
    if missing:
        raise InputError(
            "workload", None,
            f"the DAG uses GPU ids {missing[:5]}{'...' if len(missing) > 5 else ''} that are not hosts of "
            f"topology {topology.name or '(unnamed)'} ({len(hosts)} hosts)",
        )
    with _one_simulation(progress) as progress, _memo_session(kernel, fabric, wormhole):
        raw = _core.run_workload(
            topology=_topology_arrays(topology, link_events),
            op=dag.op, kind=dag.kind, src=dag.src, dst=dag.dst, bytes=dag.bytes,
            duration_ns=dag.duration_ns, iteration=dag.iteration, collective=dag.collective,
            succ_ptr=dag.succ_ptr, succ_idx=dag.succ_idx,
            attributes=_attributes(fabric, wormhole, scheduler, kernel),
            kernel=kernel, stop_ns=int(stop_ns), progress=progress,
        )
    w = raw["workload"]
    return WorkloadResult(
        network=_result(raw, kernel),
        node_start_ns=np.asarray(w["node_start_ns"]),
        node_end_ns=np.asarray(w["node_end_ns"]),
        node_flow_id=np.asarray(w["node_flow_id"]),
        iteration_start_ns=np.asarray(w["iteration_start_ns"]),
        iteration_end_ns=np.asarray(w["iteration_end_ns"]),
        collective_start_ns=np.asarray(w["collective_start_ns"]),
        collective_end_ns=np.asarray(w["collective_end_ns"]),
        finished=bool(w["finished"]),
        foreseen=int(w["foreseen"]),
    )
