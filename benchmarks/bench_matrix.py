"""The accuracy matrix of issue 11 at benchmark sizes: every cell against the
default kernel on the same scenario and seed (link delays x patterns x ECN
marking x memo state), with the reference's own spread beside each error.

    python benchmarks/bench_matrix.py [--size-mb 48] [--delay 1 --delay 50 ...]
        [--pattern lone ...] [--marking step ...] [--memo off ...] [--json OUT]

Columns: FCT error mean / max and makespan error of Wormhole; the bounds the
cell is held to (the targets where the reference is deterministic, else its
spread over reruns with one flow 1 ns late and other seeds); skipped time,
event ratio, memo hits; OK or FAIL.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from ns3wormhole import accuracy_matrix as am

MB = 1_000_000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=48)
    ap.add_argument("--delay", type=int, action="append", help="link delay (us); default: all of the matrix")
    ap.add_argument("--pattern", action="append", choices=list(am.PATTERNS))
    ap.add_argument("--marking", action="append", choices=list(am.MARKINGS))
    ap.add_argument("--memo", action="append", choices=list(am.MEMOS))
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    size = args.size_mb * MB
    rows = []
    failed = 0
    print(f"{'pattern':16s} {'delay':>5s} {'marking':7s} {'memo':11s} {'mean%':>7s} {'max%':>7s} {'span%':>7s}"
          f"   {'bounds (mean/max/span %)':24s} {'skip ms':>8s} {'ev ratio':>8s} {'hits':>4s}")
    t0 = time.time()
    for delay in args.delay or am.DELAYS_US:
        for pattern in args.pattern or am.PATTERNS:
            for marking in args.marking or am.MARKINGS:
                ref = am.reference(am.PATTERNS[pattern](delay, size), am.fabric_of(marking))
                for memo in args.memo or am.MEMOS:
                    c = am.run_cell(pattern, delay, marking, memo, size, ref=ref)
                    failed += not c.within
                    b = "/".join(f"{x * 100:.2f}" for x in c.bounds)
                    print(f"{pattern:16s} {delay:4d}u {marking:7s} {memo:11s} {c.fct.mean * 100:7.3f} "
                          f"{c.fct.max * 100:7.3f} {c.makespan * 100:7.3f}   {b:24s} "
                          f"{c.time_skipped_ns / 1e6:8.2f} {c.event_ratio:8.2f} {c.memo_hits:4d} "
                          f"{'OK' if c.within else 'FAIL'}", flush=True)
                    rows.append({"pattern": pattern, "delay_us": delay, "marking": marking, "memo": memo,
                                 "fct_mean": c.fct.mean, "fct_max": c.fct.max, "makespan": c.makespan,
                                 "bounds": list(c.bounds), "deterministic": c.deterministic,
                                 "time_skipped_ns": c.time_skipped_ns, "event_ratio": c.event_ratio,
                                 "memo_hits": c.memo_hits, "within": c.within})
    print(f"{len(rows) - failed}/{len(rows)} cells within bounds ({time.time() - t0:.0f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size_mb": args.size_mb, "cells": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
