"""The baseline's noise floor: the default kernel re-run with one flow 1 ns late."""

import numpy as np

from ns3wormhole import scenarios
from ns3wormhole.compare import _shifted, baseline_noise
from ns3wormhole.flows import FlowSet
from ns3wormhole.run import run_flows

MB = 1_000_000


def test_shifted_moves_exactly_one_start_by_one_nanosecond():
    _, flows = scenarios.staggered4(MB)
    moved = _shifted(flows, 2, 1)
    delta = moved.start_ns.astype(np.int64) - flows.start_ns.astype(np.int64)
    assert delta.tolist() == [0, 0, 1, 0]
    assert moved.bytes.tolist() == flows.bytes.tolist() and moved.src.tolist() == flows.src.tolist()


def test_flows_that_share_nothing_have_no_noise():
    # Two disjoint host pairs: moving one start moves its FCT by nothing
    # (FCT is measured from the start) and cannot touch the other flow.
    from ns3wormhole.topology import star

    topo = star(4, "100Gbps", "1us")
    flows = FlowSet.from_lists([0, 2], [1, 3], [2 * MB, 2 * MB])
    base = run_flows(topo, flows)
    noise = baseline_noise(topo, flows, base, runs=2)
    assert noise.fct_mean.shape == (2,)
    assert np.all(noise.fct_max == 0)
    # the makespan ends at an absolute time: it moves by exactly the 1 ns
    assert np.allclose(noise.makespan, 1.0 / base.makespan_ns)


def test_contending_flows_do_move_the_baseline():
    # Two flows into one receiver: the 1 ns shift changes who is marked when,
    # and the FCTs move (by more than 1 ns), which is what the floor measures.
    topo, _ = scenarios.incast8(MB)
    flows = FlowSet.from_lists([0, 1], [8, 8], [4 * MB, 4 * MB])
    base = run_flows(topo, flows)
    noise = baseline_noise(topo, flows, base, runs=1)
    fct = base.flows["fct_ns"].min()
    assert noise.fct_max[0] > 2.0 / fct


def test_workload_flows_are_matched_by_dag_node():
    """A workload's flow ids follow start order, which differs between runs
    when flows start together; by_dag_node renames each flow to the DAG node
    that sent it, so its endpoints and size are that node's."""
    from ns3wormhole import topology
    from ns3wormhole.compare import by_dag_node, workload_fct_errors, workload_noise
    from ns3wormhole.workload.dag import OP_FLOW, build_dag
    from ns3wormhole.workload.models import ParallelSpec, Workload, gpt, moe

    model = moe(gpt("t", num_layers=1, hidden=512, heads=8, seq_len=512, vocab=1000), 8)
    dag = build_dag(Workload(model=model, parallel=ParallelSpec(tp=8, dp=2, pp=1, ep=2), iterations=1))
    topo = topology.rail_optimized(2, 8, "100Gbps", "400Gbps", "1us")
    from ns3wormhole.run import run_workload

    result = run_workload(topo, dag)
    flows = by_dag_node(result).flows
    nodes = flows["id"].astype(np.int64)
    assert sorted(nodes.tolist()) == np.flatnonzero(dag.op == OP_FLOW).tolist()
    np.testing.assert_array_equal(flows["src"], dag.src[nodes])
    np.testing.assert_array_equal(flows["dst"], dag.dst[nodes])
    np.testing.assert_array_equal(flows["bytes"], dag.bytes[nodes])
    assert workload_fct_errors(result, result).max() == 0
    noise, times = workload_noise(topo, dag, result, runs=1)
    assert times.shape == (1, 1) and noise.fct_mean.shape == (1,)


def test_a_dag_of_flows_only_has_no_delay_to_lengthen():
    import pytest

    from ns3wormhole.compare import _delayed_compute
    from ns3wormhole.workload import DagBuilder, ParallelSpec, Placement, ring_allreduce
    from ns3wormhole.workload.dag import KIND_DP_ALLREDUCE

    b = DagBuilder(Placement(ParallelSpec(dp=4, gpus_per_server=1)))
    ring_allreduce(b, np.arange(4)[None, :], None, 4_000_000, kind=KIND_DP_ALLREDUCE)
    with pytest.raises(ValueError, match="no delay"):
        _delayed_compute(b.build(), 0)


def test_step_marking_sets_kmin_to_kmax_and_nothing_else():
    from ns3wormhole.fabric import FabricConfig

    d = FabricConfig()
    s = d.with_step_marking()
    assert s.kmin_bytes_per_100g == s.kmax_bytes_per_100g == d.kmax_bytes_per_100g
    assert {k: v for k, v in s.as_dict().items() if k != "kmin_bytes_per_100g"} == \
        {k: v for k, v in d.as_dict().items() if k != "kmin_bytes_per_100g"}
