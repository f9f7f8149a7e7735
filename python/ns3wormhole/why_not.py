"""One-line summaries of the kernel's account of itself: how the network was
partitioned, and why partitions were not skipped (``stats`` of a Wormhole
run; the fields are documented in the README's JSON tables)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# What each no-skip reason means, in the words the summary prints.
NO_SKIP_LABELS: dict[str, str] = {
    "short": "too short for a steady window",
    "never_steady": "never steady",
    "not_work_conserving": "not work-conserving",
    "near_completion": "too close to a completion",
    "known_join": "a known join too close",
    "drift_limited": "drift-limited",
    "silent": "a flow silent",
    "indexing": "waiting for its links' events to be indexed",
    "slowing": "a flow just cut below what it delivers",
    "rising": "a flow just raised above what it delivers",
}

MEMO_MISS_LABELS: dict[str, str] = {
    "no_record": "no record",
    "unconfirmed": "unconfirmed",
    "disagree": "occurrences disagree",
    "does_not_fit": "records do not fit",
    "refused": "known join inside / too short / links not yet indexed",
}


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3g} ms"


def _by_flows(log2_bins: Sequence[int]) -> str:
    bins = []
    for k, n in enumerate(log2_bins):
        if n:
            lo, hi = 1 << k, (1 << (k + 1)) - 1
            bins.append(f"{lo if lo == hi else f'{lo}-{hi}'}:{n}")
    return " ".join(bins)


def partition_summary(stats: Mapping[str, Any]) -> str:
    """``partitions 412 (at most 37 at once), largest 12 flows / 30 links; by flows 1:300 2-3:80 ...;
    coupled through possible bottlenecks: largest 4 flows; by flows 1:350 2-3:60 ...``

    The second part is what the partitions would be if only links that can be bottlenecks
    for their flows joined them (not acknowledgement-only links, not links their flows
    cannot fill; docs/coupling.md): how much the partitioning leaves on the table."""
    created = int(stats.get("partitions_created", 0))
    if not created:
        return "partitions 0"
    line = (f"partitions {created} (at most {stats.get('partitions_max_alive', 0)} at once), largest "
            f"{stats.get('partition_largest_flows', 0)} flows / {stats.get('partition_largest_links', 0)} links; "
            f"by flows {_by_flows(stats.get('partition_flows_log2', []))}")
    if "coupled_largest_flows" in stats:
        line += (f"; coupled through possible bottlenecks: largest {stats['coupled_largest_flows']} flows; "
                 f"by flows {_by_flows(stats.get('coupled_flows_log2', []))}")
    judged = int(stats.get("transit_judgements", 0)) + int(stats.get("coupling_judgements", 0))
    if judged:
        line += (f"; links judged transit {stats.get('transit_judgements', 0)} of {judged} times, "
                 f"{stats.get('link_kind_changes', 0)} kind changes")
        if stats.get("transit_congested", 0):
            line += f", {stats['transit_congested']} made coupling by their queue"
    return line


def top_no_skip(stats: Mapping[str, Any], n: int = 3) -> list[tuple[str, int, int]]:
    """The ``n`` reasons that held partitions back longest: (reason, partitions, time_ns).
    ``time_ns`` is the simulated time unskipped patterns spent held back by the reason;
    ``partitions`` counts those patterns by the reason they ended with."""
    rows = [(r, int(v.get("partitions", 0)), int(v.get("time_ns", 0)))
            for r, v in stats.get("no_skip", {}).items() if v.get("partitions", 0) or v.get("time_ns", 0)]
    rows.sort(key=lambda x: (-x[2], -x[1], x[0]))
    return rows[:n]


def why_not_summary(stats: Mapping[str, Any], n: int = 3) -> str:
    """``why not skipped: never steady 1.2 ms (5 ended so) (closest: ...), ...; memo misses: ...``"""
    parts = []
    for reason, count, time_ns in top_no_skip(stats, n):
        text = f"{NO_SKIP_LABELS.get(reason, reason)} {_ms(time_ns)} ({count} ended so)"
        closest = stats.get("never_steady_closest") or {}
        if reason == "never_steady" and closest:
            text += (f" (closest: spread {closest['spread_over_theta']:.2f}x, "
                     f"mismatch {closest['mismatch_over_theta']:.2f}x theta)")
        parts.append(text)
    line = "why not skipped: " + (", ".join(parts) if parts else "nothing unskipped")
    misses = sorted(((int(c), r) for r, c in stats.get("memo_miss_reasons", {}).items() if c), reverse=True)
    if misses:
        line += "; memo misses: " + ", ".join(f"{MEMO_MISS_LABELS.get(r, r)} {c}" for c, r in misses[:n])
    return line
