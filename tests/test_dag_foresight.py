"""Foreseen DAG joins (issue #11): a flow node whose pending predecessors are
all running compute delays starts at a time the workload executor knows, and
the executor announces it to the Wormhole kernel as a known start, so a memo
hit or skip stops there instead of being cut short mid-transient
(docs/memo.md, "Foreseen joins"). Accuracy is checked against the default
kernel on the same DAG; which flows are announced is derived from the DAG."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole import run, topology
from ns3wormhole.compare import workload_fct_errors

from test_memo_soundness import STEP, unforeseeable_join_dag, unforeseen_join_dag


def within(base, worm):
    err = workload_fct_errors(base, worm)
    makespan = abs(worm.network.makespan_ns - base.network.makespan_ns) / base.network.makespan_ns
    assert len(err) == int((base.node_flow_id != 0xFFFFFFFF).sum())
    assert err.mean() <= 0.01 and err.max() <= 0.03 and makespan <= 0.01, (err.mean(), err.max(), makespan)


def foreseeable_flows(dag) -> set[int]:
    """Flow nodes that wait only on compute delays of positive length: once
    the last of those starts, the flow's start is known ahead."""
    preds: dict[int, list[int]] = {}
    for v in range(len(dag.op)):
        for s in dag.succ_idx[dag.succ_ptr[v]:dag.succ_ptr[v + 1]]:
            preds.setdefault(int(s), []).append(v)
    return {
        s for s, ps in preds.items()
        if dag.op[s] == 1 and all(dag.op[p] == 0 for p in ps) and max(dag.duration_ns[p] for p in ps) > 0
    }


# The cells of examples/memo-cut-short-sweep.py that the cut-short did not
# hold (docs/memo.md): the fifth flow is started by a compute delay, so its
# start is known from time 0.
@pytest.mark.parametrize("delay_us,join_ns", [
    (1, 100_000),
    (1, 600_000),
    (10, 100_000),
    (10, 600_000),
    (20, 100_000),
    (20, 600_000),
    (20, 900_000),
    (20, 1_200_000),
    (50, 900_000),
])
def test_a_join_started_by_compute_delays_is_foreseen(delay_us, join_ns):
    topo = topology.star(6, "100Gbps", f"{delay_us}us")
    dag = unforeseen_join_dag(join_ns)
    base = run.run_workload(topo, dag, STEP)
    worm = run.run_workload(topo, dag, STEP, kernel="wormhole")
    within(base, worm)
    assert worm.foreseen == len(foreseeable_flows(dag))


def test_only_flows_waiting_on_delays_alone_are_announced():
    """The fifth flow of unforeseeable_join_dag waits on another flow's end:
    it is not announced (it could not be), the waves and the small flow are."""
    dag = unforeseeable_join_dag(300_000, 10)
    expected = foreseeable_flows(dag)
    last = int(np.flatnonzero(dag.op == 1)[-1])
    assert last not in expected and len(expected) == 5
    worm = run.run_workload(topology.star(8, "100Gbps", "10us"), dag, STEP, kernel="wormhole")
    assert worm.foreseen == len(expected)
    base = run.run_workload(topology.star(8, "100Gbps", "10us"), dag, STEP)
    assert base.foreseen == 0  # the default kernel listens to nothing

