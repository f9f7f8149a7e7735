"""Transit links (docs/coupling.md): flows join one partition only over links
that can be a bottleneck for them. Two groups of flows that share only
fabric links their data cannot fill are separate partitions, skipped each on
its own; a frame of one crossing such a link is moved by its own group's
skips. These cases hold that to the baseline kernel where the reference is
deterministic (DCTCP's step marking; flows at line rate): a flow started
1 ns late moves no FCT by more than 0.003%, so the bounds are the soundness
issue's tight ones: mean FCT error <= 1%, makespan <= 0.5%, and 0.1% per
flow where the kernel skips whole line-rate periods."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole import run
from ns3wormhole.flows import FlowSet
from ns3wormhole.run import FabricConfig, WormholeConfig
from ns3wormhole.topology import leaf_spine
from ns3wormhole.why_not import partition_summary

MB = 1_000_000
# Two leaves of six 100G hosts under one 400G spine: every flow between the
# leaves crosses the same two fabric links.
TOPO = leaf_spine(2, 1, 6, "100Gbps", "400Gbps", "1us")
# DCTCP: an incast converges to a deterministic steady state (DCQCN's
# probabilistic marks make it chaotic, and with step marking a 2-to-1 DCQCN
# incast never turns steady).
FABRIC = FabricConfig(cc="dctcp")


def two_incasts(offset_ns: int) -> FlowSet:
    # 0,1 -> 6 and 2,3 -> 7: each incast is held to 100G by its receiver, so
    # 200G of the 400G fabric links in all: below capacity.
    return FlowSet.from_lists([0, 1, 2, 3], [6, 6, 7, 7], [24 * MB, 24 * MB, 16 * MB, 16 * MB],
                              [0, 0, offset_ns, offset_ns])


def errors(base, worm) -> tuple[np.ndarray, float]:
    assert base.completed.all() and worm.completed.all()
    b = np.sort(base.flows, order="id")
    w = np.sort(worm.flows, order="id")
    err = 100 * np.abs(w["fct_ns"].astype(float) - b["fct_ns"]) / b["fct_ns"]
    end_b = (b["start_ns"] + b["fct_ns"]).max()
    end_w = (w["start_ns"] + w["fct_ns"]).max()
    return err, 100 * abs(float(end_w) - float(end_b)) / float(end_b)


@pytest.mark.parametrize("offset_us", [0, 37, 161, 420])
def test_incasts_sharing_only_below_capacity_links_are_skipped_apart(offset_us):
    flows = two_incasts(offset_us * 1000)
    base = run.run_flows(TOPO, flows, fabric=FABRIC, kernel="baseline")
    worm = run.run_flows(TOPO, flows, fabric=FABRIC, kernel="wormhole")
    # The groups were apart (no partition held more than one incast), their
    # frames crossed the shared links under their own flows, and they skipped.
    assert worm.stats["partition_largest_flows"] == 2
    assert worm.stats["transit_frames_filed"] > 0
    assert worm.stats["fast_forwards"] >= 2
    err, makespan = errors(base, worm)
    assert err.mean() <= 1.0, err
    assert err.max() <= 0.1, err  # deterministic: a flow 1 ns late moves none by 0.003%
    assert makespan <= 0.5, makespan


def test_joined_partitions_match_coupled_ones_when_nothing_is_transit():
    # The same case with decoupling off: one partition; both must be as close
    # to the reference, and the decoupled one must not simulate more.
    flows = two_incasts(161_000)
    base = run.run_flows(TOPO, flows, fabric=FABRIC, kernel="baseline")
    apart = run.run_flows(TOPO, flows, fabric=FABRIC, kernel="wormhole")
    joined = run.run_flows(TOPO, flows, fabric=FABRIC, kernel="wormhole",
                           wormhole=WormholeConfig(decouple_transit=False))
    assert joined.stats["partition_largest_flows"] == 4
    assert apart.stats["partition_largest_flows"] == 2
    assert apart.events <= joined.events
    for worm in (apart, joined):
        err, makespan = errors(base, worm)
        assert err.mean() <= 1.0, err
        assert makespan <= 0.5, makespan


def test_a_link_that_fills_mid_run_joins_the_partitions_and_parts_them_again():
    # Two line-rate flows from the same leaf (4 -> 8, 5 -> 9) start at 300 us
    # and end before the incasts: the leaf's 400G uplink then carries 400G of
    # bounded demand, so it couples all three groups until they end.
    flows = FlowSet.from_lists([0, 1, 2, 3, 4, 5], [6, 6, 7, 7, 8, 9],
                               [24 * MB, 24 * MB, 16 * MB, 16 * MB, 4 * MB, 4 * MB],
                               [0, 0, 37_000, 37_000, 300_000, 300_000])
    base = run.run_flows(TOPO, flows, fabric=FABRIC, kernel="baseline")
    worm = run.run_flows(TOPO, flows, fabric=FABRIC, kernel="wormhole")
    assert worm.stats["link_kind_changes"] >= 2  # transit -> coupling -> transit
    assert worm.stats["partition_largest_flows"] == 6
    assert worm.stats["fast_forwards"] >= 2
    err, makespan = errors(base, worm)
    assert err.mean() <= 1.0, err
    assert makespan <= 0.5, makespan


def test_line_rate_flows_crossing_a_shared_fabric_are_exact():
    # Three lone flows across the leaves, starting apart, under DCQCN: each
    # is its own partition and skips whole line-rate periods, so each must
    # end at the reference's FCT to within a frame.
    flows = FlowSet.from_lists([0, 2, 1], [6, 7, 8], [32 * MB, 24 * MB, 8 * MB], [0, 37_000, 90_000])
    base = run.run_flows(TOPO, flows, kernel="baseline")
    worm = run.run_flows(TOPO, flows, kernel="wormhole")
    assert worm.stats["partition_largest_flows"] == 1
    assert worm.stats["transit_frames_filed"] > 0
    err, makespan = errors(base, worm)
    assert err.max() <= 0.1, err
    assert makespan <= 0.01, makespan


@pytest.mark.parametrize("incast_us,marking", [(0, "step"), (700, "step"), (300, "default")])
def test_a_transit_port_whose_queue_stands_couples_the_flows_crossing_it(incast_us, marking):
    # A lone 20 MB flow 7 -> 9 across two leaves of eight 100G hosts under a
    # 400G spine, and a 13-to-1 incast of 8 MB onto host 8, seven of its
    # senders on the lone flow's leaf. At fair rates the fabric links carry
    # 154 of their 400 Gbps: transit. But the incast's first round trip at
    # line rate (700 + 100 Gbps into the 400G uplink) floods the uplink's
    # queue. Under step marking it marks the lone flow too, which then climbs
    # back by DCQCN's additive increase for most of its life (2.3 ms against
    # 1.7 alone); under default marking the queue stays under Kmin and only
    # delays it, by 26 us its own line rate never makes up. Either way the
    # port acted on both: their partitions join, and the lone flow is not
    # skipped as if alone. Started 300 or 700 us in, the incast meets the
    # lone flow in the middle of its skip, which the queue takes back: before,
    # it ran on at line rate and ended 26.5% (step) or 1.57% (default) early.
    # The lone flow's reference is deterministic (1 ns late moves it by 0);
    # the incast's is chaotic (step marking: 0.3-0.8% mean, up to 2.2% max per
    # flow with one flow 1 ns late), so the mean over all flows is held to 1%.
    topo = leaf_spine(2, 1, 8, "100Gbps", "400Gbps", "1us")
    senders = [0, 1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15]
    flows = FlowSet.from_lists(senders + [7], [8] * 13 + [9], [8 * MB] * 13 + [20 * MB],
                               [incast_us * 1000] * 13 + [0])
    fabric = (FabricConfig(kmin_bytes_per_100g=100_000, kmax_bytes_per_100g=100_000, pmax=1.0)
              if marking == "step" else FabricConfig())
    base = run.run_flows(topo, flows, fabric=fabric, kernel="baseline")
    worm = run.run_flows(topo, flows, fabric=fabric, kernel="wormhole")
    assert worm.stats["transit_congested"] >= 1
    assert "made coupling by their queue" in partition_summary(worm.stats)
    err, makespan = errors(base, worm)
    lone = np.sort(base.flows, order="id")["fct_ns"][-1]
    assert lone > 1.01 * base.flows["ideal_fct_ns"].max()  # the queue held it back
    assert err[-1] <= 0.5, err
    assert err.mean() <= 1.0, err
    assert makespan <= 0.5, makespan
