"""The accuracy matrix: Wormhole against the default kernel on the same
scenario and seed, over congestion controls x link delays x traffic patterns
x ECN marking x memo state. Shared by ``tests/test_accuracy_matrix.py`` (small sizes) and
``benchmarks/bench_matrix.py`` (larger ones).

Each cell's bound follows from the reference itself: where the default
kernel is deterministic (moving one flow's start by 1 ns, or changing the
seed, changes nothing that matters) the targets of DESIGN.md apply; where it
is not, its perturbed reruns are a sample of the pattern's outcomes and
Wormhole's run is judged as one more draw: a prediction bound at a stated
false-alarm rate for each metric, and a bias check of its mean over the same
perturbations run under both kernels (docs/fast-forward.md, "Judging a run
against a chaotic reference")."""

from __future__ import annotations

import dataclasses
import math
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .compare import (FALSE_ALARM, NO_DEVIATION, ErrorSummary, PairedBias, fct_errors, round_trip_ns,
                      signed_errors, t_quantile, workload_fct_errors)
from .fabric import FabricConfig
from .flows import FlowSet
from .run import RunResult, WorkloadResult, WormholeConfig, run_flows, run_workload
from .topology import Topology, leaf_spine, star

MB = 1_000_000
US = 1_000

CCS: tuple[str, ...] = ("dcqcn", "hpcc", "timely", "dctcp")
DELAYS_US: tuple[int, ...] = (1, 5, 20, 50)
MARKINGS: tuple[str, ...] = ("step", "default")
# Controllers that ECN marks move; marking is no axis for the others.
ECN_CCS = frozenset({"dcqcn", "dctcp"})
MEMOS: tuple[str, ...] = ("off", "cold", "other-delay")

# Deterministic-reference bounds (the issue's): mean, max, makespan.
BOUND_MEAN, BOUND_MAX, BOUND_MAKESPAN = 0.01, 0.03, 0.01
BOUNDS = (BOUND_MEAN, BOUND_MAX, BOUND_MAKESPAN)

# How the reference is sampled. On one switch the seed draws the ECN marks
# only: SEEDS other seeds (each redraws every mark) and one flow 1 ns late.
# With several switches the seed also picks the ECMP paths (another scenario,
# not another draw): LATE flows 1 ns late, one at a time. Where fewer than
# MIN_DRAWS reruns moved the outcome but some did, more flows are made late,
# up to MAX_LATE (or as many as the case has), so that a chaotic reference
# is judged from a sample and not from one or two draws. Eight draws: a
# prediction bound widens by t_{0.99, n-1} sqrt(1 + 1/n) standard deviations,
# 5.1 with 4 draws, 3.2 with 8, 2.7 with 16 for twice the runs.
SEEDS = 8
LATE = 3
MAX_LATE = 8
MIN_DRAWS = 4
# Controllers that update once per round trip, clocked by their ACKs (HPCC,
# TIMELY, DCTCP's windows), meet a flow that joins at any point of that
# cycle, and where decides how the pair splits a port for milliseconds: a
# 1 ns shift leaves such a reference where it was, a shift by part of a round
# trip moves a flow by up to 8% (HPCC, 5 us links). Their references are
# also drawn with every joining flow (or everything after the first compute
# delay) later by k/PHASES of a round trip, k = 1..PHASES-1: moving the last
# flow alone leaves the earlier joins at one phase, and the sample then
# misses most of the reference's spread (TIMELY, 5 us, A 12 MB joined by two
# 6 MB flows: 6.7% "bias" at one phase of the first join, none over 16). DCQCN's timers run on time, not ACKs;
# its references keep the draws above.
PHASED_CCS = frozenset({"hpcc", "timely", "dctcp"})
PHASES = 8
# Controllers that read the switches' transmitted-byte counters (HPCC's INT)
# round them (128-byte units), so where each counter stands is state that
# moves how flows split a port: a 4-to-1 HPCC incast on 20 us links moves by
# 1-3.5% per flow (6.6% at most) between counter starts, where HPCC's code
# starts them all at 0. Their references are also drawn with every switch
# port's counter started elsewhere (``FabricConfig.int_counter_seed`` k = 1..COUNTER_DRAWS).
COUNTER_CCS = frozenset({"hpcc"})
COUNTER_DRAWS = 8
# A rerun moved the outcome if it moved a metric by a hundredth of the
# targets or more. Less cannot change a bound (none is below the targets),
# and is what a 1 ns shift does to a pattern it does not redraw: the late
# flow's own FCT is 1 ns shorter, a few others move by a few ns (1e-7 to
# 4e-5 on the permutation).
MOVED = 1e-4


