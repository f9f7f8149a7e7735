"""Training DAGs executed inside ns-3 on the RDMA model: analytic timing on an
uncongested fabric, dependency order, and the same answers under both kernels."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole import run, topology
from ns3wormhole.workload import DagBuilder, ParallelSpec, Placement, ring_allreduce
from ns3wormhole.workload.dag import KIND_DP_ALLREDUCE, OP_FLOW
from ns3wormhole.workload.models import ParallelSpec as PS, Workload, gpt
from ns3wormhole.workload.dag import build_dag

MTU, HEADER, ACK = 1000, 48, 64
RATE, DELAY = 100e9, 1000  # bps, ns


def ring_step_ns(nbytes: int) -> float:
    """One ring step on host-switch-host: the last packet goes out after all
    packets are serialized, crosses two hops store-and-forward, and its ACK
    comes back over two hops. In a ring every switch-to-host direction carries
    one flow's data and the next flow's ACKs (one 64 B ACK per packet), so
    each packet costs MTU + header + ACK bytes of that link's time."""
    packets = -(-nbytes // MTU)
    last = nbytes - (packets - 1) * MTU
    full_wire = (MTU + HEADER + ACK) * 8 / RATE * 1e9
    last_wire = (last + HEADER) * 8 / RATE * 1e9
    ack_wire = ACK * 8 / RATE * 1e9
    return (packets - 1) * full_wire + 2 * (last_wire + DELAY) + 2 * (ack_wire + DELAY)


@pytest.mark.parametrize("n", [4, 8])
def test_ring_allreduce_matches_analytic(n):
    """2(N-1) dependent steps of S/N bytes each, no two flows of a step
    sharing a link direction's data: 2(N-1)/N x S/B (at wire efficiency)
    plus the latency terms, within 2%."""
    S = 16_000_000
    b = DagBuilder(Placement(ParallelSpec(dp=n, gpus_per_server=1)))
    ring_allreduce(b, np.arange(n)[None, :], None, S, kind=KIND_DP_ALLREDUCE)
    dag = b.build()
    result = run.run_workload(topology.star(n, "100Gbps", "1us"), dag)
    assert result.finished
    chunk = S // n
    expected = 2 * (n - 1) * ring_step_ns(chunk)
    took = result.iteration_times_ns[0]
    assert took == pytest.approx(expected, rel=0.02)
    # the bandwidth term alone is 2(N-1)/N * S/B at payload efficiency
    assert took > 2 * (n - 1) / n * S * 8 / RATE * 1e9


def small_gpt() -> Workload:
    model = gpt("tiny", num_layers=4, hidden=1024, heads=16, seq_len=512, vocab=32000)
    return Workload(model=model, parallel=PS(tp=8, dp=2, pp=2), iterations=2)


def test_training_step_dependencies_hold_in_ns3():
    dag = build_dag(small_gpt())
    result = run.run_workload(topology.rail_optimized(4, 8, "100Gbps", "400Gbps", "1us"), dag)
    assert result.finished
    start, end = result.node_start_ns, result.node_end_ns
    assert (start >= 0).all() and (end >= start).all()
    for node in range(len(dag.op)):
        preds = dag.pred_idx[dag.pred_ptr[node] : dag.pred_ptr[node + 1]]
        if preds.size:
            assert start[node] >= end[preds].max()
    flows = dag.op == OP_FLOW
    assert (result.node_flow_id[flows] != 0xFFFFFFFF).all()
    assert len(result.iteration_times_ns) == 2 and (result.iteration_times_ns > 0).all()
    # every network flow of the DAG became exactly one completed queue pair
    assert len(result.network.flows) == int(flows.sum())
    assert (result.network.flows["finish_ns"] >= 0).all()


def test_training_step_same_under_both_kernels_without_fast_forward():
    dag = build_dag(small_gpt())
    topo = topology.rail_optimized(4, 8, "100Gbps", "400Gbps", "1us")
    base = run.run_workload(topo, dag, kernel="baseline")
    worm = run.run_workload(topo, dag, kernel="wormhole", wormhole=run.WormholeConfig(fast_forward=False))
    assert base.network.events == worm.network.events
    np.testing.assert_array_equal(base.node_end_ns, worm.node_end_ns)
    np.testing.assert_array_equal(base.network.flows, worm.network.flows)


def test_dag_gpu_outside_topology_is_rejected():
    dag = build_dag(small_gpt())
    with pytest.raises(Exception, match="not hosts"):
        run.run_workload(topology.star(8, "100Gbps", "1us"), dag)
