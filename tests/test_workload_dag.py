"""The training DAG: 1F1B order and bubble, iterations, tags, dependencies, the reference executor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ns3wormhole.workload import (
    KIND_NAMES,
    PHASE_BWD,
    PHASE_FWD,
    PHASE_OPT,
    ComputeSpec,
    Dag,
    ParallelSpec,
    Workload,
    build_dag,
    gpt,
    moe,
    one_f_one_b,
    preset,
    reference_execute,
    ring_allreduce_time_ns,
)
from ns3wormhole.workload.dag import KIND_COMPUTE, OP_DELAY

FAST = 1e18  # flows take ~no time: isolates the compute schedule


def pipeline(pp: int, m: int, fwd: int = 1000, **kw) -> Workload:
    return Workload(
        gpt("toy", num_layers=pp, hidden=64, heads=4, seq_len=32, vocab=100),
        ParallelSpec(tp=1, dp=1, pp=pp, gpus_per_server=1),
        compute=ComputeSpec(layer_fwd_ns=fwd, tp_comm=False),
        global_batch=m, **kw,
    )


def stage_program(dag: Dag, gpu: int, iteration: int = 0) -> list[tuple[str, int]]:
    nodes = np.flatnonzero((dag.src == gpu) & (dag.kind == KIND_COMPUTE) & (dag.iteration == iteration)
                           & np.isin(dag.phase, [PHASE_FWD, PHASE_BWD]))
    return [("F" if dag.phase[i] == PHASE_FWD else "B", int(dag.micro[i])) for i in nodes]


# --------------------------------------------------------------------------- 1F1B


def test_1f1b_order_pp4():
    pp, m = 4, 8
    # stage 0: 3 warm-up forwards, then F/B alternating, then 3 cool-down backwards
    assert one_f_one_b(pp, 0, m) == [
        ("F", 0), ("F", 1), ("F", 2),
        ("F", 3), ("B", 0), ("F", 4), ("B", 1), ("F", 5), ("B", 2), ("F", 6), ("B", 3), ("F", 7), ("B", 4),
        ("B", 5), ("B", 6), ("B", 7),
    ]
    for s in range(pp):
        order = one_f_one_b(pp, s, m)
        warm = pp - s - 1
        assert order[:warm] == [("F", i) for i in range(warm)]
        steady = order[warm: warm + 2 * (m - warm)]
        assert [op for op, _ in steady] == ["F", "B"] * (m - warm)
        assert order[warm + 2 * (m - warm):] == [("B", i) for i in range(m - warm, m)]
        assert sorted(order) == sorted([("F", i) for i in range(m)] + [("B", i) for i in range(m)])
    # fewer micro-batches than stages: all forwards first
    assert one_f_one_b(4, 0, 2) == [("F", 0), ("F", 1), ("B", 0), ("B", 1)]


def test_dag_follows_1f1b_in_program_and_time_order():
    pp, m = 4, 8
    dag = build_dag(pipeline(pp, m))
    tl = reference_execute(dag, FAST)
    for s in range(pp):
        prog = stage_program(dag, s)
        assert prog == one_f_one_b(pp, s, m)
        nodes = np.flatnonzero((dag.src == s) & (dag.kind == KIND_COMPUTE) & np.isin(dag.phase, [PHASE_FWD, PHASE_BWD]))
        assert (np.diff(tl.start_ns[nodes]) > 0).all()  # executed in that order, one at a time


@pytest.mark.parametrize("m", [4, 8, 16])
def test_1f1b_bubble(m: int):
    pp, f = 4, 1000
    dag = build_dag(pipeline(pp, m, fwd=f))
    t = reference_execute(dag, FAST).makespan_ns
    assert t == pytest.approx((m + pp - 1) * 3 * f, rel=1e-6)  # backward = 2 x forward
    bubble = 1 - m * 3 * f / t
    assert bubble == pytest.approx((pp - 1) / (m + pp - 1), rel=1e-6)


def test_gpipe_has_the_same_bubble_but_other_order():
    dag = build_dag(pipeline(4, 8), schedule="gpipe")
    assert stage_program(dag, 0) == [("F", i) for i in range(8)] + [("B", i) for i in range(8)]
    assert reference_execute(dag, FAST).makespan_ns == pytest.approx(11 * 3000, rel=1e-6)
    with pytest.raises(ValueError, match="schedule"):
        build_dag(pipeline(4, 8), schedule="zb")


def test_pp_flows_per_microbatch():
    w = preset("gpt-7b")  # TP8 DP4 PP2, 2 micro-batches
    dag = build_dag(w)
    for kind in ("pp_fwd", "pp_bwd"):
        nodes = dag.nodes_of(kind)
        # one flow per GPU of a stage per micro-batch, between matching GPUs of adjacent stages
        assert nodes.size == 2 * 32
        assert (dag.bytes[nodes] == 2048 * 4096 * 2 // 8).all()
        assert (np.abs(dag.dst[nodes].astype(int) - dag.src[nodes].astype(int)) == 32).all()
    fwd = dag.nodes_of("pp_fwd")
    assert (dag.src[fwd] < 32).all() and (dag.dst[fwd] >= 32).all()


# --------------------------------------------------------------------------- DP all-reduce and iterations


def test_dp_allreduce_iteration_time():
    # TP1 DP8 PP1: compute (F + B per micro-batch), then a ring all-reduce of the gradients
    w = Workload(gpt("toy", num_layers=2, hidden=256, heads=4, seq_len=64, vocab=1000),
                 ParallelSpec(dp=8, gpus_per_server=1), global_batch=16,
                 compute=ComputeSpec(layer_fwd_ns=10_000, head_fwd_ns=0, tp_comm=False, optimizer_ns=5000))
    dag = build_dag(w)
    assert dag.nodes_of("dp_allreduce").size > 0
    S = w.dense_grad_bytes(0)
    tl = reference_execute(dag, 100e9, latency_ns=1500)
    compute = w.num_microbatches * 3 * 2 * 10_000
    expected = compute + ring_allreduce_time_ns(S, 8, 100e9, 1500) + 5000
    assert tl.makespan_ns == pytest.approx(expected, rel=0.02)
    flows = dag.flows()
    assert flows["node"].size == 2 * 7 * 8
    # each GPU sends 2(N-1)/N of its gradient bytes
    sent = np.bincount(flows["src"].astype(np.int64), weights=flows["bytes"].astype(np.float64))
    assert np.allclose(sent, 2 * 7 / 8 * S, rtol=1e-6)


def test_iterations_chain_per_gpu():
    w = preset("gpt-7b", iterations=3)
    dag = build_dag(w)
    assert dag.num_iterations == 3
    tl = reference_execute(dag, 100e9, latency_ns=2000)
    times = tl.iteration_times_ns
    assert times[1] == pytest.approx(times[2], rel=1e-9)  # steady: same work each iteration
    # every GPU starts iteration i+1 only after its optimizer step of iteration i
    for it in (0, 1):
        opt = np.flatnonzero((dag.phase == PHASE_OPT) & (dag.iteration == it))
        assert opt.size == 64
        for g in (0, 17, 63):
            o = opt[dag.src[opt] == g][0]
            nxt = np.flatnonzero((dag.iteration == it + 1) & (dag.src == g))
            assert tl.start_ns[nxt].min() >= tl.end_ns[o]
            assert o in dag.preds(nxt.min())


def test_no_node_starts_before_its_predecessors_finish():
    dag = build_dag(preset("moe-8x7b", iterations=2))
    tl = reference_execute(dag, 100e9, latency_ns=2000)
    succ_of = np.repeat(np.arange(dag.num_nodes), np.diff(dag.pred_ptr))
    assert (tl.start_ns[succ_of] >= tl.end_ns[dag.pred_idx]).all()
    # and each node starts exactly when its last predecessor ends (no idle waiting)
    last = np.zeros(dag.num_nodes)
    np.maximum.at(last, succ_of, tl.end_ns[dag.pred_idx])
    assert np.allclose(tl.start_ns, last)


# --------------------------------------------------------------------------- tags and structure


def test_tags_and_kinds():
    w = preset("moe-8x7b")
    dag = build_dag(w)
    s = dag.summary()
    assert set(s["kinds"]) == {"compute", "dp_allreduce", "pp_fwd", "pp_bwd", "ep_a2a_fwd", "ep_a2a_bwd",
                               "edp_allreduce"}
    assert (dag.collective[dag.kind == KIND_COMPUTE] == -1).all()
    comm = dag.kind != KIND_COMPUTE
    assert (dag.collective[comm] >= 0).all()
    assert (dag.coll_kind[dag.collective[comm]] == dag.kind[comm]).all()
    # all-to-alls: per MoE layer, micro-batch and direction, dispatch + combine in every EP group
    n_a2a = (dag.coll_kind == KIND_NAMES.index("ep_a2a_fwd")).sum()
    assert n_a2a == 32 * w.num_microbatches * 2 * 4  # layers x micro x (dispatch, combine) x EP groups per stage
    # no network flow stays inside a server (TP traffic is never a flow)
    f = dag.flows()
    assert (f["src"] // 8 != f["dst"] // 8).all()


def test_tp_comm_switch():
    on = preset("gpt-13b")
    off = preset("gpt-13b", compute=ComputeSpec(tp_comm=False))
    assert on.layer_fwd_ns() > off.layer_fwd_ns()
    a, b = build_dag(on), build_dag(off)
    assert a.num_flows == b.num_flows  # TP adds time, not flows
    assert a.duration_ns.sum() > b.duration_ns.sum()


def test_moe_with_ep_across_servers_has_56_flows_per_a2a():
    base = gpt("toy", num_layers=2, hidden=128, heads=4, seq_len=64, vocab=100)
    w = Workload(moe(base, 8), ParallelSpec(dp=8, ep=8, gpus_per_server=1),
                 compute=ComputeSpec(layer_fwd_ns=1000, expert_fwd_ns=1000))
    dag = build_dag(w)
    a2a = np.flatnonzero(np.isin(dag.coll_kind, [KIND_NAMES.index("ep_a2a_fwd"), KIND_NAMES.index("ep_a2a_bwd")]))
    assert a2a.size == 2 * 2 * 2 * w.num_microbatches  # layers x (dispatch, combine) x (fwd, bwd) x micro
    for c in a2a:
        nodes = np.flatnonzero((dag.collective == c) & dag.is_flow)
        assert nodes.size == 56
        assert (dag.bytes[nodes] == 64 * 2 * 128 * 2 // 8).all()


def test_topological_ids_and_check():
    dag = build_dag(preset("gpt-13b"))
    succ_of = np.repeat(np.arange(dag.num_nodes), np.diff(dag.pred_ptr))
    assert (dag.pred_idx < succ_of).all()
    assert dag.in_degree().sum() == dag.num_edges == dag.succ_idx.size
    dag.pred_idx[0:1] = dag.num_nodes - 1  # break it
    with pytest.raises(ValueError):
        dag.check()


def test_save_load_and_remap(tmp_path: Path):
    dag = build_dag(preset("gpt-7b"))
    dag.save(tmp_path / "d.npz")
    back = Dag.load(tmp_path / "d.npz")
    for col in ("op", "kind", "src", "dst", "bytes", "duration_ns", "succ_ptr", "succ_idx", "coll_kind"):
        assert (getattr(back, col) == getattr(dag, col)).all()
    moved = dag.remap_gpus(np.arange(64) + 100)
    assert (moved.src == dag.src + 100).all() and moved.num_gpus == 164


def test_explicit_dag_delays_are_delays():
    dag = build_dag(pipeline(2, 2))
    assert (dag.op[dag.kind == KIND_COMPUTE] == OP_DELAY).all()
    assert (dag.bytes[dag.kind == KIND_COMPUTE] == 0).all()
