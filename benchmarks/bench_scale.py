"""Training steps too large for the baseline: Wormhole alone on a Table 1 preset at its GPU
count (gpt-175b and moe-32x22b: 1024 GPUs), with wall time, events and peak memory, and the
baseline's events estimated from a baseline run stopped early.

    python benchmarks/bench_scale.py [--preset gpt-175b moe-32x22b] [--fraction 0.02] [--json OUT]
    python benchmarks/bench_scale.py --preset gpt-7b --validate   # the estimator against a full baseline
    python benchmarks/bench_scale.py --wormhole-only              # no baseline: after a kernel change
                                                                  # (the baseline kernel's events stand)
    python benchmarks/bench_scale.py --preset moe-32x22b --stop-ms 100   # Wormhole alone, the first 100 ms
                                                                  # of the step only (partial: a step too
                                                                  # long for one session)

How the baseline's events are estimated. A packet-level baseline spends a nearly fixed number of
events per data packet it carries (the packet's hops, its ACK's hops, the NIC's pacing and CC
timers), whatever the packet belongs to; compute delays cost two events each. So

    events(full run) ~= events(stopped at T) x packets(whole DAG) / packets(sent by T)

where packets(whole DAG) is sum over flow nodes of ceil(bytes / payload) and packets(sent by T)
is the sum of every flow's ``data_packets`` in the stopped run. T is chosen from Wormhole's own
timeline (accurate to well under 1%) as the time by which a given fraction of the DAG's bytes has
finished, so the stopped run covers communication, not only a compute phase. The mix of flow
kinds (and so of hop counts) up to T is not exactly the whole step's: `--validate` measures what
that costs on a preset small enough for a full baseline run.

Each preset runs in its own process so that its peak RSS is its own."""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time

import numpy as np

PAYLOAD_BYTES = 1000  # FabricConfig's default MTU payload (HPCC run.py)


