"""Workload specs, the paper's Table 1 presets, parameter counts and rank placement."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole.workload import (
    PRESETS,
    ComputeSpec,
    ModelSpec,
    ParallelSpec,
    Placement,
    Workload,
    gpt,
    moe,
    preset,
    preset_names,
)

# --------------------------------------------------------------------------- presets (Table 1)

TABLE1 = {
    "gpt-7b": (64, 8, 4, 2, 1),
    "gpt-13b": (128, 8, 4, 4, 1),
    "gpt-22b": (256, 8, 8, 4, 1),
    "gpt-175b": (1024, 8, 16, 8, 1),
    "moe-8x7b": (64, 8, 4, 2, 8),
    "moe-8x13b": (128, 8, 4, 4, 8),
    "moe-8x22b": (256, 8, 8, 4, 8),
    "moe-32x22b": (1024, 8, 16, 8, 8),
}


def test_preset_names_are_table1():
    assert set(preset_names()) == set(TABLE1)


@pytest.mark.parametrize("name", list(TABLE1))
def test_preset_layout(name: str):
    gpus, tp, dp, pp, ep = TABLE1[name]
    w = preset(name)
    p = w.parallel
    assert (p.world, p.tp, p.dp, p.pp, p.ep, p.gpus_per_server) == (gpus, tp, dp, pp, ep, 8)
    assert p.num_servers == gpus // 8
    # paper: micro-batch 1, global batch = DP x PP -> PP micro-batches per replica
    assert w.micro_batch == 1 and w.batch == dp * pp and w.num_microbatches == pp
    assert w.model.is_moe == name.startswith("moe")
    if w.model.is_moe:
        assert w.model.num_experts == int(name.split("-")[1].split("x")[0])
        assert w.model.top_k == 2


@pytest.mark.parametrize(
    "name, target, tol",
    [("gpt-7b", 7e9, 0.10), ("gpt-13b", 13e9, 0.10), ("gpt-22b", 22e9, 0.10), ("gpt-175b", 175e9, 0.05)],
)
def test_gpt_parameter_counts(name: str, target: float, tol: float):
    assert abs(preset(name).model.num_params - target) / target < tol


def test_parameter_formula_by_hand():
    # 12 L h^2 + 13 L h + V h + s h + 2 h
    m = gpt("t", num_layers=3, hidden=64, heads=4, seq_len=128, vocab=1000)
    h, L = 64, 3
    assert m.num_params == L * (12 * h * h + 13 * h) + 1000 * h + 128 * h + 2 * h
    assert m.layer_params == 12 * h * h + 13 * h


def test_moe_parameter_counts():
    base = preset("gpt-7b").model
    m = preset("moe-8x7b").model
    h, f = base.hidden, base.ffn
    expert = 2 * h * f + f + h
    assert m.expert_params == expert
    assert m.num_params == base.num_params + base.num_layers * (7 * expert + 8 * h)
    # top-2 routing: active parameters are the 7B backbone plus one more expert per layer
    assert m.active_params == base.num_params + base.num_layers * (expert + 8 * h)
    # 32 experts on the 22B backbone is bigger than 8
    assert preset("moe-32x22b").model.num_params > 3 * preset("moe-8x22b").model.num_params


def test_preset_overrides_and_unknown():
    w = preset("gpt-13b", iterations=3, compute=ComputeSpec(tp_comm=False))
    assert w.iterations == 3 and not w.compute.tp_comm
    assert PRESETS["gpt-13b"].iterations == 1  # the preset itself is unchanged
    with pytest.raises(ValueError, match="unknown workload preset"):
        preset("gpt-1t")


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ModelSpec("x", num_layers=0, hidden=64, heads=4), "num_layers"),
        (lambda: ModelSpec("x", num_layers=2, hidden=65, heads=4), "multiple of model.heads"),
        (lambda: ModelSpec("x", num_layers=2, hidden=64, heads=4, num_experts=4, top_k=5), "top_k"),
        (lambda: ParallelSpec(tp=8, dp=3, ep=5), "ep"),
        (lambda: ParallelSpec(tp=3, gpus_per_server=8), "divide"),
        (lambda: Workload(gpt("x", 2, 64, 4), ParallelSpec(dp=4), global_batch=6), "global_batch"),
        (lambda: Workload(gpt("x", 2, 64, 4), ParallelSpec(pp=4)), "num_layers"),
        (lambda: Workload(gpt("x", 2, 64, 4), ParallelSpec(dp=8, ep=8)), "MoE"),
        (lambda: Workload(moe(gpt("x", 2, 64, 4), 6), ParallelSpec(dp=8, ep=4)), "num_experts"),
        (lambda: ComputeSpec(effective_tflops=0), "effective_tflops"),
        (lambda: ComputeSpec(layer_fwd_ns=-1), "layer_fwd_ns"),
    ],
)
def test_bad_specs_are_rejected(make, match: str):
    with pytest.raises(ValueError, match=match):
        make()


# --------------------------------------------------------------------------- per-GPU quantities


def test_pp_ep_and_grad_bytes():
    w = preset("moe-8x7b")
    m, h = w.model, w.model.hidden
    assert w.pp_bytes() == 2048 * h * 2 // 8  # b*s*h*act / TP
    assert w.dispatch_tokens == 2048 // 8
    assert w.a2a_pair_bytes() == 256 * 2 * h * 2 // 8  # tokens/TP * top_k * h * act / EP
    g = preset("gpt-13b")
    total = sum(g.dense_grad_bytes(s) for s in range(4)) * 8  # x TP
    # every parameter once, plus the last stage's copy of the tied embedding
    expected = (g.model.num_params + g.model.vocab * g.model.hidden) * 2
    assert abs(total - expected) / expected < 1e-3
    assert g.expert_grad_bytes(0) == 0
    assert w.expert_grad_bytes(0) == 16 * 1 * m.expert_params * 2  # 16 layers, 8 experts / EP 8


def test_compute_times_from_flops():
    c = ComputeSpec(effective_tflops=100.0, tp_comm=False)
    w = Workload(gpt("x", num_layers=4, hidden=1024, heads=8, seq_len=1024, vocab=1000),
                 ParallelSpec(tp=2, pp=2), compute=c)
    params = w.model.layer_params
    assert w.layer_fwd_ns() == round(2 * params * 1024 / 2 / 100e12 * 1e9)
    assert w.bwd_ns(1000) == 2000
    assert w.head_fwd_ns() == round(2 * 1000 * 1024 * 1024 / 2 / 100e12 * 1e9)
    with_tp = w.with_(compute=ComputeSpec(effective_tflops=100.0, tp_comm=True))
    # two NVLink ring all-reduces of b*s*h*act over TP=2: 2 steps of half the buffer each
    one = 2 * (25 + 1024 * 1024 * 2 / 2 / 360e9 * 1e9)
    assert with_tp.layer_fwd_ns() - w.layer_fwd_ns() == pytest.approx(2 * one, abs=2)
    explicit = w.with_(compute=ComputeSpec(layer_fwd_ns=777, tp_comm=False))
    assert explicit.layer_fwd_ns() == 777 and explicit.head_fwd_ns() == 0


def test_layers_per_stage_uneven():
    w = Workload(gpt("x", num_layers=10, hidden=64, heads=4), ParallelSpec(pp=4))
    assert w.layers_per_stage() == [3, 3, 2, 2]


# --------------------------------------------------------------------------- placement


def test_megatron_rank_order_and_servers():
    pl = Placement(preset("gpt-13b").parallel)  # TP8 DP4 PP4
    assert pl.rank(3, 2, 1) == 3 + 8 * (2 + 4 * 1)
    tp, dp, pp = pl.coords(np.arange(128))
    assert (tp + 8 * (dp + 4 * pp) == np.arange(128)).all()
    for s in range(4):
        # TP inside a server
        for grp in pl.tp_groups(s):
            assert np.unique(pl.server_of_rank(grp)).size == 1
        # DP across servers, one rail (same local GPU index)
        for grp in pl.dp_groups(s):
            assert np.unique(pl.server_of_rank(grp)).size == 4
            assert np.unique(grp % 8).size == 1
    # PP neighbours: TP*DP ranks apart, another server, same local index
    pipe = pl.pp_group(5, 1)
    assert np.diff(pipe).tolist() == [32, 32, 32]
    assert np.unique(pl.server_of_rank(pipe)).size == 4


def test_ep_groups_cross_servers():
    # EP <= DP: one GPU per server, all on one rail
    pl = Placement(preset("moe-8x22b").parallel)  # TP8 EP8 DP8 PP4
    groups = pl.ep_groups(0)
    assert groups.shape == (8, 8)
    for grp in groups:
        assert np.unique(pl.server_of_rank(grp)).size == 8
        assert np.unique(grp % 8).size == 1
    # EP > DP: EP/DP GPUs in each of the DP servers
    pl = Placement(preset("moe-8x7b").parallel)  # TP8 EP8 DP4 PP2
    groups = pl.ep_groups(1)
    assert groups.shape == (4, 8)
    for grp in groups:
        _, counts = np.unique(pl.server_of_rank(grp), return_counts=True)
        assert counts.tolist() == [2, 2, 2, 2]
    # EP groups partition the stage; EDP groups are their transposes
    assert sorted(groups.reshape(-1).tolist()) == pl.stage_ranks(1).tolist()
    assert (pl.edp_groups(1) == groups.T).all()


def test_custom_gpu_map():
    par = ParallelSpec(tp=2, dp=2)
    pl = Placement(par, gpu_of_rank=[10, 11, 20, 21])
    assert pl.gpu(np.array([0, 3])).tolist() == [10, 21]
    with pytest.raises(ValueError, match="distinct"):
        Placement(par, gpu_of_rank=[1, 1, 2, 3])
    with pytest.raises(ValueError, match="entries"):
        Placement(par, gpu_of_rank=[1, 2])
