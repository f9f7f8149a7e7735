"""Collectives as flows: ring all-reduce timing and structure, all-to-all flow counts."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole.workload import (
    ComputeSpec,
    DagBuilder,
    ParallelSpec,
    Placement,
    all_to_all,
    reference_execute,
    ring_allgather,
    ring_allreduce,
    ring_allreduce_time_ns,
    ring_reducescatter,
)
from ns3wormhole.workload.collectives import chunk_sizes
from ns3wormhole.workload.dag import KIND_DP_ALLREDUCE, KIND_EP_A2A_FWD, OP_DELAY, OP_FLOW


def one_per_server(n: int) -> Placement:
    return Placement(ParallelSpec(dp=n, gpus_per_server=1))


def ring_dag(n: int, nbytes: int, make=ring_allreduce):
    b = DagBuilder(one_per_server(n))
    done = make(b, np.arange(n)[None, :], None, nbytes, kind=KIND_DP_ALLREDUCE)
    return b.build(), done


@pytest.mark.parametrize("n", [2, 4, 8, 16])
@pytest.mark.parametrize("latency_ns", [0.0, 5000.0])
def test_ring_allreduce_time_is_analytic(n: int, latency_ns: float):
    S, B = 1_000_000_000, 100e9
    dag, _ = ring_dag(n, S)
    tl = reference_execute(dag, rate_bps=B, latency_ns=latency_ns)
    expected = 2 * (n - 1) / n * S * 8 / B * 1e9 + 2 * (n - 1) * latency_ns
    assert tl.makespan_ns == pytest.approx(expected, rel=0.02)
    assert ring_allreduce_time_ns(S, n, B, latency_ns) == pytest.approx(expected, rel=1e-12)
    # one collective, spanning the whole run
    assert dag.num_collectives == 1
    assert tl.collective_times_ns[0] == pytest.approx(tl.makespan_ns)


def test_ring_allreduce_structure():
    n, S = 5, 1003  # not divisible: chunks of 201/200 bytes
    dag, done = ring_dag(n, S)
    flows = dag.flows()
    steps = 2 * (n - 1)
    assert flows["node"].size == steps * n
    # every flow goes to the ring successor
    assert ((flows["src"] + 1) % n == flows["dst"]).all()
    # chunk sizes: each step moves the whole buffer once around the ring
    per_step = flows["bytes"].reshape(steps, n).sum(axis=1)
    assert (per_step == S).all()
    assert sorted(set(flows["bytes"].tolist())) == [200, 201]
    # step k+1 at rank r depends on exactly step k's flow into r and r's own step-k send
    ids = flows["node"].reshape(steps, n)
    for k in range(steps - 1):
        for r in range(n):
            assert sorted(dag.preds(ids[k + 1, r]).tolist()) == sorted([ids[k, r], ids[k, (r - 1) % n]])
    # the per-rank done node waits for the last send and the last receive
    for r in range(n):
        assert sorted(dag.preds(done[0, r]).tolist()) == sorted([ids[-1, r], ids[-1, (r - 1) % n]])


def test_ring_reducescatter_and_allgather_take_half():
    S, B, n = 800_000_000, 100e9, 8
    full = reference_execute(ring_dag(n, S)[0], B).makespan_ns
    for make in (ring_reducescatter, ring_allgather):
        dag, _ = ring_dag(n, S, make)
        assert dag.num_flows == (n - 1) * n
        assert reference_execute(dag, B).makespan_ns == pytest.approx(full / 2, rel=1e-9)


def test_ring_waits_for_every_rank_to_enter():
    # rank 2 enters 1 ms late: nothing of the ring can finish before it has
    n = 4
    pl = one_per_server(n)
    b = DagBuilder(pl)
    ready = b.delay(np.arange(n), np.array([0, 0, 1_000_000, 0]))
    done = ring_allreduce(b, np.arange(n)[None, :], ready[None, :], 4_000_000, kind=KIND_DP_ALLREDUCE)
    tl = reference_execute(b.build(), 100e9)
    flows = np.flatnonzero(b.build().is_flow)
    assert tl.start_ns[flows].min() == 0  # 0 -> 1 may start at once
    assert (tl.end_ns[done] >= 1_000_000 + 6 * 4_000_000 / 4 * 8 / 100).all()


def test_groups_run_in_parallel_and_get_own_ids():
    b = DagBuilder(one_per_server(8))
    ring_allreduce(b, np.arange(8).reshape(2, 4), None, 10**8, kind=KIND_DP_ALLREDUCE)
    dag = b.build()
    assert dag.num_collectives == 2
    assert sorted(set(dag.collective[dag.is_flow].tolist())) == [0, 1]
    tl = reference_execute(dag, 100e9)
    assert tl.makespan_ns == pytest.approx(ring_allreduce_time_ns(10**8, 4, 100e9))


def test_chunk_sizes():
    assert chunk_sizes(10, 4).tolist() == [3, 3, 2, 2]
    assert chunk_sizes(3, 4).tolist() == [1, 1, 1, 1]  # never a 0-byte flow
    with pytest.raises(ValueError):
        chunk_sizes(0, 4)


def test_ep_all_to_all_over_8_ranks():
    pair = 524_288
    b = DagBuilder(one_per_server(8))
    done = all_to_all(b, np.arange(8)[None, :], None, pair, kind=KIND_EP_A2A_FWD)
    dag = b.build()
    f = dag.flows()
    assert f["node"].size == 56
    assert (f["bytes"] == pair).all()
    pairs = set(zip(f["src"].tolist(), f["dst"].tolist()))
    assert pairs == {(i, j) for i in range(8) for j in range(8) if i != j}
    # a rank is done when the 7 flows addressed to it have arrived
    for r in range(8):
        preds = dag.preds(done[0, r])
        assert len(preds) == 7 and (dag.dst[preds] == r).all()
    tl = reference_execute(dag, 100e9, latency_ns=1000)
    assert tl.makespan_ns == pytest.approx(1000 + pair * 8 / 100)


def test_intra_server_transfers_are_nvlink_delays():
    c = ComputeSpec(nvlink_gbps=2400.0, nvlink_latency_ns=100)
    pl = Placement(ParallelSpec(tp=2, dp=4, gpus_per_server=2))  # ranks 2s, 2s+1 share server s
    b = DagBuilder(pl, c)
    all_to_all(b, np.array([[0, 1, 2, 3]]), None, 3_000_000, kind=KIND_EP_A2A_FWD)
    dag = b.build()
    transfers = np.flatnonzero(dag.src != dag.dst)
    assert transfers.size == 12
    intra = transfers[(dag.src[transfers] // 2) == (dag.dst[transfers] // 2)]
    assert intra.size == 4
    assert (dag.op[intra] == OP_DELAY).all()
    assert (dag.duration_ns[intra] == 100 + 3_000_000 / 300e9 * 1e9).all()
    inter = np.setdiff1d(transfers, intra)
    assert (dag.op[inter] == OP_FLOW).all() and (dag.duration_ns[inter] == 0).all()


def test_bad_groups():
    b = DagBuilder(one_per_server(4))
    with pytest.raises(ValueError, match="repeats"):
        ring_allreduce(b, np.array([[0, 1, 1, 2]]), None, 100, kind=KIND_DP_ALLREDUCE)