def _setup(name: str):
    from ns3wormhole import topology
    from ns3wormhole.workload.dag import build_dag
    from ns3wormhole.workload.models import preset

    work = preset(name)
    dag = build_dag(work)
    gpus = work.parallel.tp * work.parallel.dp * work.parallel.pp
    return dag, topology.rail_optimized(gpus // 8, 8, "100Gbps", "400Gbps", "1us"), gpus


def _stop_time(worm, dag, fraction: float) -> int:
    """The time by which ``fraction`` of the DAG's flow bytes had finished under Wormhole."""
    flow = dag.op == 1
    end = worm.node_end_ns[flow]
    order = np.argsort(end)
    done = np.cumsum(dag.bytes[flow][order].astype(np.float64))
    k = int(np.searchsorted(done, fraction * done[-1]))
    return int(end[order][min(k, len(order) - 1)])


def one(name: str, fraction: float, validate: bool, wormhole_only: bool = False, stop_ms: float | None = None) -> dict:
    from ns3wormhole import run

    dag, topo, gpus = _setup(name)
    flow = dag.op == 1
    packets_total = int(np.ceil(dag.bytes[flow].astype(np.float64) / PAYLOAD_BYTES).sum())
    stop_ns = None if stop_ms is None else round(stop_ms * 1e6)
    worm = run.run_workload(topo, dag, kernel="wormhole", stop_ns=stop_ns or 0)  # 0: the whole step
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    w = worm.network
    row = {
        "preset": name, "gpus": gpus, "flows": int(flow.sum()), "packets": packets_total,
        "wormhole_wall_s": w.wall_s, "wormhole_events": w.events, "wormhole_peak_rss_mib": peak_mib,
        "iteration_ns": worm.iteration_times_ns.tolist(), "fast_forwards": w.stats["fast_forwards"],
    }
    if stop_ns is not None:
        # A partial step: how far it got, in the DAG's own terms.
        end = worm.node_end_ns[flow]
        row |= {
            "stopped_at_ns": stop_ns,
            "flows_finished": int(((end > 0) & (end <= stop_ns)).sum()),
            "packets_simulated": int(w.flows["data_packets"].sum()),
            "bytes_finished": float(dag.bytes[flow][(end > 0) & (end <= stop_ns)].astype(np.float64).sum()),
            "bytes_total": float(dag.bytes[flow].astype(np.float64).sum()),
        }
    if wormhole_only or stop_ns is not None:
        return row
    stop_ns = _stop_time(worm, dag, fraction)
    t0 = time.perf_counter()
    early = run.run_workload(topo, dag, kernel="baseline", stop_ns=stop_ns)
    early_wall = time.perf_counter() - t0
    packets_early = int(early.network.flows["data_packets"].sum())
    estimate = early.network.events * packets_total / max(packets_early, 1)
    row |= {
        "stop_ns": stop_ns, "stopped_baseline_events": early.network.events,
        "stopped_baseline_packets": packets_early, "stopped_baseline_wall_s": early_wall,
        "baseline_events_estimate": estimate, "event_ratio_estimate": estimate / w.events,
        "baseline_wall_estimate_s": early_wall * packets_total / max(packets_early, 1),
    }
    if validate:
        full = run.run_workload(topo, dag, kernel="baseline")
        row["baseline_events"] = full.network.events
        row["baseline_wall_s"] = full.network.wall_s
        row["estimate_error"] = estimate / full.network.events - 1
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", nargs="+", default=["gpt-175b", "moe-32x22b"])
    p.add_argument("--fraction", type=float, default=0.02,
                   help="stop the baseline when this share of the DAG's bytes has finished (default 0.02)")
    p.add_argument("--validate", action="store_true",
                   help="also run the full baseline and print the estimator's error")
    p.add_argument("--wormhole-only", action="store_true",
                   help="no stopped baseline: Wormhole's wall, events and peak memory only")
    p.add_argument("--stop-ms", type=float, default=None, metavar="MS",
                   help="Wormhole alone, stopped at this simulated time (ms): a partial step, for presets "
                        "whose whole step does not fit a session; prints how far it got")
    p.add_argument("--json", default=None)
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)  # child process: one preset
    a = p.parse_args(argv)
    if not 0 < a.fraction <= 1:
        p.error(f"--fraction must be in (0, 1], got {a.fraction}")
    if a.validate and a.wormhole_only:
        p.error("--validate runs the full baseline; --wormhole-only runs none")
    if a.stop_ms is not None and not a.stop_ms > 0:
        p.error(f"--stop-ms must be a positive number of milliseconds, got {a.stop_ms}")
    if a.stop_ms is not None and a.validate:
        p.error("--stop-ms runs a partial step under Wormhole alone; --validate needs whole steps")
    if a.one:
        print(json.dumps(one(a.one, a.fraction, a.validate, a.wormhole_only, a.stop_ms)))
        return 0
    rows = []
    stopped = ("no baseline" if a.wormhole_only or a.stop_ms is not None
               else f"baseline stopped at {a.fraction:.0%} of the bytes")
    if a.stop_ms is not None:
        stopped += f", Wormhole stopped at {a.stop_ms:g} ms (partial steps)"
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} Wormhole alone, {stopped}")
    for name in a.preset:
        cmd = [sys.executable, __file__, "--one", name, "--fraction", str(a.fraction)]
        if a.validate:
            cmd.append("--validate")
        if a.wormhole_only:
            cmd.append("--wormhole-only")
        if a.stop_ms is not None:
            cmd += ["--stop-ms", repr(a.stop_ms)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{name}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
            return 1
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(r)
        if a.stop_ms is not None:
            print(f"{name:<11} {r['gpus']:>5} GPUs {r['flows']:>7,} flows  wormhole {r['wormhole_wall_s']:8.2f} s "
                  f"{r['wormhole_events']:>12,} events  peak {r['wormhole_peak_rss_mib']:,.0f} MiB  "
                  f"stopped at {r['stopped_at_ns'] / 1e6:g} ms: {r['flows_finished']:,} of {r['flows']:,} flows "
                  f"({100 * r['bytes_finished'] / max(r['bytes_total'], 1):.2f}% of the bytes) finished, "
                  f"{r['packets_simulated']:,} of {r['packets']:,} packets simulated")
            sys.stdout.flush()
            continue
        print(f"{name:<11} {r['gpus']:>5} GPUs {r['flows']:>7,} flows  wormhole {r['wormhole_wall_s']:8.2f} s "
              f"{r['wormhole_events']:>12,} events  peak {r['wormhole_peak_rss_mib']:,.0f} MiB  "
              f"iteration {r['iteration_ns'][0] / 1e6:.3f} ms")
        if a.wormhole_only:
            sys.stdout.flush()
            continue
        print(f"{'':<11} baseline stopped at {r['stop_ns'] / 1e6:.3f} ms: {r['stopped_baseline_events']:,} events, "
              f"{r['stopped_baseline_packets']:,} of {r['packets']:,} packets, {r['stopped_baseline_wall_s']:.1f} s "
              f"-> estimate {r['baseline_events_estimate']:,.0f} events ({r['event_ratio_estimate']:.0f}x), "
              f"~{r['baseline_wall_estimate_s'] / 60:.0f} min wall")
        if a.validate:
            print(f"{'':<11} full baseline {r['baseline_events']:,} events in {r['baseline_wall_s']:.1f} s: "
                  f"estimate off by {100 * r['estimate_error']:+.1f}%")
        sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
