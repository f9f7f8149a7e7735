"""Link failures and recoveries ([[events]]): routes are recomputed, flows move
to surviving paths, flows without one stall and are reported; under the
Wormhole kernel a failure is a known interrupt.

Expected FCTs are computed from the topology by the frame-level tandem model
(tests/test_rdma_physics.py: store-and-forward hops, 48 B headers, 64 B ACKs),
never copied from a run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ns3wormhole.errors import InputError
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet
from ns3wormhole.link_events import LinkEvent, parse_link_events
from ns3wormhole.run import run_flows
from ns3wormhole.topology import Topology, leaf_spine

from test_rdma_physics import path_hops, tandem_fct_ns

G100 = 100_000_000_000


def detour() -> Topology:
    """Hosts 0, 1; switches 2, 3, 4. Link 0: h0-s2, 1: s2-s3 (the short way),
    2: s3-h1, 3: s2-s4 and 4: s4-s3 (the detour, 3 us each). All 100G."""
    return Topology(
        num_nodes=5,
        is_switch=[False, False, True, True, True],
        link_a=[0, 2, 3, 2, 4],
        link_b=[2, 3, 1, 4, 3],
        rate_bps=[G100] * 5,
        delay_ns=[1000, 1000, 1000, 3000, 3000],
    )


FLOW = FlowSet.from_lists([0], [1], ["4MB"], [0])


def test_a_flow_rerouted_at_t_finishes_as_its_new_path_says():
    topo = detour()
    before = run_flows(topo, FLOW, FabricConfig())
    assert before.paths[0] == [0, 1, 2]
    # Link 1 fails at 100 us, a third into the flow: what follows goes the long
    # way. A lone line-rate flow queues nowhere and loses nothing (the frame on
    # the wire at the failure arrives; later ones are routed round), so its
    # last frame and ACK see the new path alone: the tandem model of that path.
    r = run_flows(topo, FLOW, FabricConfig(), link_events=[LinkEvent(100_000, 1, False)])
    assert r.paths[0] == [0, 3, 4, 2]
    assert r.stalled.size == 0
    c = r.counters
    assert c["link_losses"] == 0 and c["retransmitted_packets"] == 0 and c["drops"] == 0
    expected = tandem_fct_ns(4_000_000, 1000, path_hops(topo, [0, 3, 4, 2]))
    assert abs(int(r.flows["fct_ns"][0]) - expected) <= 8, (int(r.flows["fct_ns"][0]), expected)
    # ... which is the old path's FCT plus the detour's extra delay, twice (data
    # and ACK), and one more store-and-forward hop for the last frame and its ACK.
    assert int(r.flows["fct_ns"][0]) - int(before.flows["fct_ns"][0]) == pytest.approx(
        2 * (3000 + 3000 - 1000) + 1048 * 8 / 100 + 64 * 8 / 100, abs=8)


def test_reroute_under_wormhole_is_within_the_accuracy_bounds():
    topo = detour()
    events = [LinkEvent(100_000, 1, False)]
    base = run_flows(topo, FLOW, FabricConfig(), "baseline", link_events=events)
    worm = run_flows(topo, FLOW, FabricConfig(), "wormhole", link_events=events)
    assert worm.paths == base.paths
    b, w = base.flows["fct_ns"].astype(float), worm.flows["fct_ns"].astype(float)
    assert np.all(w > 0)
    assert abs(w.mean() - b.mean()) <= 0.01 * b.mean()
    assert abs(worm.makespan_ns - base.makespan_ns) <= 0.01 * base.makespan_ns
    # The kernel did skip (a lone line-rate flow is steady at once), so the
    # bound is met with the failure inside the run, not by running everything.
    assert sum(worm.flow_time_skipped_ns.values()) > 0
    # ... and the failure was a known interrupt: a skip ended exactly there.
    assert worm.stats["skips_to_known_start"] >= 1


def test_ecmp_flows_move_to_the_surviving_spine():
    # 2 leaves x 2 spines, 4 hosts a leaf; every host of leaf 0 sends to one of leaf 1.
    topo = leaf_spine(2, 2, 4, "100Gbps", "100Gbps", "1us")
    flows = FlowSet.from_lists([0, 1, 2, 3], [4, 5, 6, 7], ["2MB"] * 4, [0] * 4)
    clean = run_flows(topo, flows, FabricConfig())
    uplinks = [i for i in range(topo.num_links) if topo.is_switch[topo.link_a[i]] and topo.is_switch[topo.link_b[i]]]
    used = {link for p in clean.paths for link in p if link in uplinks}
    failed = sorted(used)[0]
    r = run_flows(topo, flows, FabricConfig(), link_events=[LinkEvent(50_000, failed, False)])
    assert np.all(r.flows["finish_ns"] >= 0) and r.stalled.size == 0
    assert all(failed not in p for p in r.paths)
    # Every byte arrived exactly once as new data (go-back-N resends the rest).
    new = r.flows["data_packets"] - r.flows["retransmitted_packets"]
    assert np.array_equal(new, np.full(4, 2000))


def test_a_flow_with_no_alternative_stalls_and_is_reported():
    topo = detour()
    # Link 0 is host 0's only link: nothing else can carry the flow.
    r = run_flows(topo, FLOW, FabricConfig(), stop_ns=5_000_000, link_events=[LinkEvent(100_000, 0, False)])
    assert r.flows["finish_ns"][0] < 0
    assert r.stalled.tolist() == [0]
    # It comes back at 1 ms: go-back-N (retransmit timeout) resends what was lost.
    events = [LinkEvent(100_000, 0, False), LinkEvent(1_000_000, 0, True)]
    r2 = run_flows(topo, FLOW, FabricConfig(), link_events=events)
    assert r2.flows["finish_ns"][0] > 1_000_000 and r2.stalled.size == 0
    assert r2.counters["link_losses"] > 0 and r2.counters["timeouts"] > 0
    new = r2.flows["data_packets"] - r2.flows["retransmitted_packets"]
    assert new.tolist() == [4000]


def test_same_events_same_seed_same_results_under_both_kernels_twice():
    topo = leaf_spine(2, 2, 2, "100Gbps", "100Gbps", "1us")
    flows = FlowSet.from_lists([0, 1], [2, 3], ["1MB", "1MB"], [0, 0])
    events = [LinkEvent(20_000, 4, False), LinkEvent(60_000, 4, True)]
    for kernel in ("baseline", "wormhole"):
        a = run_flows(topo, flows, FabricConfig(), kernel, link_events=events)
        b = run_flows(topo, flows, FabricConfig(), kernel, link_events=events)
        assert np.array_equal(a.flows, b.flows) and a.counters == b.counters


def test_parse_events_and_errors(tmp_path: Path):
    topo = detour()
    ev = parse_link_events([{"time": "100us", "link": 1, "action": "down"},
                            {"time": 200_000, "nodes": [4, 2], "action": "up"}], topo)
    assert ev == (LinkEvent(100_000, 1, False), LinkEvent(200_000, 3, True))
    bad = [
        ({"time": "1us", "link": 9, "action": "down"}, r"events\[0\]\.link: unknown link 9"),
        ({"time": "1us", "nodes": [0, 1], "action": "down"}, r"events\[0\]\.nodes: nodes 0 and 1: no link joins them"),
        ({"time": "1us", "link": 1, "action": "off"}, r"events\[0\]\.action: must be 'down' or 'up'"),
        ({"time": "1us", "link": 1, "nodes": [2, 3], "action": "up"}, r"events\[0\]: give exactly one of link"),
        ({"link": 1, "action": "up"}, r"events\[0\]\.time: missing"),
        ({"time": "1us", "link": 1, "action": "up", "when": 2}, r"events\[0\]\.when: unknown key"),
    ]
    for entry, message in bad:
        with pytest.raises(InputError, match=message):
            parse_link_events([entry], topo)
    # In a scenario file: a clear one-line error naming the key.
    from ns3wormhole.scenario import load_scenario

    path = tmp_path / "s.toml"
    path.write_text("""
stop = "5ms"
[topology]
kind = "star"
n_hosts = 3
[workload]
kind = "flows"
pattern = "incast"
bytes = "1MB"
[[events]]
time = "10us"
link = 7
action = "down"
""")
    with pytest.raises(InputError, match=r"events\[0\]\.link: unknown link 7"):
        load_scenario(path)
    path.write_text(path.read_text().replace("link = 7", "link = 1"))
    sc = load_scenario(path)
    assert sc.link_events == (LinkEvent(10_000, 1, False),)
    r = sc.run("baseline")
    # Host 1's link is down from 10 us to the end: its flow stalls, the other finishes.
    assert r.stalled.tolist() == [int(r.flows["id"][r.flows["src"] == 1][0])]
