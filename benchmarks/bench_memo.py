"""Memoization on versus off (fast-forward on in both), against the default
kernel, side by side in one run, on repeated-pattern scenarios:

  ring-x8      a 4-GPU ring all-reduce of 256 MB, 8 times in sequence (star, 100G)
  gpt-x2       GPT L=8 h=2048, TP8-DP4-PP2 on a 64-GPU rail-optimized fat-tree, 2 iterations
  incast-x4    an 8-to-1 incast of 16 MB flows, 4 waves 15 ms apart (DCQCN contention)
  incast-x4-step  the same with step ECN marking (kmin = kmax)
  waves-1us, waves-20us, waves-50us  four 4-to-1 waves of 4 MB, step marking, on 1/20/50 us links
  waves-50us-store-1us  waves-50us, the memo store filled first by waves-1us (must not be used)
  dcqcn-x20    20 waves of a 4-to-1 DCQCN incast of 6 MB, 3 ms apart, default (probabilistic) marking
  dcqcn-x20-step  the same with step marking

    python benchmarks/bench_memo.py [--scenario NAME ...] [--noise N] [--seeds K] [--confirmations C]
                                    [--json OUT]

With --noise N the baseline is re-run N times with one flow 1 ns late (flow
scenarios) or one compute delay 1 ns longer (workloads), and its spread around
the unperturbed baseline is printed under the row: the reference's own noise.
With --seeds K (flow scenarios) it is re-run with seeds 2..K+1 instead of 1: the
spread of a reference whose outcome is a random draw. --confirmations C sets
memo_confirmations of the memo run (1: the first occurrence is replayed).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ns3wormhole import run, topology
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.compare import baseline_noise, by_dag_node, fct_errors, workload_noise
from ns3wormhole.flows import FlowSet, incast
from ns3wormhole.workload import DagBuilder, ParallelSpec, Placement, ring_allreduce
from ns3wormhole.workload.dag import KIND_DP_ALLREDUCE, build_dag
from ns3wormhole.workload.models import ParallelSpec as PS, Workload, gpt


def ring_x8():
    b = DagBuilder(Placement(ParallelSpec(dp=4, gpus_per_server=1)))
    done = None
    for it in range(8):
        b.iteration = it
        done = ring_allreduce(b, np.arange(4)[None, :], done, 256_000_000, kind=KIND_DP_ALLREDUCE)
    return topology.star(4, "100Gbps", "1us"), b.build()


def gpt_x2():
    model = gpt("bench", num_layers=8, hidden=2048, heads=16, seq_len=2048, vocab=32000)
    dag = build_dag(Workload(model=model, parallel=PS(tp=8, dp=4, pp=2), iterations=2))
    return topology.rail_optimized(8, 8, "100Gbps", "400Gbps", "1us"), dag


def incast_x4():
    waves = [incast(list(range(8)), 8, 16_000_000, start_ns=k * 15_000_000) for k in range(4)]
    return topology.star(9, "100Gbps", "1us"), FlowSet.concat(waves)


def incast_x4_step():
    """incast-x4 with step ECN marking (kmin = kmax): no longer chaotic."""
    return (*incast_x4(), FabricConfig().with_step_marking())


def waves_4to1(delay_us: int, size: int, count: int, gap_ns: int):
    topo = topology.star(5, "100Gbps", f"{delay_us}us")
    return topo, FlowSet.concat([incast([0, 1, 2, 3], 4, size, start_ns=k * gap_ns) for k in range(count)])


def waves_delay(delay_us: int):
    """Four identical 4-to-1 waves of 4 MB, step marking, on links of one delay."""
    return (*waves_4to1(delay_us, 4_000_000, 4, 8_000_000), FabricConfig().with_step_marking())


def waves_other_store():
    """waves-50us from a store filled by the same waves on 1 us links: must not hit on it."""
    return (*waves_delay(50), waves_4to1(1, 4_000_000, 4, 8_000_000))


def dcqcn_x20(step: bool):
    """20 waves of a 4-to-1 DCQCN incast of 6 MB, 3 ms apart (issue #11)."""
    fabric = FabricConfig().with_step_marking() if step else FabricConfig()
    return (*waves_4to1(1, 6_000_000, 20, 3_000_000), fabric)


SCENARIOS = {"ring-x8": ring_x8, "gpt-x2": gpt_x2, "incast-x4": incast_x4, "incast-x4-step": incast_x4_step,
             "waves-1us": lambda: waves_delay(1), "waves-20us": lambda: waves_delay(20),
             "waves-50us": lambda: waves_delay(50), "waves-50us-store-1us": waves_other_store,
             "dcqcn-x20": lambda: dcqcn_x20(False), "dcqcn-x20-step": lambda: dcqcn_x20(True)}


def execute(topo, work, kernel, cfg=None, fabric=None):
    if isinstance(work, FlowSet):
        r = run.run_flows(topo, work, fabric, kernel=kernel, wormhole=cfg)
        return r, np.array([r.makespan_ns]), r
    r = run.run_workload(topo, work, fabric, kernel=kernel, wormhole=cfg)
    return by_dag_node(r), r.iteration_times_ns, r  # flows matched by DAG node


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", nargs="+", default=list(SCENARIOS), choices=list(SCENARIOS))
    p.add_argument("--noise", type=int, default=0, metavar="N",
                   help="also re-run the baseline N times perturbed by 1 ns (default 0)")
    p.add_argument("--seeds", type=int, default=0, metavar="K",
                   help="also re-run the baseline of flow scenarios with seeds 2..K+1: the reference's seed spread")
    p.add_argument("--confirmations", type=int, default=0, metavar="C",
                   help="memo_confirmations of the memo run (default 0: by the fabric)")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} memo on vs off, fast-forward on in both")
    print(f"{'scenario':<15}{'base wall':>10}{'ff wall':>9}{'ff+memo':>9}{'ff x':>7}{'memo x':>8}{'memo/ff':>8}"
          f"{'ev ff':>8}{'ev memo':>9}{'hits':>6}{'err mean':>10}{'max':>8}{'iter/mk':>9}{'mean FCT':>9}")
    rows = []
    for name in a.scenario:
        topo, work, *rest = SCENARIOS[name]()
        fabric = rest[0] if rest else None
        base, bt, base_run = execute(topo, work, "baseline", None, fabric)
        ff, ft, _ = execute(topo, work, "wormhole", run.WormholeConfig(memo=False), fabric)
        with tempfile.TemporaryDirectory() as tmp:
            memo_cfg = run.WormholeConfig(memo=True, memo_confirmations=a.confirmations)
            if len(rest) > 1:  # a store filled by another scenario first
                memo_cfg = dataclasses.replace(memo_cfg, memo_db=str(Path(tmp) / "memo.sqlite"))
                execute(*rest[1], "wormhole", memo_cfg, fabric)
            memo, mt, _ = execute(topo, work, "wormhole", memo_cfg, fabric)
        err = fct_errors(base, memo)
        it_err = float(np.max(np.abs(mt - bt) / bt))
        row = {
            "scenario": name, "baseline_wall_s": base.wall_s, "ff_wall_s": ff.wall_s, "memo_wall_s": memo.wall_s,
            "ff_speedup": base.wall_s / ff.wall_s, "memo_speedup": base.wall_s / memo.wall_s,
            "memo_over_ff": ff.wall_s / memo.wall_s, "ff_event_ratio": base.events / ff.events,
            "memo_event_ratio": base.events / memo.events, "memo_hits": memo.stats["memo_hits"],
            "memo_misses": memo.stats["memo_misses"], "memo_inserts": memo.stats["memo_inserts"],
            "memo_time_saved_ns": memo.stats["memo_time_saved_ns"],
            "fct_error_mean": float(err.mean()), "fct_error_max": float(err.max()), "iteration_or_makespan_error": it_err,
            "mean_fct_error": float(abs(memo.flows["fct_ns"].mean() - base.flows["fct_ns"].mean())
                                    / base.flows["fct_ns"].mean()),
        }
        rows.append(row)
        print(f"{name:<15}{base.wall_s:>9.2f}s{ff.wall_s:>8.2f}s{memo.wall_s:>8.2f}s{row['ff_speedup']:>6.1f}x"
              f"{row['memo_speedup']:>7.1f}x{row['memo_over_ff']:>7.1f}x{row['ff_event_ratio']:>7.1f}x"
              f"{row['memo_event_ratio']:>8.1f}x{row['memo_hits']:>6}{100 * row['fct_error_mean']:>9.3f}%"
              f"{100 * row['fct_error_max']:>7.2f}%{100 * it_err:>8.3f}%{100 * row['mean_fct_error']:>8.2f}%",
              flush=True)
        for seed in range(2, 2 + a.seeds if isinstance(work, FlowSet) else 0):
            other = run.run_flows(topo, work, dataclasses.replace(fabric or FabricConfig(), seed=seed))
            e = fct_errors(base, other)
            mean = abs(other.flows["fct_ns"].mean() - base.flows["fct_ns"].mean()) / base.flows["fct_ns"].mean()
            print(f"  seed {seed}: baseline with another seed{'':>62}{100 * e.mean():>9.3f}%{100 * e.max():>7.2f}%"
                  f"{100 * abs(other.makespan_ns - base.makespan_ns) / base.makespan_ns:>8.3f}%{100 * mean:>8.2f}%",
                  flush=True)
        if a.noise:
            try:
                noise = (baseline_noise(topo, work, base, a.noise, fabric) if isinstance(work, FlowSet)
                         else workload_noise(topo, work, base_run, a.noise, fabric)[0])
            except ValueError as e:  # a DAG of flows only: nothing to lengthen
                print(f"  noise: not measured ({e})", flush=True)
                continue
            row["baseline_noise"] = noise.as_dict()
            for k in range(a.noise):
                print(f"  noise {k}: baseline perturbed by 1 ns{'':>56}{100 * noise.fct_mean[k]:>9.3f}%"
                      f"{100 * noise.fct_max[k]:>7.2f}%{100 * noise.makespan[k]:>8.3f}%", flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
