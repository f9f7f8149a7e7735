"""Wormhole kernel against ns-3's default kernel, side by side in one run, on
large-flow scenarios: wall-time ratio, executed-event ratio, FCT errors.

    python benchmarks/bench_kernel.py [--mb 256] [--scenario NAME ...] [--noise N] [--step-marking]
                                      [--memo-direct-steady] [--warm-from-mb M] [--warm N] [--json OUT]

With --noise N, each scenario's baseline is also re-run N times with one flow
(the k-th, in turn) starting 1 ns later, and the spread of those runs around
the unperturbed baseline is printed under the row: the reference's own noise
floor, which no method that moves packets in time can be expected to beat.
With --warm N, Wormhole runs N more times on a memo store its earlier runs
filled (a temporary SQLite file), each printed against the same baseline;
with --warm-from-mb M the store is first filled by one run of the scenario
with M MB flows (a different, smaller run).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

from ns3wormhole import scenarios
from ns3wormhole.compare import Comparison, baseline_noise, compare_flows
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.run import WormholeConfig, run_flows

DEFAULT = ["incast8", "staggered4", "permutation16", "long_and_short", "lone"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=256, help="flow size in MB (decimal) (default 256)")
    parser.add_argument("--scenario", nargs="+", default=DEFAULT, choices=sorted(scenarios.SCENARIOS))
    parser.add_argument("--theta", type=float, default=None, help="override the kernel's theta")
    parser.add_argument("--max-extrapolation", type=float, default=None, help="override MaxExtrapolation")
    parser.add_argument("--noise", type=int, default=0, metavar="N",
                        help="also run the baseline N times with one flow 1 ns late (default 0)")
    parser.add_argument("--step-marking", action="store_true",
                        help="ECN marks every frame above kmax (kmin = kmax) instead of with a probability "
                             "rising from kmin: DCQCN incasts then stop being chaotic")
    parser.add_argument("--memo-direct-steady", action="store_true",
                        help="after a memo hit of a steady record go on at its rates (MemoDirectSteady)")
    parser.add_argument("--warm-from-mb", type=int, default=0, metavar="M",
                        help="before each comparison, run Wormhole once on the same scenario with M MB flows "
                             "to fill a memo store the comparison then uses (not timed)")
    parser.add_argument("--warm", type=int, default=0, metavar="N",
                        help="then run Wormhole N more times on a memo store the earlier runs filled")
    parser.add_argument("--json", default=None, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    fabric = FabricConfig()
    if args.step_marking:
        fabric = fabric.with_step_marking()
    overrides = {}
    if args.theta is not None:
        overrides["theta"] = args.theta
    if args.max_extrapolation is not None:
        overrides["max_extrapolation"] = args.max_extrapolation
    if args.memo_direct_steady:
        overrides["memo_direct_steady"] = True
    store = tempfile.TemporaryDirectory() if args.warm or args.warm_from_mb else None
    if store:
        overrides["memo_db"] = str(Path(store.name) / "memo.sqlite")
    cfg = WormholeConfig(**overrides)

    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.node()} python {platform.python_version()} "
          f"flows {args.mb} MB, {'step' if args.step_marking else 'probabilistic'} ECN marking, wormhole {cfg}")
    header = (f"{'scenario':<16}{'base wall':>10}{'worm wall':>10}{'speedup':>9}{'base ev':>12}{'worm ev':>11}"
              f"{'ev ratio':>9}{'ff':>5}{'fct err mean':>13}{'max':>8}{'makespan':>9}")
    print(header)
    rows = []
    def report(label: str, cmp: Comparison) -> dict:
        err = cmp.fct_error
        print(f"{label:<16}{cmp.baseline.wall_s:>9.3f}s{cmp.wormhole.wall_s:>9.3f}s{cmp.speedup:>8.1f}x"
              f"{cmp.baseline.events:>12,}{cmp.wormhole.events:>11,}{cmp.event_ratio:>8.1f}x"
              f"{cmp.wormhole.stats['fast_forwards']:>5}{100 * err.mean:>12.3f}%{100 * err.max:>7.2f}%"
              f"{100 * cmp.makespan_error:>8.3f}%", flush=True)
        return {
            "baseline_wall_s": cmp.baseline.wall_s, "wormhole_wall_s": cmp.wormhole.wall_s,
            "speedup": cmp.speedup, "baseline_events": cmp.baseline.events,
            "wormhole_events": cmp.wormhole.events, "event_ratio": cmp.event_ratio,
            "fast_forwards": cmp.wormhole.stats["fast_forwards"], "memo_hits": cmp.wormhole.stats["memo_hits"],
            "fct_error": err.as_dict(), "makespan_error": cmp.makespan_error,
        }

    for name in args.scenario:
        topo, flows = scenarios.SCENARIOS[name](args.mb * 1_000_000)
        if args.warm_from_mb:
            small_topo, small = scenarios.SCENARIOS[name](args.warm_from_mb * 1_000_000)
            run_flows(small_topo, small, fabric, "wormhole", cfg, check=False)
        cmp = compare_flows(topo, flows, fabric, wormhole=cfg)
        row = {"scenario": name, "flow_mb": args.mb, "step_marking": args.step_marking, **report(name, cmp)}
        rows.append(row)
        row["warm"] = [
            report(f"  warm {k + 1}",
                   Comparison(cmp.baseline, run_flows(topo, flows, fabric, "wormhole", cfg, check=False)))
            for k in range(args.warm)
        ]
        if args.noise:
            noise = baseline_noise(topo, flows, cmp.baseline, args.noise, fabric)
            row["baseline_noise"] = noise.as_dict()
            for k in range(args.noise):
                print(f"{'  noise ' + str(k):<16}{'baseline with flow ' + str(k % len(flows.src)) + ' 1 ns late':>72}"
                      f"{100 * noise.fct_mean[k]:>12.3f}%{100 * noise.fct_max[k]:>7.2f}%"
                      f"{100 * noise.makespan[k]:>8.3f}%", flush=True)
    print("paper class for reference: 744x on a GPT-13B step over 128 GPUs (one core)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
