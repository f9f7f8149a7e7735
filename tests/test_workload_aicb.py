"""SimAI/AICB workload files read into the training DAG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ns3wormhole.errors import InputError
from ns3wormhole.workload import ComputeSpec, reference_execute, ring_allreduce_time_ns
from ns3wormhole.workload.aicb import aicb_dag, read_aicb
from ns3wormhole.workload.dag import COLL_ALLREDUCE, COLL_ALLTOALL, KIND_NAMES


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "workload.txt"
    p.write_text(text)
    return p


HEAD = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {tp} ep: {ep} pp: {pp} vpp: 1 ga: {ga} "
        "all_gpus: {n} checkpoints: 0 checkpoint_initiates: 0{extra}\n")


def test_read_header_and_rows(tmp_path: Path):
    p = write(tmp_path, HEAD.format(tp=8, ep=8, pp=2, ga=4, n=64, extra=" pp_comm: 4194304") + "2\n"
              "attn -1 1000 ALLREDUCE 1048576 2000 ALLREDUCE 1048576 1500 ALLREDUCE 4096 10\n"
              "moe  -1 3000 ALLTOALL_EP 2097152 6000 ALLTOALL_EP 2097152 3000 REDUCESCATTER_DP_EP 8192 20\n")
    wl = read_aicb(p)
    assert (wl.tp, wl.ep, wl.pp, wl.ga, wl.all_gpus, wl.dp, wl.pp_comm_bytes) == (8, 8, 2, 4, 64, 4, 4194304)
    a, m = wl.rows
    assert a.fwd_comm.group == "tp" and a.fwd_comm.op == COLL_ALLREDUCE and a.wg_comm.group == "dp"
    assert m.fwd_comm.group == "ep" and m.fwd_comm.op == COLL_ALLTOALL and m.wg_comm.group == "dp_ep"
    assert (a.fwd_ns, a.ig_ns, a.wg_ns, a.wg_update_ns, a.line) == (1000, 2000, 1500, 10, 3)


@pytest.mark.parametrize(
    "text, line, match",
    [
        ("MICRO model_parallel_NPU_group: 1 pp: 1 all_gpus: 2\n0\n", 1, "policy"),
        (HEAD.format(tp=1, ep=1, pp=1, ga=1, n=2, extra=" color: 3") + "0\n", 1, "unknown header key"),
        (HEAD.format(tp=8, ep=1, pp=3, ga=1, n=64, extra="") + "0\n", 1, "multiple"),
        (HEAD.format(tp=8, ep=1, pp=2, ga=1, n=64, extra="") + "0\n", 1, "pp_comm"),
        (HEAD.format(tp=1, ep=1, pp=1, ga=1, n=2, extra="") + "2\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 0\n", 2, "row count"),
        (HEAD.format(tp=1, ep=1, pp=1, ga=1, n=2, extra="") + "1\nx -1 1 NONE 0 1 NONE 0\n", 3, "12 fields"),
        (HEAD.format(tp=1, ep=1, pp=1, ga=1, n=2, extra="") + "1\nx -1 1 BCAST 9 1 NONE 0 1 NONE 0 0\n", 3, "BCAST"),
        (HEAD.format(tp=1, ep=1, pp=1, ga=1, n=2, extra="") + "1\nx -1 abc NONE 0 1 NONE 0 1 NONE 0 0\n", 3,
         "fwd_compute"),
    ],
)
def test_bad_files_name_the_line(tmp_path: Path, text: str, line: int, match: str):
    with pytest.raises(InputError, match=match) as e:
        read_aicb(write(tmp_path, text))
    assert e.value.line == line and e.value.source.endswith("workload.txt")


def test_dp_allreduce_from_file_is_a_ring(tmp_path: Path):
    # TP1 x DP8 on one GPU per server: one layer, a 64 MB gradient all-reduce over DP
    p = write(tmp_path, HEAD.format(tp=1, ep=1, pp=1, ga=1, n=8, extra="") + "1\n"
              "l0 -1 10000 NONE 0 20000 NONE 0 20000 ALLREDUCE 64000000 500\n")
    dag = aicb_dag(p, gpus_per_server=1)
    assert dag.num_flows == 2 * 7 * 8
    tl = reference_execute(dag, 100e9, latency_ns=1000)
    expected = 10000 + 20000 + 20000 + ring_allreduce_time_ns(64e6, 8, 100e9, 1000) + 500
    assert tl.makespan_ns == pytest.approx(expected, rel=0.01)


def test_tp_inside_server_is_nvlink_time_and_ep_is_flows(tmp_path: Path):
    p = write(tmp_path, HEAD.format(tp=8, ep=8, pp=2, ga=2, n=128, extra=" pp_comm: 1000000") + "1\n"
              "moe -1 1000 ALLTOALL_EP 8000000 2000 ALLTOALL_EP 8000000 1000 ALLREDUCE 16000000 0\n")
    c = ComputeSpec()
    dag = aicb_dag(p, compute=c, iterations=2)
    s = dag.summary()["kinds"]
    # TP8-EP8-DP8: EP groups span 8 servers -> 56 flows per all-to-all
    a2a = np.flatnonzero(dag.coll_kind == KIND_NAMES.index("ep_a2a_fwd"))
    for cid in a2a[:3]:
        nodes = np.flatnonzero((dag.collective == cid) & dag.is_flow)
        assert nodes.size == 56 and (dag.bytes[nodes] == 1_000_000).all()
    assert s["pp_fwd"]["flows"] == 2 * 2 * 64  # iterations x micro-batches x GPUs of a stage
    assert "tp_comm" not in s
    dag.check()
    tl = reference_execute(dag, 100e9, 2000)
    assert tl.iteration_times_ns[1] == pytest.approx(tl.iteration_times_ns[0], rel=0.05)


def test_tp_collective_inside_server_is_one_delay(tmp_path: Path):
    p = write(tmp_path, HEAD.format(tp=8, ep=1, pp=1, ga=1, n=16, extra="") + "1\n"
              "attn -1 1000 ALLREDUCE 36000000 1000 NONE 0 1000 NONE 0 0\n")
    c = ComputeSpec(nvlink_gbps=2880, nvlink_latency_ns=0)
    dag = aicb_dag(p, compute=c)
    tp = dag.nodes_of("tp_comm")
    assert tp.size == 16 and dag.num_flows == 0
    assert (dag.duration_ns[tp] == round(2 * 7 * 36e6 / 8 / 360e9 * 1e9)).all()
    off = aicb_dag(p, compute=ComputeSpec(tp_comm=False))
    assert off.nodes_of("tp_comm").size == 0
