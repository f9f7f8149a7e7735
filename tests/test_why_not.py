"""Why not faster (docs/why-not.md): the kernel books each unskipped contention
pattern under the reason that held it back, and counts partition sizes. Each
scenario here has a reason known by construction; the tests assert that it is
the top one, not how many patterns or nanoseconds it holds."""

from __future__ import annotations

import json

from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet, incast
from ns3wormhole.run import RunResult, WormholeConfig, run_flows
from ns3wormhole.topology import leaf_spine, star
from ns3wormhole.why_not import partition_summary, top_no_skip, why_not_summary

from test_cli import SMALL, cli, write

MB = 1_000_000


def wormhole(topo, flows, fabric: FabricConfig | None = None) -> RunResult:
    return run_flows(topo, flows, fabric or FabricConfig(), "wormhole", WormholeConfig())


def top_by_time(stats: dict) -> str:
    return top_no_skip(stats, 1)[0][0]


def top_by_patterns(stats: dict) -> str:
    no_skip = stats["no_skip"]
    return max(no_skip, key=lambda r: no_skip[r]["partitions"])


def test_lone_short_flow_never_fills_a_window():
    # 300 KB at line rate is ~300 acknowledgements; a lone flow's window needs
    # Window/4 samples of Window/8 acknowledgements each (750 at the default 2000).
    st = wormhole(star(2), FlowSet.from_lists([0], [1], [300_000])).stats
    assert st["fast_forwards"] == 0
    assert top_by_time(st) == "short" and top_by_patterns(st) == "short"
    assert "too short for a steady window" in why_not_summary(st)


def test_lone_flow_steady_too_close_to_its_end():
    # 1 MB fills its window at ~750 KB: steady then, with less left than the
    # in-flight bytes, the completion margin and MinSkip at line rate.
    st = wormhole(star(2), FlowSet.from_lists([0], [1], [1 * MB])).stats
    assert st["fast_forwards"] == 0
    assert top_by_patterns(st) == "near_completion"
    assert st["no_skip"]["near_completion"]["time_ns"] > 0


def test_dcqcn_incast_with_probabilistic_marking_is_never_steady():
    # Two flows into one port with marking rising from kmin to kmax: DCQCN's
    # per-flow rates wander by more than theta for as long as both run.
    res = wormhole(star(3), incast([0, 1], 2, 16 * MB))
    st = res.stats
    assert st["fast_forwards"] == 0
    assert top_by_time(st) == "never_steady" and top_by_patterns(st) == "never_steady"
    closest = st["never_steady_closest"]
    # Unsteady means the larger of the two measures reached theta.
    assert closest is not None and max(closest["spread_over_theta"], closest["mismatch_over_theta"]) >= 1
    assert "never steady" in why_not_summary(st) and "closest" in why_not_summary(st)


def test_flow_ramping_after_a_departure_is_not_work_conserving():
    # A 4 MB flow leaves a 32 MB one sharing its receiver's port: DCQCN's
    # additive increase climbs back to line rate over milliseconds, in steps
    # too small for the window to see; the kernel must not skip the climb.
    st = wormhole(star(3), FlowSet.from_lists([0, 1], [2, 2], [32 * MB, 4 * MB])).stats
    assert st["fast_forwards"] == 0
    assert top_by_time(st) == "not_work_conserving"


def test_memo_miss_reasons_account_for_every_miss():
    st = wormhole(star(5), incast([0, 1, 2, 3], 4, 4 * MB)).stats
    assert st["memo_misses"] > 0
    assert sum(st["memo_miss_reasons"].values()) == st["memo_misses"]
    assert set(st["memo_miss_reasons"]) == {"no_record", "unconfirmed", "disagree", "does_not_fit", "refused"}


def test_partition_sizes():
    # Two lone pairs and a 2-to-1 incast, all at once: three partitions of
    # one, one and two flows.
    flows = FlowSet.from_lists([0, 2, 4, 5], [1, 3, 6, 6], [2 * MB] * 4)
    st = wormhole(star(8), flows).stats
    assert st["partitions_created"] == 3 and st["partitions_max_alive"] == 3
    assert st["partition_largest_flows"] == 2 and st["partition_largest_links"] >= 2
    assert st["partition_flows_log2"] == [2, 1]
    assert sum(st["partition_flows_log2"]) == st["partitions_created"]


def coupling(topo, flows, decouple: bool = False) -> tuple[int, int]:
    """(largest partition, largest group coupled through possible bottlenecks), in flows:
    the statistic is measured on partitions as Definition 1 draws them (decouple off)."""
    st = run_flows(topo, flows, FabricConfig(), "wormhole", WormholeConfig(decouple_transit=decouple)).stats
    assert sum(st["coupled_flows_log2"]) == st["partitions_created"]
    assert "coupled through possible bottlenecks" in partition_summary(st)
    return st["partition_largest_flows"], st["coupled_largest_flows"]


