"""Side-by-side runs: the same scenario and seed under ns-3's default kernel
and under Wormhole, with the errors that say how far apart they are."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .fabric import FabricConfig
from .flows import FlowSet
from .run import RunResult, WorkloadResult, WormholeConfig, run_flows
from .topology import Topology


def format_pct(x: float | None) -> str:
    """A relative error as a percentage with two decimals, or two significant
    digits below 0.1% (so 4e-5 reads 0.004%, not 0.00%)."""
    if x is None:
        return "n/a"
    if x != 0 and abs(x) < 1e-3:
        return np.format_float_positional(x * 100, precision=2, unique=False, fractional=False, trim="-") + "%"
    return f"{x:.2%}"


@dataclass
class ErrorSummary:
    mean: float
    p50: float
    p99: float
    max: float

    @classmethod
    def of(cls, errors: np.ndarray) -> "ErrorSummary":
        if errors.size == 0:
            return cls(0.0, 0.0, 0.0, 0.0)
        return cls(
            float(errors.mean()),
            float(np.percentile(errors, 50)),
            float(np.percentile(errors, 99)),
            float(errors.max()),
        )

    def as_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "p50": self.p50, "p99": self.p99, "max": self.max}


def fct_errors(baseline: RunResult, wormhole: RunResult) -> np.ndarray:
    """Per-flow |FCT_w - FCT_b| / FCT_b, matched by flow id, over flows that
    completed under both kernels."""
    b = dict(zip(baseline.flows["id"].tolist(), baseline.flows["fct_ns"].tolist()))
    w = dict(zip(wormhole.flows["id"].tolist(), wormhole.flows["fct_ns"].tolist()))
    ids = [i for i in b if b[i] > 0 and w.get(i, -1) > 0]
    if not ids:
        return np.zeros(0)
    bb = np.array([b[i] for i in ids], dtype=float)
    ww = np.array([w[i] for i in ids], dtype=float)
    return np.abs(ww - bb) / bb


def node_of_flow(w: WorkloadResult) -> dict[int, int]:
    """Model flow id -> the DAG node that sent it."""
    nodes = np.flatnonzero(w.node_flow_id != 0xFFFFFFFF)
    return {int(w.node_flow_id[n]): int(n) for n in nodes}


def by_dag_node(w: WorkloadResult) -> RunResult:
    """The network result with flow ids replaced by DAG node ids. A workload's
    flow ids are assigned in start order, which differs between kernels when
    flows start at (nearly) the same time: only DAG nodes match flows across
    runs (matching by id compared different flows, measured on MoE steps)."""
    node_of = node_of_flow(w)
    flows = w.network.flows.copy()
    flows["id"] = np.array([node_of.get(int(i), 0xFFFFFFFF) for i in flows["id"]], dtype=flows["id"].dtype)
    return dataclasses.replace(w.network, flows=flows)


def workload_fct_errors(baseline: WorkloadResult, wormhole: WorkloadResult) -> np.ndarray:
    """Per-flow FCT errors of two runs of one workload, flows matched by DAG node."""
    return fct_errors(by_dag_node(baseline), by_dag_node(wormhole))


@dataclass
class Comparison:
    baseline: RunResult
    wormhole: RunResult

    @property
    def speedup(self) -> float:
        return self.baseline.wall_s / self.wormhole.wall_s if self.wormhole.wall_s > 0 else float("inf")

    @property
    def event_ratio(self) -> float:
        return self.baseline.events / self.wormhole.events if self.wormhole.events else float("inf")

    @property
    def fct_error(self) -> ErrorSummary:
        return ErrorSummary.of(fct_errors(self.baseline, self.wormhole))

    @property
    def makespan_error(self) -> float:
        b = self.baseline.makespan_ns
        return abs(self.wormhole.makespan_ns - b) / b if b else 0.0

    @property
    def unfinished(self) -> int:
        """Flows that completed under one kernel but not the other."""
        return int(np.sum(self.baseline.completed) != np.sum(self.wormhole.completed))


def compare_flows(
    topology: Topology,
    flows: FlowSet,
    fabric: FabricConfig | None = None,
    wormhole: WormholeConfig | None = None,
    stop_ns: int = 0,
    progress=None,
) -> Comparison:
    """Run ``flows`` under both kernels with the same fabric and seed."""
    base = run_flows(topology, flows, fabric, "baseline", wormhole, stop_ns, progress)
    worm = run_flows(topology, flows, fabric, "wormhole", wormhole, stop_ns, progress, check=False)
    return Comparison(base, worm)


@dataclass
class NoiseFloor:
    """How far the baseline moves from itself when one flow starts 1 ns later:
    the smallest error any approximate method can be expected to reach on a
    scenario, because it perturbs timing by far more than 1 ns."""

    fct_mean: np.ndarray  # per perturbed run: mean per-flow FCT deviation
    fct_max: np.ndarray  # per perturbed run: max per-flow FCT deviation
    makespan: np.ndarray  # per perturbed run: makespan deviation

    @classmethod
    def of(cls, runs: list[tuple[np.ndarray, float]]) -> "NoiseFloor":
        """From (per-flow FCT errors, makespan error) of each perturbed run."""
        summaries = [ErrorSummary.of(err) for err, _ in runs]
        return cls(np.array([s.mean for s in summaries]), np.array([s.max for s in summaries]),
                   np.array([span for _, span in runs]))

    def as_dict(self) -> dict[str, list[float]]:
        return {"fct_mean": self.fct_mean.tolist(), "fct_max": self.fct_max.tolist(),
                "makespan": self.makespan.tolist()}


def _shifted(flows: FlowSet, index: int, delta_ns: int) -> FlowSet:
    starts = flows.start_ns.copy()
    starts[index] += np.uint64(delta_ns)
    return dataclasses.replace(flows, start_ns=starts)


def baseline_noise(
    topology: Topology,
    flows: FlowSet,
    baseline: RunResult,
    runs: int = 3,
    fabric: FabricConfig | None = None,
) -> NoiseFloor:
    """Re-run the default kernel ``runs`` times, each with one flow (the
    k-th, in turn) starting 1 ns later, and measure each run against
    ``baseline`` (the unperturbed run of the same scenario and seed)."""
    out = []
    for k in range(runs):
        other = run_flows(topology, _shifted(flows, k % len(flows.src), 1), fabric, "baseline")
        out.append((fct_errors(baseline, other), Comparison(baseline, other).makespan_error))
    return NoiseFloor.of(out)


def _delayed_compute(dag, k: int):
    """``dag`` with its k-th compute delay (in node order; any delay if it has
    no compute) 1 ns longer."""
    from .workload.dag import KIND_COMPUTE, OP_DELAY

    delays = (dag.op == OP_DELAY) & (dag.duration_ns > 0)
    compute = np.flatnonzero(delays & (dag.kind == KIND_COMPUTE))
    if compute.size == 0:
        compute = np.flatnonzero(delays)
    if compute.size == 0:
        raise ValueError("the DAG has no delay to lengthen (only flows): no noise floor measured this way")
    duration = dag.duration_ns.copy()
    duration[compute[k % compute.size]] += np.uint64(1)
    return dataclasses.replace(dag, duration_ns=duration)


def workload_noise(
    topology: Topology,
    dag,
    baseline: WorkloadResult,
    runs: int = 1,
    fabric: FabricConfig | None = None,
) -> tuple[NoiseFloor, np.ndarray]:
    """The workload analogue of :func:`baseline_noise`: the default kernel
    re-run with the k-th compute delay 1 ns longer. Returns the per-flow
    spread (flows matched by DAG node; its ``makespan`` is the iteration-time
    spread) and the perturbed runs' iteration times."""
    from .run import run_workload

    out, times = [], []
    for k in range(runs):
        other = run_workload(topology, _delayed_compute(dag, k), fabric, "baseline")
        b = baseline.iteration_times_ns.astype(float)
        out.append((workload_fct_errors(baseline, other),
                    float(np.max(np.abs(other.iteration_times_ns - b) / b))))
        times.append(other.iteration_times_ns)
    return NoiseFloor.of(out), np.array(times)
