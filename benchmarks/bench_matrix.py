"""The accuracy matrix of issue 11 at benchmark sizes: every cell against the
default kernel on the same scenario and seed (congestion controls x link
delays x patterns x ECN marking x memo state), with the reference's own
spread beside each error.

    python benchmarks/bench_matrix.py [--size-mb 48] [--cc hpcc ...] [--delay 1 --delay 50 ...]
        [--pattern lone ...] [--marking step ...] [--memo off ...] [--json OUT]

Marking is an axis of the controllers ECN moves (DCQCN, DCTCP) only. The
references of controllers that update once per round trip (HPCC, TIMELY,
DCTCP) are also drawn with every joining flow later by parts of a round trip
(``accuracy_matrix.PHASED_CCS``), and HPCC's, which reads the switches' byte
counters in rounded units, with every counter started elsewhere
(``FabricConfig.int_counter_seed``, ``accuracy_matrix.COUNTER_CCS``).

Columns: FCT error mean / max of Wormhole against the reference's run; the
same as judged (``Reference.distance``: where the reference is chaotic, the
mean of Wormhole's errors against each of its runs, the reference's and its
reruns with other seeds, flows 1 ns late, phases or counter starts); its
makespan error (from the reference's run where it is deterministic, else from
the mean makespan of its sample); the bounds the cell is held to (the targets
where the reference is deterministic, else 99% prediction bounds from the
same distance of each of the reference's runs to the others); where it is chaotic, Wormhole's mean signed makespan and
mean-FCT error over the same reruns (the bias check, "!" where it fails);
skipped time, event ratio, memo hits; OK or FAIL (docs/fast-forward.md).
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
    ap.add_argument("--cc", action="append", choices=list(am.CCS),
                    help="congestion control; default: all of the matrix")
    ap.add_argument("--delay", type=int, action="append", help="link delay (us); default: all of the matrix")
    ap.add_argument("--pattern", action="append", choices=list(am.PATTERNS))
    ap.add_argument("--marking", action="append", choices=list(am.MARKINGS))
    ap.add_argument("--memo", action="append", choices=list(am.MEMOS))
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    size = args.size_mb * MB
    rows = []
    failed = 0
    print(f"{'cc':6s} {'pattern':16s} {'delay':>5s} {'marking':7s} {'memo':11s} {'mean%':>7s} {'max%':>7s} "
          f"{'dist mean/max %':>15s} {'span%':>7s}"
          f"   {'bounds (mean/max/span %)':24s} {'bias mk/fct %':>14s} {'skip ms':>8s} {'ev ratio':>8s} {'hits':>4s}")
    t0 = time.time()
    cells = [(cc, delay, pattern, marking) for cc in args.cc or am.CCS for delay in args.delay or am.DELAYS_US
             for pattern in args.pattern or am.PATTERNS for marking in am.markings_of(cc)
             if args.marking is None or marking in args.marking]
    for cc, delay, pattern, marking in cells:
        ref = am.reference(am.PATTERNS[pattern](delay, size), am.fabric_of(marking, cc))
        for memo in args.memo or am.MEMOS:
            c = am.run_cell(pattern, delay, marking, memo, size, ref=ref, cc=cc)
            failed += not c.within
            b = "/".join(f"{x * 100:.2f}" for x in c.bounds)
            bias = "-" if c.bias_makespan is None else "/".join(
                f"{x.mean * 100:+.2f}{'' if x.ok else '!'}" for x in (c.bias_makespan, c.bias_fct))
            print(f"{cc:6s} {pattern:16s} {delay:4d}u {marking:7s} {memo:11s} {c.fct.mean * 100:7.3f} "
                  f"{c.fct.max * 100:7.3f} {c.distance[0] * 100:7.3f}/{c.distance[1] * 100:7.3f} "
                  f"{c.makespan_off * 100:7.3f}   {b:24s} {bias:>14s} "
                  f"{c.time_skipped_ns / 1e6:8.2f} {c.event_ratio:8.2f} {c.memo_hits:4d} "
                  f"{'OK' if c.within else 'FAIL'}", flush=True)
            rows.append({"cc": cc, "pattern": pattern, "delay_us": delay, "marking": marking, "memo": memo,
                         "fct_mean": c.fct.mean, "fct_max": c.fct.max, "distance": list(c.distance),
                         "makespan": c.makespan,
                         "makespan_off": c.makespan_off,
                         "bias_makespan": None if c.bias_makespan is None else c.bias_makespan.errors.tolist(),
                         "bias_fct": None if c.bias_fct is None else c.bias_fct.errors.tolist(),
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
