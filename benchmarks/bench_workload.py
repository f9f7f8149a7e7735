"""A training step under both kernels, side by side in one run: a GPT model
with TP8-DP4-PP2 on a 64-GPU rail-optimized fat-tree (8 servers x 8 GPUs,
100G NICs, 400G fabric), one iteration. Prints wall-time and event ratios and
the iteration-time and per-flow FCT errors.

    python benchmarks/bench_workload.py [--layers 8] [--hidden 2048] [--iterations 1] [--preset NAME]
                                        [--noise N] [--json OUT] [--wormhole-only]

``--wormhole-only`` runs Wormhole alone (its events are deterministic: against a fixed baseline
count they give the event ratio) and prints where its events went: the kernel's partition and
why-not lines, and the data frames still simulated packet by packet, by flow kind and size.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from ns3wormhole import run, topology
from ns3wormhole.compare import workload_fct_errors, workload_noise
from ns3wormhole.why_not import partition_summary, why_not_summary
from ns3wormhole.workload.dag import KIND_NAMES, build_dag
from ns3wormhole.workload.models import ParallelSpec, Workload, gpt, preset


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--iterations", type=int, default=1)
    p.add_argument("--preset", default=None,
                   help="a Table 1 preset instead (e.g. gpt-7b on its 64 GPUs); topology sized to it")
    p.add_argument("--noise", type=int, default=0, metavar="N",
                   help="also run the baseline N times with one compute delay 1 ns longer (the k-th, in "
                        "turn) and print how far it moves from itself: the reference's own noise floor")
    p.add_argument("--json", default=None)
    p.add_argument("--wormhole-only", action="store_true",
                   help="no baseline: Wormhole's events, why-not lines and simulated frames by flow kind")
    a = p.parse_args(argv)
    if a.preset:
        work = preset(a.preset, iterations=a.iterations)
        label = a.preset
    else:
        model = gpt("bench", num_layers=a.layers, hidden=a.hidden, heads=16, seq_len=2048, vocab=32000)
        work = Workload(model=model, parallel=ParallelSpec(tp=8, dp=4, pp=2), iterations=a.iterations)
        label = f"gpt L={a.layers} h={a.hidden} TP8-DP4-PP2"
    dag = build_dag(work)
    gpus = work.parallel.tp * work.parallel.dp * work.parallel.pp
    topo = topology.rail_optimized(gpus // 8, 8, "100Gbps", "400Gbps", "1us")
    s = dag.summary()
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {label}, {gpus} GPUs, "
          f"{a.iterations} iteration(s): {s['nodes']} DAG nodes, {s['flows']} flows", flush=True)
    if a.wormhole_only:
        attribute(run.run_workload(topo, dag, kernel="wormhole"), dag)
        return 0
    base = run.run_workload(topo, dag, kernel="baseline")
    worm = run.run_workload(topo, dag, kernel="wormhole")
    b, w = base.network, worm.network
    fct = workload_fct_errors(base, worm)  # flows matched by DAG node
    it = np.abs(worm.iteration_times_ns - base.iteration_times_ns) / base.iteration_times_ns
    row = {
        "baseline_wall_s": b.wall_s, "wormhole_wall_s": w.wall_s, "speedup": b.wall_s / w.wall_s,
        "baseline_events": b.events, "wormhole_events": w.events, "event_ratio": b.events / w.events,
        "iteration_time_error": float(it.max()), "fct_error_mean": float(fct.mean()),
        "fct_error_max": float(fct.max()), "fast_forwards": w.stats["fast_forwards"],
        "iteration_ns": base.iteration_times_ns.tolist(),
    }
    print(f"baseline  wall {b.wall_s:7.2f} s  events {b.events:>12,}  iteration {base.iteration_times_ns.tolist()} ns")
    print(f"wormhole  wall {w.wall_s:7.2f} s  events {w.events:>12,}  iteration {worm.iteration_times_ns.tolist()} ns"
          f"  fast-forwards {w.stats['fast_forwards']}")
    print(f"speedup {row['speedup']:.1f}x  event ratio {row['event_ratio']:.1f}x  iteration-time error "
          f"{100 * row['iteration_time_error']:.4f}%  FCT error mean {100 * row['fct_error_mean']:.4f}% "
          f"max {100 * row['fct_error_max']:.4f}%")
    if a.noise:
        noise, _ = workload_noise(topo, dag, base, a.noise)
        row["baseline_noise"] = noise.as_dict()
        for k in range(a.noise):
            print(f"noise {k}: baseline with compute delay {k} 1 ns longer: iteration-time change "
                  f"{100 * noise.makespan[k]:.4f}%  FCT change mean {100 * noise.fct_mean[k]:.4f}% "
                  f"max {100 * noise.fct_max[k]:.4f}%", flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(row, fh, indent=2)
    return 0


def attribute(worm, dag) -> None:
    """Where Wormhole's events went: every simulated data frame costs about the same handful of
    events (a hop's transmission and arrival, its acknowledgement), so the frames a flow did not
    have credited (``data_packets``) attribute the events to flow kinds and sizes."""
    w = worm.network
    print(f"wormhole  wall {w.wall_s:7.2f} s  events {w.events:>12,}  iteration {worm.iteration_times_ns.tolist()} ns"
          f"  fast-forwards {w.stats['fast_forwards']}  memo hits {w.stats['memo_hits']}")
    print(partition_summary(w.stats))
    print(why_not_summary(w.stats))
    row_of = {int(f): i for i, f in enumerate(w.flows["id"])}
    by: dict[tuple[str, int], list[int]] = {}
    for node in np.nonzero(dag.op == 1)[0]:
        f = w.flows[row_of[int(worm.node_flow_id[node])]]
        acc = by.setdefault((KIND_NAMES[dag.kind[node]], int(f["bytes"])), [0, 0, 0])
        acc[0] += 1
        acc[1] += int(f["data_packets"])
        acc[2] += int(f["credited_bytes"])
    total = sum(v[1] for v in by.values()) or 1
    for (kind, size), (n, frames, credited) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print(f"  {kind:13s} {n:6d} flows of {size:>12,} B: {frames:>10,} frames simulated "
              f"({100 * frames / total:5.1f}%), {100 * credited / (n * size):6.2f}% of bytes credited")


if __name__ == "__main__":
    sys.exit(main())