@dataclass(frozen=True)
class Case:
    """One traffic pattern on one topology: ``flows`` (start times known to
    the kernel from the flow list) or ``dag`` (flows started by a training
    DAG, some when other flows end: nothing can announce those)."""

    topology: Topology
    flows: FlowSet | None = None
    dag: object | None = None


def _unit(delay_us: int) -> int:
    """Time scale of a pattern (ns): joins and waves are placed a few base
    RTTs plus a steady stretch apart, so every cell sees the same story at
    every delay."""
    return 500 * US + 40 * delay_us * US


def lone(delay_us: int, size: int) -> Case:
    return Case(star(2, "100Gbps", f"{delay_us}us"), FlowSet.from_lists([0], [1], [size]))


def join_known(delay_us: int, size: int) -> Case:
    """A flow alone, joined after a while by two more to the same receiver,
    at start times the kernel knows from the flow list."""
    u = _unit(delay_us)
    flows = FlowSet.from_lists([0, 1, 2], [3, 3, 3], [size, size // 2, size // 2], [0, u, 2 * u])
    return Case(star(4, "100Gbps", f"{delay_us}us"), flows)


def join_unforeseen(delay_us: int, size: int) -> Case:
    """The same join, but each later flow starts when a 1 kB flow between
    two other hosts ends: the workload executor cannot know that time in
    advance (it announces starts that only wait on compute delays), so a
    skip of the partition it joins is taken back, and a memo hit replayed.
    Each small flow is started about its completion time (four link delays)
    early, so the joins land near u and 2u."""
    from .workload import DagBuilder, ParallelSpec, Placement
    from .workload.dag import KIND_COMPUTE, KIND_DP_COMM

    u = _unit(delay_us)
    b = DagBuilder(Placement(ParallelSpec(dp=6, gpus_per_server=1)))
    b.transfer(np.array([0]), np.array([3]), size, kind=KIND_DP_COMM)
    for k, src in enumerate((1, 2), start=1):
        wait = b.delay(np.array([4]), k * u - 4 * delay_us * US, kind=KIND_COMPUTE)
        ping = b.transfer(np.array([4]), np.array([5]), 1000, kind=KIND_DP_COMM, deps=[wait])
        b.transfer(np.array([src]), np.array([3]), size // 2, kind=KIND_DP_COMM, deps=[ping])
    return Case(star(6, "100Gbps", f"{delay_us}us"), dag=b.build())


def incast_waves(delay_us: int, size: int, waves: int = 3) -> Case:
    """The same 4-to-1 incast repeated: each wave starts well after the
    previous one has drained (a repeated contention pattern, as in training)."""
    per = size // 4
    # one wave takes 4 * per bytes at ~95 Gb/s plus its RTTs; leave it room
    gap = int(4 * per * 8 / 80e9 * 1e9) + 2 * _unit(delay_us)
    sets = [FlowSet.from_lists([0, 1, 2, 3], [4] * 4, [per] * 4, [w * gap] * 4) for w in range(waves)]
    return Case(star(5, "100Gbps", f"{delay_us}us"), FlowSet.concat(sets))


def staggered(delay_us: int, size: int) -> Case:
    """Four flows into one receiver, each starting a while after the last."""
    u = _unit(delay_us)
    flows = FlowSet.from_lists([0, 1, 2, 3], [4] * 4, [size] * 4, [k * u // 2 for k in range(4)])
    return Case(star(5, "100Gbps", f"{delay_us}us"), flows)


def permutation(delay_us: int, size: int) -> Case:
    """A random permutation on a 2-leaf, 2-spine Clos (4 hosts a leaf, 100G
    hosts, 400G fabric): 8 flows, most crossing the spines."""
    from .flows import permutation as perm

    topo = leaf_spine(2, 2, 4, "100Gbps", "400Gbps", f"{delay_us}us")
    return Case(topo, perm(topo.hosts(), size, seed=3))


PATTERNS: dict[str, Callable[[int, int], Case]] = {
    "lone": lone,
    "join-known": join_known,
    "join-unforeseen": join_unforeseen,
    "waves": incast_waves,
    "staggered": staggered,
    "permutation": permutation,
}


def markings_of(cc: str) -> tuple[str, ...]:
    """The marking axis of ``cc``: both where marks move it, else the default alone."""
    return MARKINGS if cc in ECN_CCS else ("default",)


def fabric_of(marking: str, cc: str = "dcqcn") -> FabricConfig:
    fab = FabricConfig(cc=cc)
    return fab.with_step_marking() if marking == "step" else fab


@dataclass
class Outcome:
    """What one run gives a comparison: per-flow FCTs (matched by flow id or
    DAG node) and the makespan."""

    result: RunResult | WorkloadResult

    @property
    def network(self) -> RunResult:
        return self.result.network if isinstance(self.result, WorkloadResult) else self.result

    def errors_against(self, ref: "Outcome") -> tuple[np.ndarray, float]:
        if isinstance(self.result, WorkloadResult):
            err = workload_fct_errors(ref.result, self.result)
        else:
            err = fct_errors(ref.result, self.result)
        b, w = ref.network.makespan_ns, self.network.makespan_ns
        return err, abs(w - b) / b


def _distance_among(run: Outcome, others: list[Outcome]) -> tuple[float, float]:
    """The mean over ``others`` of ``run``'s per-flow mean and max relative
    FCT errors against each."""
    summaries = [ErrorSummary.of(run.errors_against(o)[0]) for o in others]
    return float(np.mean([s.mean for s in summaries])), float(np.mean([s.max for s in summaries]))


def simulate(case: Case, fabric: FabricConfig, kernel: str, wormhole: WormholeConfig | None = None) -> Outcome:
    if case.dag is not None:
        return Outcome(run_workload(case.topology, case.dag, fabric, kernel, wormhole))
    return Outcome(run_flows(case.topology, case.flows, fabric, kernel, wormhole, check=kernel == "baseline"))


def _late(case: Case, k: int, by_ns: int = 1) -> Case:
    """The same case with its k-th flow from the end (or k-th compute delay)
    ``by_ns`` later."""
    if case.dag is not None:
        from .compare import _delayed_compute

        return dataclasses.replace(case, dag=_delayed_compute(case.dag, k, by_ns))
    starts = case.flows.start_ns.copy()
    starts[-1 - k % starts.size] += np.uint64(by_ns)
    return dataclasses.replace(case, flows=dataclasses.replace(case.flows, start_ns=starts))


def _joins_later(case: Case, by_ns: int) -> Case:
    """The same case with every flow that joins the first ones (or, in a
    DAG, everything after its first compute delay) ``by_ns`` later: where
    in the first flows' cycles the joins fall."""
    if case.dag is not None:
        return _late(case, 0, by_ns)
    starts = case.flows.start_ns.copy()
    starts[starts > starts.min()] += np.uint64(by_ns)
    return dataclasses.replace(case, flows=dataclasses.replace(case.flows, start_ns=starts))


def _late_count(case: Case) -> int:
    """How many distinct cases ``_late`` makes of ``case``."""
    if case.dag is None:
        return int(case.flows.start_ns.size)
    from .workload.dag import OP_DELAY

    delays = int(np.sum((case.dag.op == OP_DELAY) & (case.dag.duration_ns > 0)))
    return max(1, delays)


@dataclass
class Draw:
    """One perturbed rerun of the reference under the default kernel, and
    how far it moved from the reference's run (per-flow FCT mean and max,
    |makespan|, relative)."""

    kind: str  # "seed" (another seed), "late" (a flow or compute delay 1 ns late), "phase" (PHASED_CCS), "counters" (COUNTER_CCS)
    case: Case = dataclasses.field(repr=False)
    fabric: FabricConfig = dataclasses.field(repr=False)
    run: Outcome = dataclasses.field(repr=False)
    deviation: tuple[float, float, float]

    @property
    def moved(self) -> bool:
        return max(self.deviation) >= MOVED

    @classmethod
    def against(cls, base: Outcome, kind: str, run: Outcome, case: Case | None = None,
                fabric: FabricConfig | None = None) -> "Draw":
        """``run`` as a draw of kind ``kind``, its deviation taken from ``base``."""
        err, span = run.errors_against(base)
        s = ErrorSummary.of(err)
        return cls(kind, case, fabric, run, (s.mean, s.max, span))


@dataclass
class Reference:
    """The default kernel's run of a cell and its perturbed reruns. The
    reference is deterministic where no rerun moved the outcome. Where some
    did, the sample of the pattern's outcomes is the reruns that redraw it:
    the other seeds that moved it (each redraws every ECN mark), else every
    rerun that moved it (flows 1 ns late, phases of the joins for PHASED_CCS,
    other switch byte-counter starts for COUNTER_CCS). A 1 ns shift is no redraw where it moved
    the outcome by a hair: marks are keyed by the frame, so it redraws only
    frames whose queue it changes (0.00% in most cells, 0.09% on the
    staggered 20 us one against 2-3% for a seed), and such a near copy of
    the reference's run would make the spread of deviations meaningless."""

    run: Outcome = dataclasses.field(repr=False)
    draws: list[Draw]

    @property
    def moved(self) -> list[Draw]:
        return [d for d in self.draws if d.moved]

    @property
    def sample(self) -> list[Draw]:
        seeds = [d for d in self.moved if d.kind == "seed"]
        return seeds or self.moved

    @property
    def deterministic(self) -> bool:
        return not self.moved

    def _spread(self, i: int) -> float:
        return max((d.deviation[i] for d in self.draws), default=0.0)

    @property
    def spread_mean(self) -> float:
        return self._spread(0)

    @property
    def spread_max(self) -> float:
        return self._spread(1)

    @property
    def spread_makespan(self) -> float:
        return self._spread(2)

    @property
    def runs(self) -> list[Outcome]:
        """The draws a run is judged among: the reference's run and its sample."""
        return [self.run] + [d.run for d in self.sample]

    def distance(self, run: Outcome) -> tuple[float, float]:
        """How far ``run`` is from the reference, per flow (mean and max
        relative FCT error): from its run where it is deterministic, else the
        mean over its ``runs`` of the errors against each, the statistic
        ``bounds`` holds a run to (``_distance_among``)."""
        if self.deterministic:
            s = ErrorSummary.of(run.errors_against(self.run)[0])
            return s.mean, s.max
        return _distance_among(run, self.runs)

    def _makespans(self) -> np.ndarray:
        return np.array([self.run.network.makespan_ns] + [d.run.network.makespan_ns for d in self.sample], float)

    @property
    def makespan_centre(self) -> float:
        """The makespan a run's is judged from: the reference's own where it
        is deterministic, else the mean over the reference's run and its
        sample (each one draw of the pattern's makespan)."""
        return float(self._makespans().mean())

    def makespan_error(self, run: Outcome) -> float:
        """|makespan - centre| / the reference's makespan."""
        return abs(run.network.makespan_ns - self.makespan_centre) / self.run.network.makespan_ns

    def bounds(self, floors: tuple[float, float, float] = BOUNDS, alpha: float = FALSE_ALARM) -> tuple[float, float, float]:
        """Bounds of one run's per-flow ``distance`` (mean, max) and of its
        ``makespan_error``: ``floors`` (the targets) where the reference is
        deterministic; where it is not, the larger of the target and a
        1 - alpha prediction bound from the reference's ``runs``.

        Per flow, each of the k runs' distance to the other k - 1 is one draw
        of what a run that is one more draw of the pattern scores (its
        distance to all k): positive and skewed, taken as log-normal. The
        distances are means over the other runs, so a sample whose
        deviations from one run are bimodal (a 1 ns shift
        moves a pattern by 0.01%, a phase of its joins or other counter
        starts by 1-10%) does not make them so: a log-normal fitted to
        deviations from the reference's run alone stretched without limit
        (618% per flow on HPCC's 20 us join, 24 MB). A makespan is one draw
        of a roughly normal quantity, so its bound is two-sided around the
        sample's mean, t_{1-alpha/2, k-1} s sqrt(1 + 1/k) over the k
        makespans. With fewer than MIN_DRAWS draws (the reference could not
        be made to move more often) the largest of each stands in."""
        sample = self.sample
        if not sample:
            return floors
        runs = self.runs
        k = len(runs)
        among = np.array([_distance_among(r, runs[:i] + runs[i + 1:]) for i, r in enumerate(runs)])
        spread = [0.0, 0.0, float(max(d.deviation[2] for d in sample))]
        for i in (0, 1):
            if len(sample) < MIN_DRAWS:
                spread[i] = float(among[:, i].max())
                continue
            # Two corrections to the plain log-normal bound, both measured
            # (tests/test_accuracy_bounds.py): each leave-one-out distance
            # also averages the others' deviations, which shrinks their
            # spread by about (k - 2) / (k - 1); and mean and max are judged
            # together, so each gets half the false-alarm rate. Without
            # them an unbiased run failed 2-4% of the time, with them 1-2%.
            x = np.log(np.maximum(among[:, i], NO_DEVIATION))
            scale = (k - 1) / (k - 2) * x.std(ddof=1) * math.sqrt(1 + 1 / k)
            spread[i] = float(np.exp(x.mean() + t_quantile(1 - alpha / 2, k - 1) * scale))
        if len(sample) >= MIN_DRAWS:
            spans = self._makespans()
            half = t_quantile(1 - alpha / 2, k - 1) * spans.std(ddof=1) * math.sqrt(1 + 1 / k)
            spread[2] = half / self.run.network.makespan_ns
        return tuple(max(f, float(x)) for f, x in zip(floors, spread))

    def bias(self, wormhole: Callable[[Case, FabricConfig], Outcome], run: Outcome,
             margins: tuple[float, float] = (BOUND_MAKESPAN, BOUND_MEAN)) -> tuple[PairedBias, PairedBias] | None:
        """Wormhole's bias on makespan and mean FCT: its run (``run``) and its
        runs of every draw's perturbation (``wormhole(case, fabric)``), each
        against the default kernel's run of the same. None where the
        reference is deterministic (there the bounds alone judge a run)."""
        moved = self.sample
        if not moved:
            return None
        base = [self.run.network] + [d.run.network for d in moved]
        worm = [run.network] + [wormhole(d.case, d.fabric).network for d in moved]
        span, fct = signed_errors(base, worm)
        return PairedBias(span, margins[0]), PairedBias(fct, margins[1])


def reference(case: Case, fabric: FabricConfig, base: RunResult | WorkloadResult | None = None) -> Reference:
    """The cell's reference; ``base``: its default-kernel run, if made already."""
    base = Outcome(base) if base is not None else simulate(case, fabric, "baseline")

    def draw(kind: str, c: Case, fab: FabricConfig) -> Draw:
        return Draw.against(base, kind, simulate(c, fab, "baseline"), c, fab)

    lates = min(MAX_LATE, _late_count(case))
    if case.topology.switches().size == 1:
        draws = [draw("late", _late(case, 0), fabric)]
        draws += [draw("seed", case, dataclasses.replace(fabric, seed=fabric.seed + k)) for k in range(1, SEEDS + 1)]
        made = 1
    else:
        made = min(LATE, lates)
        draws = [draw("late", _late(case, k), fabric) for k in range(made)]
    if fabric.cc in PHASED_CCS:
        step = round_trip_ns(case.topology) // PHASES
        draws += [draw("phase", _joins_later(case, k * step), fabric) for k in range(1, PHASES)]
    if fabric.cc in COUNTER_CCS:
        draws += [draw("counters", case, dataclasses.replace(fabric, int_counter_seed=fabric.int_counter_seed + k))
                  for k in range(1, COUNTER_DRAWS + 1)]
    ref = Reference(base, draws)
    if ref.moved and len(ref.sample) < MIN_DRAWS:
        ref.draws += [draw("late", _late(case, k), fabric) for k in range(made, lates)]
    return ref


@dataclass
class CellResult:
    fct: ErrorSummary  # against the reference's run
    distance: tuple[float, float]  # per-flow mean and max, judged (``Reference.distance``)
    makespan: float  # |makespan - the reference's| / the reference's
    makespan_off: float  # the same from the reference's centre (``Reference.makespan_error``), judged
    bounds: tuple[float, float, float]
    deterministic: bool
    time_skipped_ns: int
    event_ratio: float
    memo_hits: int
    bias_makespan: PairedBias | None = None
    bias_fct: PairedBias | None = None

    @property
    def within(self) -> bool:
        return within_bounds(self.distance, self.makespan, self.makespan_off, self.bounds,
                             (self.bias_makespan, self.bias_fct))


def failed_checks(distance: tuple[float, float], makespan: float, makespan_off: float,
                  bounds: tuple[float, float, float], bias: tuple[PairedBias | None, ...] = ()) -> list[str]:
    """Every check of the judgement of one run (``Reference.distance``,
    ``makespan_error``, ``bounds``, ``bias``) that it fails: per-flow
    distance within its bounds (mean, max); the makespan within the target
    of the reference's own run, or within the prediction bound of its
    sample's mean; and each bias check (makespan, mean FCT)."""
    mean, mx, span = bounds
    failed = [name for name, x, bound in (("mean", distance[0], mean), ("max", distance[1], mx)) if x > bound]
    if makespan > BOUND_MAKESPAN and makespan_off > span:
        failed.append("makespan")
    failed += [name for name, b in zip(("makespan bias", "mean FCT bias"), bias) if b is not None and not b.ok]
    return failed


def within_bounds(distance: tuple[float, float], makespan: float, makespan_off: float,
                  bounds: tuple[float, float, float], bias: tuple[PairedBias | None, ...] = ()) -> bool:
    """The run passes every check of ``failed_checks``."""
    return not failed_checks(distance, makespan, makespan_off, bounds, bias)


def other_delay(delay_us: int) -> int:
    """The delay whose run fills the store a cell of ``delay_us`` starts from."""
    i = DELAYS_US.index(delay_us) if delay_us in DELAYS_US else 0
    return DELAYS_US[(i + 1) % len(DELAYS_US)]


def run_cell(pattern: str, delay_us: int, marking: str, memo: str, size: int,
             ref: Reference | None = None, cc: str = "dcqcn") -> CellResult:
    """One cell of the matrix (``ref``: the cell's reference, if computed
    already for another memo state of the same pattern, delay and marking).
    Where the reference is chaotic, Wormhole also runs every draw's
    perturbation, each from the same memo state, for the bias check."""
    build = PATTERNS[pattern]
    case = build(delay_us, size)
    fabric = fabric_of(marking, cc)
    ref = ref or reference(case, fabric)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = WormholeConfig(memo=memo != "off")
        filled = None
        if memo == "other-delay":
            filled = Path(tmp) / "filled.sqlite"
            simulate(build(other_delay(delay_us), size), fabric, "wormhole",
                     dataclasses.replace(cfg, memo_db=str(filled)))
        runs = 0

        def wormhole(c: Case, fab: FabricConfig) -> Outcome:
            nonlocal runs
            runs += 1
            if filled is None:
                return simulate(c, fab, "wormhole", cfg)
            store = Path(tmp) / f"memo{runs}.sqlite"  # each run starts from the filled store
            shutil.copyfile(filled, store)
            return simulate(c, fab, "wormhole", dataclasses.replace(cfg, memo_db=str(store)))

        worm = wormhole(case, fabric)
        bias = ref.bias(wormhole, worm)
    err, span = worm.errors_against(ref.run)
    stats = worm.network.stats
    return CellResult(ErrorSummary.of(err), ref.distance(worm), span, ref.makespan_error(worm), ref.bounds(),
                      ref.deterministic,
                      int(stats["time_skipped_ns"]), ref.run.network.events / max(1, worm.network.events),
                      int(stats.get("memo_hits", 0)), *(bias or (None, None)))
