"""Where flows contend (issue #12): Wormhole against ns-3's default kernel,
side by side in one process, on the scenarios that today gain little or
nothing, with the kernel's own account of why.

    python benchmarks/bench_contention.py [--scenario NAME ...] [--rounds N] [--mb M] [--cc CC] [--delay D] [--noise N] [--seeds N] [--phases N] [--queue Q] [--judge] [--json OUT]
    valgrind --tool=callgrind python benchmarks/bench_contention.py --scenario shortmix --only wormhole

Scenarios:

  shortmix   400 short flows (40 KB - 1 MB, log-uniform), random host pairs,
             Poisson arrivals (mean gap 4 us, ~45% of the hosts' capacity) on a
             16-host leaf-spine (4 leaves x 4 hosts, 2 spines, 100G/400G, 1 us):
             nothing can be skipped, so Wormhole should cost nothing.
  fattree4   random permutation of --mb MB flows on a k=4 fat-tree (16 hosts, ECMP).
  fattree8   the same on a k=8 fat-tree (128 hosts): long, run it with nice.
  oversub    random permutation of --mb MB flows on a 2:1 oversubscribed
             leaf-spine (4 leaves x 4 hosts at 100G, 2 spines at 100G).
  incast256  8-to-1 DCQCN incast of 256 MB flows, default (probabilistic) marking.
  incast128  the same with 128 MB flows (the size of the slow bias test).
  join128    a second 128 MB flow joins a first one at 2 ms at the same
             receiver (a 100G star): they share the port about evenly while
             their DCQCN targets settle, and the joiner climbs alone after the
             first leaves (run it with --seeds; --cc and --phases for others,
             --delay for longer links).

Each scenario runs --rounds times, baseline and Wormhole alternating (so load
on the machine hits both alike); walls are medians over the rounds. Results
(events, FCTs) are identical from round to round, so accuracy is reported once.
The machine is shared: read the event ratio beside the wall ratio.
``--noise N`` judges the errors against the reference's own spread: the
baseline re-run N times with flow k (k < N) starting 1 ns late, and Wormhole
run the same N ways, each against the unperturbed baseline. Where the
reference is chaotic (DCQCN, probabilistic marking) Wormhole's errors should
fall among the reference's; where it is deterministic both are near zero.
With ``--seeds N`` (N > 1) each seed's Wormhole run is also compared, signed,
with the default kernel's run of the same seed: the mean over the seeds (with
its standard error) of the mean-FCT, makespan and FCT-spread differences says
whether Wormhole is biased where a single seed cannot (the spread is the
within-run standard deviation of the FCTs, its difference taken over the
baseline's mean FCT; too narrow a spread makes the mean FCT late), and how
much the makespan moves from seed to seed under each kernel.
``--phases N`` does the same over phases instead of seeds: the scenario's
last flow starts k x (round trip / N) later (k < N), under both kernels, the
round trip taken as four times the longest link delay (a two-link path there
and back). That is how to judge a reference that is deterministic but moves
with the phase of a join (TIMELY, HPCC: one seed is every seed): they update
once per round trip, and where in that cycle a join falls decides how a pair
splits a port, so the phases must spread over a round trip. ``--cc`` picks the congestion
control of the fabric (default DCQCN).
``--judge`` instead judges each scenario's Wormhole run as the accuracy
matrix judges a cell (``accuracy_matrix.reference``, ``Reference.distance``,
``bounds`` and ``bias``: flows 1 ns late, phases of the joins for HPCC,
TIMELY and DCTCP, counter starts for HPCC); it exits 1 if any is outside.
``--only KERNEL`` runs each scenario once under that kernel and prints its
wall time and events: for profilers (callgrind counts instructions, which load
does not change).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ns3wormhole import accuracy_matrix as am
from ns3wormhole.compare import (Comparison, ErrorSummary, PairedBias, _shifted, baseline_noise, fct_errors,
                                 round_trip_ns, signed_errors)
from ns3wormhole.fabric import CC_NAMES, FabricConfig
from ns3wormhole.flows import FlowSet, incast, permutation
from ns3wormhole.run import RunResult, WormholeConfig, run_flows
from ns3wormhole.errors import InputError
from ns3wormhole.topology import Topology, fat_tree, leaf_spine, parse_time, star
from ns3wormhole.why_not import partition_summary, why_not_summary

MB = 1_000_000


def shortmix(seed: int = 1, n: int = 400, mean_gap_ns: float = 4000.0, delay: str = "1us") -> tuple[Topology, FlowSet]:
    """``n`` flows of 40 KB - 1 MB (log-uniform) between random distinct host
    pairs of a 16-host leaf-spine, starting as a Poisson process."""
    topo = leaf_spine(4, 2, 4, "100Gbps", "400Gbps", delay)
    rng = np.random.default_rng(seed)
    hosts = topo.hosts()
    src = rng.integers(0, hosts.size, n)
    dst = (src + rng.integers(1, hosts.size, n)) % hosts.size  # any host but the sender
    size = np.exp(rng.uniform(np.log(40_000), np.log(1_000_000), n)).astype(np.int64)
    start = np.cumsum(rng.exponential(mean_gap_ns, n)).astype(np.int64)
    return topo, FlowSet.from_lists(hosts[src].tolist(), hosts[dst].tolist(), size.tolist(), start.tolist())


def fattree4(mb: int, delay: str) -> tuple[Topology, FlowSet]:
    topo = fat_tree(4, "100Gbps", delay)
    return topo, permutation(topo.hosts(), mb * MB, seed=1)


def fattree8(mb: int, delay: str) -> tuple[Topology, FlowSet]:
    topo = fat_tree(8, "100Gbps", delay)
    return topo, permutation(topo.hosts(), mb * MB, seed=1)


def oversub(mb: int, delay: str) -> tuple[Topology, FlowSet]:
    topo = leaf_spine(4, 2, 4, "100Gbps", "100Gbps", delay)  # 400G down, 200G up per leaf
    return topo, permutation(topo.hosts(), mb * MB, seed=1)


def join128(delay: str) -> tuple[Topology, FlowSet]:
    """Flow B (128 MB) joins flow A (128 MB) 2 ms after it, at the same receiver of a 100G star."""
    flows = FlowSet.from_lists(src=[0, 1], dst=[2, 2], bytes=[128 * MB, 128 * MB], start_ns=[0, 2_000_000])
    return star(4, "100Gbps", delay), flows


def incast8(mb: int, delay: str) -> tuple[Topology, FlowSet]:
    """8-to-1 incast of `mb` MB flows on a 100G star."""
    return star(9, "100Gbps", delay), incast(list(range(8)), 8, mb * MB)


# Each takes (--mb, --delay); the fixed-size ones ignore --mb.
SCENARIOS: dict[str, Callable[[int, str], tuple[Topology, FlowSet]]] = {
    "shortmix": lambda _mb, delay: shortmix(delay=delay),
    "fattree4": fattree4,
    "fattree8": fattree8,
    "oversub": oversub,
    "incast256": lambda _mb, delay: incast8(256, delay),
    "incast128": lambda _mb, delay: incast8(128, delay),
    "join128": lambda _mb, delay: join128(delay),
}
DEFAULT = ["shortmix", "fattree4", "oversub", "incast256"]


@dataclass
class Row:
    scenario: str
    rounds: int
    base_walls: list[float]
    worm_walls: list[float]
    cmp: Comparison

    @property
    def base_wall(self) -> float:
        return statistics.median(self.base_walls)

    @property
    def worm_wall(self) -> float:
        return statistics.median(self.worm_walls)

    def as_dict(self) -> dict:
        err = self.cmp.fct_error
        st = self.cmp.wormhole.stats
        return {
            "scenario": self.scenario, "rounds": self.rounds,
            "baseline_wall_s": self.base_walls, "wormhole_wall_s": self.worm_walls,
            "baseline_wall_median_s": self.base_wall, "wormhole_wall_median_s": self.worm_wall,
            "wall_ratio_worm_over_base": self.worm_wall / self.base_wall,
            "baseline_events": self.cmp.baseline.events, "wormhole_events": self.cmp.wormhole.events,
            "event_ratio": self.cmp.event_ratio,
            "fct_error_mean": err.mean, "fct_error_max": err.max, "makespan_error": self.cmp.makespan_error,
            "stats": st,
        }


def measure(name: str, topo: Topology, flows: FlowSet, rounds: int, fabric: FabricConfig,
            cfg: WormholeConfig, queue: str | None = None) -> Row:
    base_walls: list[float] = []
    worm_walls: list[float] = []
    base: RunResult | None = None
    worm: RunResult | None = None
    for r in range(rounds):
        # Alternate which kernel goes first, so a load change mid-round hits both.
        order = ("baseline", "wormhole") if r % 2 == 0 else ("wormhole", "baseline")
        for kernel in order:
            res = run_flows(topo, flows, fabric, kernel, cfg, check=(base is None and worm is None), scheduler=queue)
            if kernel == "baseline":
                base_walls.append(res.wall_s)
                base = base or res
            else:
                worm_walls.append(res.wall_s)
                worm = worm or res
    assert base is not None and worm is not None
    return Row(name, rounds, base_walls, worm_walls, Comparison(base, worm))


def print_row(row: Row) -> None:
    cmp = row.cmp
    err = cmp.fct_error
    st = cmp.wormhole.stats
    print(f"{row.scenario:<14}{len(cmp.baseline.flows):>6}{row.base_wall:>10.3f}s{row.worm_wall:>10.3f}s"
          f"{row.worm_wall / row.base_wall:>10.3f}{row.base_wall / row.worm_wall:>9.2f}x"
          f"{cmp.baseline.events:>13,}{cmp.wormhole.events:>12,}{cmp.event_ratio:>9.2f}x"
          f"{st.get('fast_forwards', 0):>6}{100 * err.mean:>9.3f}%{100 * err.max:>8.3f}%"
          f"{100 * cmp.makespan_error:>9.3f}%")
    walls = " ".join(f"{b:.3f}/{w:.3f}" for b, w in zip(row.base_walls, row.worm_walls))
    print(f"{'':<14}rounds (base/worm s): {walls}")
    print(f"{'':<14}{partition_summary(st)}")
    print(f"{'':<14}{why_not_summary(st)}")


def print_over_seeds(name: str, rows: list[Row], bias: dict[str, tuple[float, float]], by: str = "seeds") -> None:
    """Median and range over the seeds (or phases) of the speed-up, the event ratio and the errors."""

    def cell(values: list[float], fmt: str) -> str:
        return f"{format(statistics.median(values), fmt)} ({format(min(values), fmt)}-{format(max(values), fmt)})"

    speedup = [r.base_wall / r.worm_wall for r in rows]
    ratio = [r.cmp.event_ratio for r in rows]
    fct = [100 * r.cmp.fct_error.mean for r in rows]
    span = [100 * r.cmp.makespan_error for r in rows]
    print(f"{name:<14}over {len(rows)} {by}, median (min-max): speedup {cell(speedup, '.2f')}x, "
          f"event ratio {cell(ratio, '.2f')}x, FCT mean error {cell(fct, '.3f')}%, makespan {cell(span, '.3f')}%")
    print(f"{'':<14}signed, Wormhole - baseline of the same draw, mean +- standard error over the {by}: "
          + ", ".join(f"{label} {100 * m:+.3f}% +- {100 * se:.3f}" for label, (m, se) in bias.items()))
    base, worm = makespan_spreads(rows)
    print(f"{'':<14}makespan over the {by}, standard deviation / mean: baseline {100 * base:.3f}%, "
          f"Wormhole {100 * worm:.3f}% (a faithful kernel's runs are draws from the reference's distribution)")


def makespan_spreads(rows: list[Row]) -> tuple[float, float]:
    """How much the makespan moves from seed to seed under each kernel (standard deviation over the mean)."""

    def spread(spans: list[int]) -> float:
        return float(np.std(spans, ddof=1) / np.mean(spans))

    return (spread([r.cmp.baseline.makespan_ns for r in rows]), spread([r.cmp.wormhole.makespan_ns for r in rows]))


def signed_bias(rows: list[Row]) -> dict[str, tuple[float, float]]:
    """Mean and standard error over the seeds of Wormhole's signed differences from the default
    kernel's run of the same seed: mean FCT and makespan (``compare.signed_errors``), and the FCTs'
    within-run standard deviation (over the baseline's mean FCT)."""
    base = [r.cmp.baseline for r in rows]
    worm = [r.cmp.wormhole for r in rows]
    span, fct = signed_errors(base, worm)

    def fcts(r: RunResult) -> np.ndarray:
        return r.flows["fct_ns"][r.completed].astype(float)

    spread = np.array([(fcts(w).std() - fcts(b).std()) / fcts(b).mean() for b, w in zip(base, worm)])
    out = {}
    for label, errors in (("mean FCT", fct), ("makespan", span), ("FCT spread", spread)):
        paired = PairedBias(errors, 0.0)
        out[label] = (paired.mean, paired.stderr)
    return out


def noise(topo: Topology, flows: FlowSet, base: RunResult, runs: int, fabric: FabricConfig,
          cfg: WormholeConfig) -> dict[str, dict[str, list[float]]]:
    """Per perturbed run (flow k 1 ns late), mean and max per-flow FCT error and the makespan
    error against the unperturbed baseline: of the baseline itself, and of Wormhole."""
    reference = baseline_noise(topo, flows, base, runs, fabric).as_dict()
    worm: dict[str, list[float]] = {"fct_mean": [], "fct_max": [], "makespan": []}
    for k in range(runs):
        w = run_flows(topo, _shifted(flows, k % len(flows.src), 1), fabric, "wormhole", cfg)
        err = np.abs(fct_errors(base, w))
        worm["fct_mean"].append(float(err.mean()))
        worm["fct_max"].append(float(err.max()))
        worm["makespan"].append(Comparison(base, w).makespan_error)
    return {"baseline": reference, "wormhole": worm}


def print_noise(spread: dict[str, dict[str, list[float]]]) -> None:
    for who, label in (("baseline", "reference, flow k 1 ns late"), ("wormhole", "wormhole,  flow k 1 ns late")):
        d = spread[who]
        cells = "  ".join(f"{name} " + " / ".join(f"{100 * v:.2f}" for v in d[key]) + "%"
                          for key, name in (("fct_mean", "FCT mean"), ("fct_max", "max"), ("makespan", "makespan")))
        print(f"{'':<14}{label}: {cells}")


def judge(name: str, topo: Topology, flows: FlowSet, fabric: FabricConfig, cfg: WormholeConfig) -> dict:
    """One scenario judged as the accuracy matrix judges a cell (docs/fast-forward.md, "Judging a run
    against a chaotic reference"), printed and returned."""
    case = am.Case(topo, flows)
    ref = am.reference(case, fabric)
    worm = am.simulate(case, fabric, "wormhole", cfg)
    err, span = worm.errors_against(ref.run)
    summary = ErrorSummary.of(err)
    distance = ref.distance(worm)
    bounds = ref.bounds()
    bias = ref.bias(lambda c, f: am.simulate(c, f, "wormhole", cfg), worm)
    within = am.within_bounds(distance, span, ref.makespan_error(worm), bounds, bias or ())
    moved = ", ".join(f"{d.kind} {100 * d.deviation[0]:.2f}/{100 * d.deviation[1]:.2f}%" for d in ref.moved)
    print(f"{name}: {'deterministic' if ref.deterministic else 'chaotic'} reference ({len(ref.draws)} reruns"
          f"{'; moved: ' + moved if moved else ''})\n"
          f"  Wormhole {ref.run.network.events / worm.network.events:.2f}x events; from the reference's run "
          f"{100 * summary.mean:.3f}% mean, {100 * summary.max:.3f}% max per flow, makespan {100 * span:.3f}%\n"
          f"  judged: distance {100 * distance[0]:.3f}% / {100 * distance[1]:.3f}% against "
          f"{100 * bounds[0]:.3f}% / {100 * bounds[1]:.3f}%, makespan from the centre "
          f"{100 * ref.makespan_error(worm):.3f}% against {100 * bounds[2]:.3f}%"
          + ("" if bias is None else f"\n  bias: makespan {bias[0]}, mean FCT {bias[1]}")
          + f"\n  {'within' if within else 'OUTSIDE'} the reference's distribution", flush=True)
    return {"scenario": name, "deterministic": ref.deterministic, "event_ratio": ref.run.network.events / worm.network.events,
            "fct_mean": summary.mean, "fct_max": summary.max, "makespan": span, "distance": list(distance),
            "bounds": list(bounds), "bias_makespan": None if bias is None else bias[0].errors.tolist(),
            "bias_fct": None if bias is None else bias[1].errors.tolist(), "within": within}


def _link_delay(text: str) -> str:
    """``--delay``'s value, checked before anything runs (``20us``; a bare number has no unit)."""
    try:
        parse_time(text, source="--delay")
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", nargs="+", default=DEFAULT, choices=sorted(SCENARIOS))
    parser.add_argument("--rounds", type=int, default=5, help="alternating runs per kernel (default 5)")
    parser.add_argument("--mb", type=int, default=64, help="permutation flow size in MB (default 64)")
    parser.add_argument("--noise", type=int, default=0, metavar="N",
                        help="also run both kernels N times with flow k (k < N) 1 ns late, against the "
                             "unperturbed baseline: the reference's own spread beside Wormhole's")
    parser.add_argument("--judge", action="store_true",
                        help="instead, judge each scenario's Wormhole run as the accuracy matrix judges a cell "
                             "(accuracy_matrix.reference: flows 1 ns late, phases of the joins for HPCC, TIMELY "
                             "and DCTCP, counter starts for HPCC): per-flow distance to the reference's runs "
                             "against its bounds, makespan, and the paired bias over the same reruns")
    parser.add_argument("--json", default=None, help="write the rows as JSON here")
    parser.add_argument("--only", choices=["baseline", "wormhole"], default=None,
                        help="run each scenario once under this kernel only (for profilers)")
    parser.add_argument("--seeds", type=int, default=1, metavar="N",
                        help="run each scenario under the fabric's ns-3 seeds 1..N (ECN draws, ECMP) and "
                             "summarise the ratios and errors over them: one seed of a chaotic scenario "
                             "(DCQCN, probabilistic marking) is one draw of its speed-up (default 1)")
    parser.add_argument("--phases", type=int, default=1, metavar="N",
                        help="run each scenario N times with its last flow starting k x (round trip / N) "
                             "later (k < N; a round trip taken as 4x the longest link delay) under both "
                             "kernels, and summarise as --seeds does: for references that are deterministic "
                             "but move with a join's phase (default 1)")
    parser.add_argument("--delay", default="1us", metavar="DELAY", type=_link_delay,
                        help="one-way delay of every link of the scenarios (ns-3 time, default 1us)")
    parser.add_argument("--cc", default="dcqcn", choices=CC_NAMES,
                        help="congestion control of the fabric (default dcqcn)")
    parser.add_argument("--queue", default=None, metavar="SCHEDULER",
                        help="one event queue for both kernels (e.g. ns3::MapScheduler: what the kernel's "
                             "bookkeeping costs alone); default: each kernel's own, ns-3's MapScheduler for "
                             "the baseline and ns3::WormholeEventQueue for Wormhole")
    args = parser.parse_args(argv)
    if args.noise < 0:
        parser.error(f"--noise must be >= 0, got {args.noise}")
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1, got {args.seeds}")
    if args.phases < 1:
        parser.error(f"--phases must be >= 1, got {args.phases}")
    if args.seeds > 1 and args.phases > 1:
        parser.error("--seeds and --phases are two ways to draw runs of one scenario: give one of them")
    fabric = FabricConfig(cc=args.cc)
    cfg = WormholeConfig()
    if args.judge:
        rows = [judge(name, *SCENARIOS[name](args.mb, args.delay), fabric, cfg) for name in args.scenario]
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
        return 0 if all(r["within"] for r in rows) else 1
    if args.only:
        for name in args.scenario:
            topo, flows = SCENARIOS[name](args.mb, args.delay)
            res = run_flows(topo, flows, fabric, args.only, cfg, scheduler=args.queue)
            print(f"{name} {args.only}: wall {res.wall_s:.3f} s, {res.events:,} events")
        return 0
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.node()} python {platform.python_version()} "
          f"rounds {args.rounds}, permutation flows {args.mb} MB, links {args.delay}, cc {args.cc}, default kernel, event queue "
          f"{args.queue or 'each kernel its own (baseline ns3::MapScheduler, Wormhole ns3::WormholeEventQueue)'}")
    print(f"{'scenario':<14}{'flows':>6}{'base wall':>11}{'worm wall':>11}{'worm/base':>10}{'speedup':>10}"
          f"{'base ev':>13}{'worm ev':>12}{'ev ratio':>10}{'ff':>6}{'fct mean':>10}{'max':>9}{'makespan':>10}")
    rows = []
    for name in args.scenario:
        topo, flows = SCENARIOS[name](args.mb, args.delay)
        per_seed: list[Row] = []
        draws = [(seed, 0) for seed in range(1, args.seeds + 1)] if args.phases == 1 else \
            [(fabric.seed, k) for k in range(args.phases)]
        phase_ns = max(1, round_trip_ns(topo) // args.phases)
        for seed, phase in draws:
            seeded = dataclasses.replace(fabric, seed=seed)
            later = phase_ns * phase
            label = name if len(draws) == 1 else f"{name} s{seed}" if args.phases == 1 else f"{name} +{later}ns"
            drawn = _shifted(flows, len(flows.src) - 1, later) if phase else flows
            row = measure(label, topo, drawn, args.rounds, seeded, cfg, args.queue)
            print_row(row)
            out = row.as_dict()
            out["seed"] = seeded.seed
            out["last_flow_later_ns"] = later
            if args.noise > 0:
                out["noise"] = noise(topo, drawn, row.cmp.baseline, args.noise, seeded, cfg)
                print_noise(out["noise"])
            sys.stdout.flush()
            rows.append(out)
            per_seed.append(row)
        if len(per_seed) > 1:
            bias = signed_bias(per_seed)
            print_over_seeds(name, per_seed, bias, "seeds" if args.phases == 1 else "phases")
            rows.append({"scenario": name, "draws": len(per_seed), "by": "seed" if args.phases == 1 else "phase",
                         "signed_bias": {k: {"mean": m, "stderr": se} for k, (m, se) in bias.items()},
                         "makespan_spread": dict(zip(("baseline", "wormhole"), makespan_spreads(per_seed)))})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
