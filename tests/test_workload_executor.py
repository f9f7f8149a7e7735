"""The C++ ns3::WorkloadExecutor, standalone: a small ns-3 program runs a DAG from
build_dag on a fake flow model (a flow ends latency + bytes*8/rate after it starts)
and must reproduce the Python reference executor."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ns3wormhole.workload import (
    ComputeSpec,
    Dag,
    ParallelSpec,
    Workload,
    build_dag,
    gpt,
    preset,
    reference_execute,
)

ROOT = Path(__file__).resolve().parent.parent
EXECUTOR = ROOT / "cpp" / "workload" / "model"

DRIVER = r"""
#include "workload-executor.h"

#include "ns3/core-module.h"

#include <cmath>
#include <fstream>
#include <iostream>

using namespace ns3;

// usage: driver DAG.txt RATE_BPS LATENCY_NS MODE LAUNCH_DELAY_NS
// MODE: async (flows end by a scheduled event) or sync (0-time flows end inside the hook)
int
main(int argc, char** argv)
{
    if (argc < 6)
    {
        return 2;
    }
    std::ifstream in(argv[1]);
    const double rate = std::atof(argv[2]);
    const double lat = std::atof(argv[3]);
    const bool sync = std::string(argv[4]) == "sync";
    const int64_t launch = std::atoll(argv[5]);
    uint32_t n;
    uint64_t e;
    in >> n >> e;
    std::vector<uint8_t> op(n), kind(n);
    std::vector<uint32_t> src(n), dst(n), iter(n), succIdx(e);
    std::vector<uint64_t> bytes(n), dur(n);
    std::vector<int64_t> coll(n), succPtr(n + 1);
    for (uint32_t i = 0; i < n; ++i)
    {
        unsigned o, k;
        in >> o >> k >> src[i] >> dst[i] >> bytes[i] >> dur[i] >> iter[i] >> coll[i];
        op[i] = o;
        kind[i] = k;
    }
    for (auto& p : succPtr)
        in >> p;
    for (auto& s : succIdx)
        in >> s;
    if (!in || succPtr[n] != int64_t(e))
    {
        std::cout << "BADFILE\n";
        return 2;
    }
    WorkloadDagView v;
    v.numNodes = n;
    v.op = op.data();
    v.kind = kind.data();
    v.src = src.data();
    v.dst = dst.data();
    v.bytes = bytes.data();
    v.durationNs = dur.data();
    v.iteration = iter.data();
    v.collective = coll.data();
    v.succPtr = succPtr.data();
    v.succIdx = succIdx.data();

    Ptr<WorkloadExecutor> ex = CreateObject<WorkloadExecutor>();
    ex->SetAttribute("FlowLaunchDelay", TimeValue(NanoSeconds(launch)));
    try
    {
        ex->SetDag(v);
    }
    catch (const std::invalid_argument& err)
    {
        std::cout << "INVALID " << err.what() << "\n";
        return 0;
    }
    uint32_t next = 1000;
    uint32_t iterDone = 0;
    uint32_t started = 0;
    ex->TraceConnectWithoutContext("IterationFinished",
                                   MakeBoundCallback(+[](uint32_t* c, uint32_t, Time) { ++*c; }, &iterDone));
    ex->TraceConnectWithoutContext("NodeStarted",
                                   MakeBoundCallback(+[](uint32_t* c, uint32_t) { ++*c; }, &started));
    ex->SetStartFlowHook([&](uint32_t s, uint32_t d, uint64_t b, uint32_t) -> uint32_t {
        const uint32_t id = next++;
        const double t = lat + double(b) * 8e9 / rate;
        if (sync && std::llround(t) == 0)
        {
            ex->OnFlowComplete(id); // completes inside the hook, before the id is returned
        }
        else
        {
            Simulator::Schedule(NanoSeconds(std::llround(t)), &WorkloadExecutor::OnFlowComplete, ex, id);
        }
        return id;
    });
    ex->OnFlowComplete(7); // not ours: ignored
    ex->Start();
    // a periodic event that would keep the simulation alive without StopWhenDone
    std::function<void()> tick = [&]() { Simulator::Schedule(MicroSeconds(50), tick); };
    tick();
    Simulator::Run();
    std::cout << "FINISHED " << ex->IsFinished() << " " << ex->GetNumFinished() << " "
              << ex->GetNumFlowsStarted() << " " << iterDone << " " << started << " "
              << Simulator::Now().GetNanoSeconds() << "\n";
    const auto& st = ex->GetNodeStartNs();
    const auto& en = ex->GetNodeEndNs();
    for (uint32_t i = 0; i < n; ++i)
        std::cout << st[i] << " " << en[i] << "\n";
    for (uint32_t i = 0; i < ex->GetNumIterations(); ++i)
        std::cout << "ITER " << ex->GetIterationStartNs()[i] << " " << ex->GetIterationEndNs()[i] << "\n";
    for (uint32_t i = 0; i < ex->GetNumCollectives(); ++i)
        std::cout << "COLL " << ex->GetCollectiveStartNs()[i] << " " << ex->GetCollectiveEndNs()[i] << "\n";
    Simulator::Destroy();
    return 0;
}
"""


def _ns3_dirs() -> tuple[Path, Path]:
    try:
        from ns3wormhole import paths

        return paths.ns3_include_dir(), paths.ns3_lib_dir()
    except Exception:  # source tree without a build: the ns3 wheel beside us
        import importlib.util

        spec = importlib.util.find_spec("ns3")
        if spec is None:
            pytest.skip("the ns3 package is not installed")
        base = Path(spec.origin).parent if spec.origin else Path(list(spec.submodule_search_locations)[0])
        return base / "include", base / "lib64"


@pytest.fixture(scope="module")
def driver(request) -> Path:
    """Compiled once per source version, cached in pytest's cache directory."""
    if shutil.which("g++") is None:
        pytest.skip("no C++ compiler")
    inc, lib = _ns3_dirs()
    cores = sorted(lib.glob("libns3*-core*.so"))
    if not cores:
        pytest.skip(f"no ns-3 core library in {lib}")
    core = cores[0].name[3:-3]
    sources = [EXECUTOR / "workload-executor.cc", EXECUTOR / "workload-executor.h"]
    seam = ROOT / "cpp" / "wormhole" / "model" / "flow-seam.h"
    digest = hashlib.sha256(DRIVER.encode() + b"".join(p.read_bytes() for p in sources)
                            + (seam.read_bytes() if seam.exists() else b"") + str(lib).encode()).hexdigest()[:16]
    out_dir = Path(request.config.cache.mkdir("workload-executor"))
    exe = out_dir / f"driver-{digest}"
    if not exe.exists():
        src = out_dir / "driver.cc"
        src.write_text(DRIVER)
        cmd = ["g++", "-O1", "-std=c++20", "-Wall", "-Wextra", "-Wno-unused-parameter",
               "-DNS3_LOG_ENABLE", "-DNS3_ASSERT_ENABLE", f"-I{inc}", f"-I{EXECUTOR}",
               f"-I{seam.parent}", str(EXECUTOR / "workload-executor.cc"), str(src),
               f"-L{lib}", f"-l{core}", f"-Wl,-rpath,{lib}", "-o", str(exe) + ".tmp"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, f"compile failed: {' '.join(cmd)}\n{proc.stderr[-4000:]}"
        Path(str(exe) + ".tmp").rename(exe)
    return exe


def write_dag(dag: Dag, path: Path) -> None:
    with open(path, "w") as f:
        f.write(f"{dag.num_nodes} {dag.succ_idx.size}\n")
        cols = np.column_stack([dag.op, dag.kind, dag.src, dag.dst, dag.bytes, dag.duration_ns,
                                dag.iteration, dag.collective]).astype(np.int64)
        np.savetxt(f, cols, fmt="%d")
        f.write(" ".join(map(str, dag.succ_ptr.tolist())) + "\n")
        f.write(" ".join(map(str, dag.succ_idx.tolist())) + "\n")


def run_driver(exe: Path, dag: Dag, tmp_path: Path, rate: float, lat: float, mode: str = "async",
               launch_ns: int = 0) -> dict:
    p = tmp_path / "dag.txt"
    write_dag(dag, p)
    proc = subprocess.run([str(exe), str(p), repr(rate), repr(lat), mode, str(launch_ns)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    if lines[0].startswith("INVALID"):
        return {"invalid": lines[0]}
    head = lines[0].split()
    assert head[0] == "FINISHED"
    se = np.array([list(map(int, l.split())) for l in lines[1: 1 + dag.num_nodes]], dtype=np.int64).reshape(-1, 2)
    it = np.array([list(map(int, l.split()[1:])) for l in lines if l.startswith("ITER")]).reshape(-1, 2)
    co = np.array([list(map(int, l.split()[1:])) for l in lines if l.startswith("COLL")]).reshape(-1, 2)
    return {"finished": head[1] == "1", "num_finished": int(head[2]), "flows": int(head[3]),
            "iterations_done": int(head[4]), "started": int(head[5]), "stop_ns": int(head[6]),
            "start": se[:, 0], "end": se[:, 1], "iter": it, "coll": co}


def assert_precedence(dag: Dag, start: np.ndarray, end: np.ndarray) -> None:
    succ_of = np.repeat(np.arange(dag.num_nodes), np.diff(dag.pred_ptr))
    assert (start >= 0).all() and (end >= start).all()
    assert (start[succ_of] >= end[dag.pred_idx]).all()


@pytest.mark.parametrize("name", ["gpt-7b", "moe-8x7b"])
def test_executor_matches_reference(driver: Path, tmp_path: Path, name: str):
    dag = build_dag(preset(name, iterations=2))
    rate, lat = 100e9, 2000.0
    r = run_driver(driver, dag, tmp_path, rate, lat)
    assert r["finished"] and r["num_finished"] == dag.num_nodes == r["started"]
    assert r["flows"] == dag.num_flows and r["iterations_done"] == 2
    assert_precedence(dag, r["start"], r["end"])
    tl = reference_execute(dag, rate, lat)
    # the fake model rounds each flow to whole ns: allow that much per dependency hop
    assert np.allclose(r["end"], tl.end_ns, rtol=1e-6, atol=100)
    assert np.allclose(r["iter"][:, 1], tl.iteration_end_ns, rtol=1e-6, atol=100)
    assert np.allclose(r["coll"][:, 0], tl.collective_start_ns, rtol=1e-6, atol=100)
    assert np.allclose(r["coll"][:, 1], tl.collective_end_ns, rtol=1e-6, atol=100)
    # StopWhenDone: the periodic tick does not keep the run going past the last node
    assert r["stop_ns"] == r["end"].max()


def test_executor_flow_launch_delay(driver: Path, tmp_path: Path):
    w = Workload(gpt("toy", num_layers=2, hidden=64, heads=4, seq_len=32, vocab=100),
                 ParallelSpec(dp=4, gpus_per_server=1), compute=ComputeSpec(layer_fwd_ns=1000, tp_comm=False))
    dag = build_dag(w)
    base = run_driver(driver, dag, tmp_path, 100e9, 0.0)
    delayed = run_driver(driver, dag, tmp_path, 100e9, 0.0, launch_ns=500)
    # a ring all-reduce over 4 GPUs: 6 dependent steps, each 500 ns later
    assert delayed["end"].max() - base["end"].max() == 6 * 500


def test_executor_synchronous_completion(driver: Path, tmp_path: Path):
    # flows that take 0 ns complete inside the start-flow hook
    dag = build_dag(preset("gpt-7b"))
    r = run_driver(driver, dag, tmp_path, 1e30, 0.0, mode="sync")
    assert r["finished"] and r["num_finished"] == dag.num_nodes
    assert_precedence(dag, r["start"], r["end"])
    tl = reference_execute(dag, 1e30, 0.0)
    assert np.allclose(r["end"], tl.end_ns, atol=1)


def test_executor_rejects_cycles_and_bad_flows(driver: Path, tmp_path: Path):
    dag = build_dag(preset("gpt-7b"))
    # add an edge from GPU 0's optimizer step back to its first node
    bad = Dag(**{f: getattr(dag, f).copy() if isinstance(getattr(dag, f), np.ndarray) else getattr(dag, f)
                 for f in dag.__dataclass_fields__})
    last = int(np.flatnonzero(dag.src == 0).max())
    assert dag.src[0] == 0
    bad.succ_idx = np.insert(dag.succ_idx, dag.succ_ptr[last], 0).astype(np.uint32)
    bad.succ_ptr = dag.succ_ptr.copy()
    bad.succ_ptr[last + 1:] += 1
    r = run_driver(driver, bad, tmp_path, 100e9, 0.0)
    assert "cycle" in r["invalid"]
    zero = Dag(**{f: getattr(dag, f).copy() if isinstance(getattr(dag, f), np.ndarray) else getattr(dag, f)
                  for f in dag.__dataclass_fields__})
    flow = int(np.flatnonzero(dag.is_flow)[0])
    zero.bytes[flow] = 0
    r = run_driver(driver, zero, tmp_path, 100e9, 0.0)
    assert f"node {flow}" in r["invalid"] and "0 bytes" in r["invalid"]
