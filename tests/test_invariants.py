"""The invariants of DESIGN.md on the RDMA model, under each of ns-3's event
queues (the kernel moves skipped partitions' events by removing and
re-inserting them, which each scheduler implements differently):

- baseline identity: fast-forward off gives the default kernel's results;
- conservation: every flow delivers exactly its bytes, no event lost or
  run twice;
- determinism: the same scenario and seed give the same results;
- fast-forward gives the same results under every scheduler as under Map;
- isolation: an unrelated partition's skips move nothing of another."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole import run
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet, incast
from ns3wormhole.topology import leaf_spine, star

MB = 1_000_000
SCHEDULERS = ["ns3::MapScheduler", "ns3::HeapScheduler", "ns3::CalendarScheduler"]
OFF = run.WormholeConfig(fast_forward=False)

# A lone flow (skipped nearly whole), joined at 1 ms by a second one from
# the flow list (the skip ends there), then a third started later: skips,
# a join, completions, on one partition.
TOPO = star(4, "100Gbps", "1us")
FLOWS = FlowSet.from_lists([0, 1, 2], [3, 3, 3], [24 * MB, 8 * MB, 4 * MB], [0, 1_000_000, 1_500_000])


def _identical(a: run.RunResult, b: run.RunResult) -> None:
    np.testing.assert_array_equal(a.flows, b.flows)
    assert a.counters == b.counters
    assert a.events == b.events


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_identity_with_fast_forward_off(scheduler):
    base = run.run_flows(TOPO, FLOWS, kernel="baseline", scheduler=scheduler)
    worm = run.run_flows(TOPO, FLOWS, kernel="wormhole", wormhole=OFF, scheduler=scheduler)
    _identical(worm, base)
    assert worm.stats["fast_forwards"] == 0


@pytest.mark.parametrize("scheduler", SCHEDULERS[1:])
def test_fast_forward_same_under_every_scheduler(scheduler):
    """Fast-forward moves events by Remove + Insert; every queue must give
    the same order, so the same results, as the Map queue."""
    ref = run.run_flows(TOPO, FLOWS, kernel="wormhole", scheduler="ns3::MapScheduler")
    assert ref.stats["fast_forwards"] >= 1 and ref.stats["time_skipped_ns"] > 0
    other = run.run_flows(TOPO, FLOWS, kernel="wormhole", scheduler=scheduler)
    _identical(other, ref)
    assert other.stats == ref.stats


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_conservation_and_determinism(scheduler):
    a = run.run_flows(TOPO, FLOWS, kernel="wormhole", scheduler=scheduler)
    assert a.stats["fast_forwards"] >= 1
    assert a.completed.all()
    np.testing.assert_array_equal(np.sort(a.flows["bytes"]), np.sort(FLOWS.bytes))
    assert (a.flows["credited_bytes"] > 0).any()
    assert (a.flows["credited_bytes"] < a.flows["bytes"]).all()
    s = a.stats
    assert s["events_scheduled"] == s["events_executed"] + s["events_removed"]
    b = run.run_flows(TOPO, FLOWS, kernel="wormhole", scheduler=scheduler)
    _identical(a, b)
    assert a.stats == b.stats


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_isolation_of_a_skipped_partition(scheduler):
    """A long flow on leaf 1 is fast-forwarded while an incast on leaf 0
    runs packet by packet (memo off, default marking: every draw counts):
    the incast's flows are the same with and without the long flow."""
    topo = leaf_spine(2, 1, 4, "100Gbps", "400Gbps", "1us")  # hosts 0-3 on leaf 0, 4-7 on leaf 1
    shorts = incast([0, 1, 2], 3, 2 * MB)
    long_flow = FlowSet.from_lists([4], [5], [32 * MB], ids=[3])
    cfg = run.WormholeConfig(memo=False)
    alone = run.run_flows(topo, shorts, kernel="wormhole", wormhole=cfg, scheduler=scheduler)
    both = run.run_flows(topo, FlowSet.concat([shorts, long_flow], renumber=False), kernel="wormhole",
                         wormhole=cfg, scheduler=scheduler)
    assert both.flow_time_skipped_ns[3] > 0  # the long flow really was skipped
    assert alone.counters["ecn_marks"] > 0
    f = both.flows
    np.testing.assert_array_equal(f[f["dst"] == 3][["id", "start_ns", "finish_ns", "credited_bytes"]],
                                  alone.flows[["id", "start_ns", "finish_ns", "credited_bytes"]])


def test_step_marking_keeps_the_invariants():
    """The same checks with deterministic (step) marking, where a skip in
    a congested pattern would otherwise hide behind the reference's noise."""
    fab = FabricConfig().with_step_marking()
    base = run.run_flows(TOPO, FLOWS, fab, kernel="baseline")
    _identical(run.run_flows(TOPO, FLOWS, fab, kernel="wormhole", wormhole=OFF), base)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_a_replayed_memo_hit_is_exact_under_every_scheduler(scheduler):
    """A memo hit undone by an unforeseen join moves its partition's events
    back before the present and replays them (docs/memo.md): under each
    event queue the run is the default kernel's, and no event is run twice
    (the Wormhole run executes the baseline's events plus one per hit)."""
    from test_memo_soundness import STEP, unforeseeable_join_dag

    from ns3wormhole import topology
    from ns3wormhole.compare import workload_fct_errors

    topo = topology.star(8, "100Gbps", "10us")
    dag = unforeseeable_join_dag(600_000, 10)
    base = run.run_workload(topo, dag, STEP, scheduler=scheduler)
    worm = run.run_workload(topo, dag, STEP, kernel="wormhole", scheduler=scheduler)
    stats = worm.network.stats
    assert stats["memo_hits_replayed"] >= 1, stats
    assert workload_fct_errors(base, worm).max() == 0
    assert worm.network.makespan_ns == base.network.makespan_ns
    assert worm.network.events == base.network.events + stats["memo_hits"]
