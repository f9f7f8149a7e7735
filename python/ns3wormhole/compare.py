"""Side-by-side runs: the same scenario and seed under ns-3's default kernel
and under Wormhole, with the errors that say how far apart they are."""

from __future__ import annotations

import dataclasses
import math
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


def round_trip_ns(topology: Topology) -> int:
    """A round trip of a two-link path on ``topology``'s longest links: the
    span over which a join's phase is drawn. Controllers that update once
    per round trip (HPCC, TIMELY, DCTCP's windows) meet a joining flow at
    any point of that cycle, and where decides how the pair splits a port:
    a reference deterministic to a 1 ns shift moves by percents over it."""
    return 4 * int(topology.delay_ns.max())


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


def _delayed_compute(dag, k: int, by_ns: int = 1):
    """``dag`` with its k-th compute delay (in node order; any delay if it has
    no compute) ``by_ns`` longer."""
    from .workload.dag import KIND_COMPUTE, OP_DELAY

    delays = (dag.op == OP_DELAY) & (dag.duration_ns > 0)
    compute = np.flatnonzero(delays & (dag.kind == KIND_COMPUTE))
    if compute.size == 0:
        compute = np.flatnonzero(delays)
    if compute.size == 0:
        raise ValueError("the DAG has no delay to lengthen (only flows): no noise floor measured this way")
    duration = dag.duration_ns.copy()
    duration[compute[k % compute.size]] += np.uint64(by_ns)
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


# --- judging a run against a chaotic reference --------------------------------
#
# Where the default kernel is chaotic (probabilistic ECN marking), its
# perturbed reruns are draws of the pattern's outcome, and a Wormhole run
# whose skips were not exact is one more draw. It is judged as such: against
# a prediction bound at a stated false-alarm rate (one run), and, over the
# same perturbations run under both kernels, for a bias of its mean
# (docs/fast-forward.md, "Judging a run against a chaotic reference").

# The false-alarm rate of each judgement: the probability that an unbiased
# draw of the reference fails it.
FALSE_ALARM = 0.01
# Deviations below this are no deviation (the determinism threshold).
NO_DEVIATION = 1e-6


def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom (p >= 0.5):
    its density integrated from 0 by the trapezoid rule (4000 steps: 1e-6 of
    the tables) and the integral inverted by bisection."""
    if not 0.5 <= p < 1 or df < 1:
        raise ValueError(f"t_quantile needs 0.5 <= p < 1 and df >= 1, got p={p}, df={df}")
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def cdf(x: float) -> float:
        u = np.linspace(0.0, x, 4001)
        f = np.exp(log_c - (df + 1) / 2 * np.log1p(u * u / df))
        return 0.5 + float(np.sum(f[1:] + f[:-1]) / 2 * (u[1] - u[0]))

    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        lo, hi = hi, 2 * hi
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def prediction_bound(sample: np.ndarray, alpha: float = FALSE_ALARM) -> float:
    """Upper one-sided 1 - alpha prediction bound for one more draw of a
    positive deviation of which ``sample`` holds n >= 2 draws. Deviations
    from a run (per-flow mean and max errors, |makespan| error) are positive
    and skewed, so they are taken as log-normal:
    exp(m + t_{1-alpha, n-1} s sqrt(1 + 1/n)), m and s the mean and standard
    deviation of the logs (measured false-alarm rate: docs/fast-forward.md)."""
    x = np.log(np.maximum(np.asarray(sample, dtype=float), NO_DEVIATION))
    n = x.size
    if n < 2:
        raise ValueError("a prediction bound needs at least two draws")
    return float(np.exp(x.mean() + t_quantile(1 - alpha, n - 1) * x.std(ddof=1) * math.sqrt(1 + 1 / n)))


@dataclass
class PairedBias:
    """Signed relative errors of Wormhole against the default kernel over m
    runs of one pattern (the same perturbation under both kernels), and
    whether they are consistent with a bias no larger than ``margin``: a
    chaotic pattern makes each error a random draw, so it is the mean that
    must stay within ``margin`` plus t_{1-alpha/2, m-1} standard errors."""

    errors: np.ndarray
    margin: float
    alpha: float = FALSE_ALARM

    @property
    def mean(self) -> float:
        return float(self.errors.mean())

    @property
    def stderr(self) -> float:
        return float(self.errors.std(ddof=1) / math.sqrt(self.errors.size))

    @property
    def limit(self) -> float:
        return self.margin + t_quantile(1 - self.alpha / 2, self.errors.size - 1) * self.stderr

    @property
    def ok(self) -> bool:
        return abs(self.mean) <= self.limit

    def __repr__(self) -> str:
        return (f"PairedBias(mean {self.mean:+.3%} +- {self.stderr:.3%} over {self.errors.size} runs, "
                f"limit {self.limit:.3%})")


def signed_errors(baselines: list[RunResult], wormholes: list[RunResult]) -> tuple[np.ndarray, np.ndarray]:
    """Per pair of runs of one scenario: Wormhole's signed relative makespan
    error and signed relative error of the mean FCT."""
    span = np.array([(w.makespan_ns - b.makespan_ns) / b.makespan_ns for b, w in zip(baselines, wormholes)])
    def mean_fct(r: RunResult) -> float:
        return float(np.mean(r.flows["fct_ns"][r.completed]))

    fct = np.array([(mean_fct(w) - mean_fct(b)) / mean_fct(b) for b, w in zip(baselines, wormholes)])
    return span, fct
