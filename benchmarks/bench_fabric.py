#!/usr/bin/env python3
"""Speed of the RoCEv2 fabric model under ns-3's default kernel, side by side
with the yardstick (stock ns-3 UDP over one 100G link, ../shared/yardstick beside the
repository unless --yardstick or NS3WH_YARDSTICK says otherwise).

Scenarios (fixed; DCQCN defaults = HPCC run.py dcqcn, 100G, 1000 B payload):

  incast8_64MB       star of 9 hosts, 100 Gbps / 1 us links; hosts 0-7 each send
                     64 MB (decimal) to host 8 at t = 0  (DESIGN.md bench_incast8_64MB)
  leafspine16_perm   4 leaves x 4 hosts, 2 spines, 100G hosts, 400G fabric, 1 us;
                     random permutation (seed 0) of 64 MB flows at t = 0

For each scenario it prints the wall time of Simulator::Run(), events executed,
events per wall second, simulated payload gigabits per wall second and the last
FCT.  The yardstick comparison runs the incast and `udp-p2p --ms=40` alternately
(--rounds times) and prints our wall / yardstick wall per round and the median
(target <= 0.48).  Both walls are the programs' own Simulator::Run() timings.

    python benchmarks/bench_fabric.py [--rounds 3] [--scenario all] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import incast, permutation
from ns3wormhole.run import run_flows
from ns3wormhole.topology import leaf_spine, star

YARDSTICK = Path(os.environ.get("NS3WH_YARDSTICK", Path(__file__).resolve().parents[1] / ".." / "shared" / "yardstick"))
TARGET_RATIO = 0.48
# Reference figures of the HPCC model in SimAI's ns-3 (DESIGN.md), for context.
HPCC_INCAST = {"events": 5_560_000, "last_fct_ms": 46.07, "yardstick_ratio": 0.97}


def scenario(name: str):
    if name == "incast8_64MB":
        return star(9, "100Gbps", "1us"), incast(range(8), 8, "64MB")
    if name == "leafspine16_perm":
        topo = leaf_spine(4, 2, 4, "100Gbps", "400Gbps", "1us")
        return topo, permutation(topo.hosts(), "64MB", seed=0)
    raise SystemExit(f"unknown scenario {name!r}")


SCENARIOS = ("incast8_64MB", "leafspine16_perm")


def run_scenario(name: str) -> dict:
    topo, flows = scenario(name)
    t0 = time.perf_counter()
    r = run_flows(topo, flows, FabricConfig(), kernel="baseline")
    total = time.perf_counter() - t0
    if not r.completed.all():
        raise SystemExit(f"{name}: {int((~r.completed).sum())} flows did not complete")
    payload_bits = int(flows.bytes.sum()) * 8
    return {
        "scenario": name,
        "wall_s": r.wall_s,
        "setup_s": r.setup_s,
        "call_s": total,
        "events": r.events,
        "events_per_s": r.events / r.wall_s,
        "sim_gbit_per_wall_s": payload_bits / 1e9 / r.wall_s,
        "last_fct_ms": r.makespan_ns / 1e6,
        "counters": r.counters,
    }


def build_yardstick(yardstick: Path, out_dir: Path) -> Path:
    proc = subprocess.run(
        [str(yardstick / "build"), sys.executable, str(out_dir)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"yardstick build failed:\n{proc.stderr}")
    return Path(proc.stdout.strip().splitlines()[-1])


def run_yardstick(exe: Path, ms: int) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run([str(exe), f"--ms={ms}"], capture_output=True, text=True, check=True)
    process_s = time.perf_counter() - t0
    m = re.search(r"events (\d+) wall ([0-9.eE+-]+) s", proc.stdout)
    if not m:
        raise SystemExit(f"cannot parse yardstick output: {proc.stdout!r}")
    return {"wall_s": float(m.group(2)), "events": int(m.group(1)), "process_s": process_s}


def print_scenario(res: dict) -> None:
    print(
        f"  {res['scenario']:<18} wall {res['wall_s']:7.3f} s  events {res['events']:>11,}  "
        f"{res['events_per_s'] / 1e6:5.2f} M ev/s  {res['sim_gbit_per_wall_s']:8.1f} sim Gbit/wall s  "
        f"last FCT {res['last_fct_ms']:.3f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="alternating incast/yardstick rounds (default 3)")
    ap.add_argument("--scenario", choices=(*SCENARIOS, "all"), default="all", help="scenario(s) to time")
    ap.add_argument("--json", metavar="OUT", help="write all figures to this JSON file")
    ap.add_argument("--no-yardstick", action="store_true", help="skip the yardstick comparison")
    ap.add_argument("--yardstick-ms", type=int, default=40, help="udp-p2p --ms (default 40)")
    ap.add_argument("--yardstick", type=Path, default=YARDSTICK, metavar="DIR",
                    help="the yardstick's folder (default ../shared/yardstick beside the repository)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")

    names = SCENARIOS if args.scenario == "all" else (args.scenario,)
    report: dict = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "processor": platform.processor()},
        "kernel": "baseline",
        "scenarios": {},
    }
    print(f"ns3-wormhole fabric benchmark, {report['date']}, {os.cpu_count()} CPUs, baseline kernel")

    print("scenarios:")
    for name in names:
        res = run_scenario(name)
        report["scenarios"][name] = res
        print_scenario(res)

    if not args.no_yardstick and "incast8_64MB" in names:
        with tempfile.TemporaryDirectory(prefix="yardstick-") as tmp:
            exe = build_yardstick(args.yardstick, Path(tmp))
            print(f"yardstick: udp-p2p --ms={args.yardstick_ms}, alternating with incast8_64MB, {args.rounds} rounds")
            rounds = []
            for i in range(args.rounds):
                ours = run_scenario("incast8_64MB")
                ys = run_yardstick(exe, args.yardstick_ms)
                ratio = ours["wall_s"] / ys["wall_s"]
                rounds.append({"ours": ours, "yardstick": ys, "ratio": ratio})
                print(
                    f"  round {i + 1}: ours {ours['wall_s']:.3f} s ({ours['events']:,} events)  "
                    f"yardstick {ys['wall_s']:.3f} s ({ys['events']:,} events)  ratio {ratio:.3f}"
                )
        ratios = [r["ratio"] for r in rounds]
        median = statistics.median(ratios)
        report["yardstick"] = {
            "command": f"udp-p2p --ms={args.yardstick_ms}",
            "rounds": rounds,
            "ratio_median": median,
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
            "target": TARGET_RATIO,
            "meets_target": median <= TARGET_RATIO,
            "hpcc_reference": HPCC_INCAST,
        }
        verdict = "meets" if median <= TARGET_RATIO else "MISSES"
        print(
            f"  ours/yardstick wall ratio: median {median:.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}); "
            f"target <= {TARGET_RATIO}: {verdict}  [HPCC/SimAI: {HPCC_INCAST['yardstick_ratio']}x, "
            f"{HPCC_INCAST['events'] / 1e6:.2f} M events, last FCT {HPCC_INCAST['last_fct_ms']} ms]"
        )

    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