def test_acknowledgements_do_not_couple():
    # A->B and B->A share both cables, each flow's data going one way and the
    # other's acknowledgements the same way: one partition, no contention.
    assert coupling(star(2), FlowSet.from_lists([0, 1], [1, 0], [2 * MB] * 2)) == (2, 1)
    # Into one port: they do contend.
    assert coupling(star(3), incast([0, 1], 2, 2 * MB)) == (2, 2)


def test_a_link_its_flows_cannot_fill_does_not_couple():
    # Two 100G flows from leaf 0 to leaf 1 over one spine share its uplink:
    # at 400G they cannot fill it; at 100G they must share it.
    flows = FlowSet.from_lists([0, 1], [2, 3], [2 * MB] * 2)
    assert coupling(leaf_spine(2, 1, 2, "100Gbps", "400Gbps"), flows) == (2, 1)
    assert coupling(leaf_spine(2, 1, 2, "100Gbps", "100Gbps"), flows) == (2, 2)
    # With transit links decoupled (the default) the partitions follow it.
    assert coupling(leaf_spine(2, 1, 2, "100Gbps", "400Gbps"), flows, decouple=True) == (1, 1)
    assert coupling(leaf_spine(2, 1, 2, "100Gbps", "100Gbps"), flows, decouple=True) == (2, 2)


def test_skipped_patterns_are_not_booked():
    # A lone 16 MB flow is fast-forwarded: its only pattern was skipped, so
    # nothing is booked, not even the time before its window filled.
    st = wormhole(star(2), FlowSet.from_lists([0], [1], [16 * MB])).stats
    assert st["fast_forwards"] >= 1
    assert all(v == {"partitions": 0, "time_ns": 0} for v in st["no_skip"].values())
    assert why_not_summary(st).startswith("why not skipped: nothing unskipped")


def test_cli_prints_and_writes_why_not(tmp_path):
    p = write(tmp_path, SMALL)
    out = tmp_path / "run.json"
    r = cli("run", p, "--kernel", "wormhole", "--json", out)
    assert r.returncode == 0, r.stderr
    assert "why not skipped:" in r.stdout and "partitions " in r.stdout
    st = json.loads(out.read_text())["stats"]
    assert set(st["no_skip"]) == {"short", "never_steady", "not_work_conserving", "near_completion", "known_join",
                                  "drift_limited", "silent", "indexing", "slowing", "rising"}
    assert st["partitions_created"] >= 1 and sum(st["partition_flows_log2"]) == st["partitions_created"]

    out = tmp_path / "cmp.json"
    r = cli("compare", p, "--json", out)
    assert r.returncode == 0, r.stderr
    assert "wormhole why not skipped:" in r.stdout and "wormhole partitions " in r.stdout
    assert "no_skip" in json.loads(out.read_text())["wormhole"]["stats"]


def test_baseline_has_no_why_not():
    res = run_flows(star(2), FlowSet.from_lists([0], [1], [300_000]), FabricConfig(), "baseline")
    assert set(res.stats) == {"events_executed"}


def test_deferred_memo_key_changes_nothing(tmp_path):
    """Back-off: with an empty memo store a pattern is recorded without its
    key, which is built only if the pattern is stored. A store holding
    records of another fabric (10 us links: never isomorphic here) makes
    every lookup happen; results and stored records must be the same."""
    from ns3wormhole import _core, scenarios
    from ns3wormhole.memo import MemoDatabase, scope_of

    db = tmp_path / "memo.sqlite"
    fabric, lazy_cfg, eager_cfg = FabricConfig(), WormholeConfig(), WormholeConfig(memo_db=str(db))
    run_flows(star(4, "100Gbps", "10us"), incast([0, 1, 2], 3, 4 * MB), fabric, "wormhole", eager_cfg)
    scope = scope_of(fabric.to_ns3_attributes(), eager_cfg.to_ns3_attributes())
    with MemoDatabase(db) as d:
        before = set(d.load(scope))
    assert before

    topo, flows = scenarios.staggered4(8 * MB)
    lazy = run_flows(topo, flows, fabric, "wormhole", lazy_cfg)
    lazy_records = set(_core.memo_take_new())
    eager = run_flows(topo, flows, fabric, "wormhole", eager_cfg)
    with MemoDatabase(db) as d:
        eager_records = set(d.load(scope)) - before

    assert lazy.stats["memo_keys_deferred"] > 0 and eager.stats["memo_keys_deferred"] == 0
    assert eager.stats["memo_hits"] == 0 and lazy.stats["memo_inserts"] > 0
    assert lazy.events == eager.events
    assert (lazy.flows["fct_ns"] == eager.flows["fct_ns"]).all()
    assert lazy_records == eager_records
