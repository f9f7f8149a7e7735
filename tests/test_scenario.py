"""Scenario files: every table and workload kind loads into the right objects, bad
input is an InputError naming the file, line and key, and Scenario.run/compare
dispatch to the right runner. Simulations here are small (a few MB)."""

from __future__ import annotations

import dataclasses
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import ns3wormhole
from ns3wormhole import fabric as fabric_mod
from ns3wormhole.errors import InputError
from ns3wormhole.run import RunResult, WorkloadResult, WormholeConfig
from ns3wormhole.scenario import MEMO_NOTE, Scenario, ScenarioComparison, load_scenario, run_as_dict

from conftest import EXAMPLES


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


STAR = """
[topology]
kind = "star"
n_hosts = 4
"""

INCAST = STAR + """
[workload]
kind = "flows"
pattern = "incast"
bytes = "2MB"
"""


# --------------------------------------------------------------------------- examples


def test_examples_load():
    inc = load_scenario(EXAMPLES / "incast.toml")
    assert inc.workload_kind == "flows" and len(inc.flows) == 8
    assert (inc.flows.bytes == 64_000_000).all() and (inc.flows.dst == 8).all()
    assert inc.topology.num_nodes == 10 and inc.fabric.seed == 1 and inc.wormhole.theta == 0.05

    ls = load_scenario(EXAMPLES / "leaf-spine-permutation.toml")
    assert len(ls.flows) == 16 and (ls.flows.src != ls.flows.dst).all() and ls.fabric.seed == 7

    gpt = load_scenario(EXAMPLES / "gpt-tiny.toml")
    assert gpt.workload_kind == "llm" and gpt.iterations == 2
    assert gpt.llm.parallel.label() == "TP8-DP2-PP2" and gpt.num_flows == gpt.dag.num_flows > 0

    hp = load_scenario(EXAMPLES / "hpcc.toml")
    assert len(hp.flows) == 3 and hp.topology.num_nodes == 7
    assert hp.flows.start_ns.tolist() == [0, 0, 1_000_000]


def test_api_is_exported():
    assert ns3wormhole.load_scenario is load_scenario
    assert ns3wormhole.Scenario is Scenario
    assert callable(ns3wormhole.sweep.run_sweep)


# --------------------------------------------------------------------------- tables


def test_top_level_keys_and_fabric(tmp_path):
    p = write(tmp_path, """
        name = "x"
        seed = 42
        stop = "3ms"
        [topology]
        kind = "leaf_spine"
        n_leaves = 2
        n_spines = 1
        hosts_per_leaf = 2
        host_rate = "25Gbps"
        [fabric]
        rp_timer_us = "0.9ms"
        min_rate_mbps = "100Mbps"
        [workload]
        kind = "flows"
        flows = [{src = 0, dst = 3, bytes = "1MB"}, {src = 1, dst = 2, bytes = 5000, start = "10us", pg = 4}]
        [wormhole]
        theta = 0.1
        window = 500
        fast_forward = false
    """)
    sc = load_scenario(p)
    assert sc.name == "x" and sc.stop_ns == 3_000_000
    assert sc.fabric.seed == 42 and sc.fabric.rp_timer_us == 900.0 and sc.fabric.min_rate_mbps == 100.0
    assert int(sc.topology.rate_bps.min()) == 25_000_000_000
    assert sc.flows.bytes.tolist() == [1_000_000, 5000] and sc.flows.start_ns.tolist() == [0, 10_000]
    assert sc.flows.pg.tolist() == [3, 4]
    assert sc.wormhole == dataclasses.replace(WormholeConfig(), theta=0.1, window=500, fast_forward=False)


def test_patterns(tmp_path):
    sc = load_scenario(write(tmp_path, STAR + """
        [workload]
        kind = "flows"
        pattern = "staggered"
        senders = [0, 1, 2]
        receiver = 3
        bytes = "1MB"
        gap = "50us"
        start = "1us"
    """))
    assert sc.flows.start_ns.tolist() == [1000, 51000, 101000] and (sc.flows.dst == 3).all()
    inc = load_scenario(write(tmp_path, INCAST))  # defaults: receiver = last host, senders = the others
    assert inc.flows.src.tolist() == [0, 1, 2] and (inc.flows.dst == 3).all()
    perm = load_scenario(write(tmp_path, "seed = 5\n" + STAR + """
        [workload]
        kind = "flows"
        pattern = "permutation"
        bytes = "1MB"
    """))
    assert sorted(perm.flows.src.tolist()) == [0, 1, 2, 3] and (perm.flows.src != perm.flows.dst).all()


def test_hpcc_files_relative_to_scenario(tmp_path):
    sub = tmp_path / "inputs"
    sub.mkdir()
    (sub / "topo.txt").write_text("3 1 2\n2\n0 2 100Gbps 0.001ms 0\n1 2 100Gbps 0.001ms 0\n")
    (sub / "flows.txt").write_text("1\n0 1 3 100 1000000 0.0\n")
    p = write(tmp_path, """
        [topology]
        kind = "hpcc"
        file = "inputs/topo.txt"
        [workload]
        kind = "flows"
        file = "inputs/flows.txt"
    """)
    sc = load_scenario(p)
    assert sc.topology.num_nodes == 3 and len(sc.flows) == 1


def test_llm_preset_with_overrides(tmp_path):
    sc = load_scenario(write(tmp_path, """
        [topology]
        kind = "rail_optimized"
        n_servers = 2
        [workload]
        kind = "llm"
        preset = "gpt-7b"
        iterations = 2
        tp_comm = false
        effective_tflops = 300
        [workload.parallel]
        dp = 1
        pp = 2
        [workload.model]
        num_layers = 2
    """))
    assert sc.llm.parallel.label() == "TP8-DP1-PP2" and sc.llm.model.hidden == 4096
    assert sc.llm.model.num_layers == 2 and sc.llm.compute.effective_tflops == 300.0
    assert sc.llm.compute.tp_comm is False and sc.iterations == 2 and sc.dag.num_iterations == 2


def test_overrides_and_memo_keys(tmp_path):
    p = write(tmp_path, INCAST)
    sc = load_scenario(p, overrides={"wormhole.theta": 0.2, "fabric.rp_timer_us": 900, "workload.bytes": "3MB"})
    assert sc.wormhole.theta == 0.2 and sc.fabric.rp_timer_us == 900.0 and (sc.flows.bytes == 3_000_000).all()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sc = load_scenario(write(tmp_path, INCAST + "[wormhole]\nmemo = true\nmemo_db = 'memo.db'\n"))
    names = {f.name for f in dataclasses.fields(WormholeConfig)}
    if "memo" in names:
        assert sc.wormhole.memo is True
    else:
        assert any(MEMO_NOTE in str(w.message) for w in caught) and sc.warnings
    if "memo_db" in names:  # relative to the scenario file
        assert Path(sc.wormhole.memo_db) == tmp_path / "memo.db"


# --------------------------------------------------------------------------- errors

BAD = [
    # (text, key in the message, line)
    (INCAST + "[fabric]\nmtu_bytes = 20\n", "fabric.mtu_bytes", 11),
    (INCAST + "[fabric]\nrp_timer_usec = 3\n", "fabric.rp_timer_usec", 11),
    (INCAST.replace('"star"', '"ring"'), "topology.kind", 3),
    (INCAST.replace("n_hosts = 4", "n_hosts = 4\nradix = 3"), "topology.radix", 5),
    (INCAST.replace("n_hosts = 4", "n_hosts = 0"), "topology.n_hosts", 4),
    (INCAST.replace('"2MB"', '"2XB"'), "workload.bytes", 9),
    (INCAST.replace('"incast"', '"all2all"'), "workload.pattern", 8),
    (INCAST.replace('"flows"', '"video"'), "workload.kind", 7),
    (INCAST + "[wormhole]\ntheta = 2\n", "wormhole.theta", 11),
    (INCAST + "[wormhole]\nwindow = 'big'\n", "wormhole.window", 11),
    ("seed = -1\n" + INCAST, "seed", 1),
    ("stop = 'soon'\n" + INCAST, "stop", 1),
    ("colour = 'red'\n" + INCAST, "colour", 1),
    (STAR + "[workload]\nkind = 'flows'\nflows = [{src = 0, dst = 7, bytes = 10}]\n", "workload.flows[0]", 7),
    (STAR + "[workload]\nkind = 'flows'\nflows = [{src = 0, dst = 1}]\n", "workload.flows[0].bytes", 7),
    (STAR + "[workload]\nkind = 'llm'\npreset = 'gpt-1t'\n", "workload.preset", 7),
    (STAR + "[workload]\nkind = 'llm'\n[workload.model]\nnum_layers = 2\nhidden = 100\nheads = 3\n"
     "[workload.parallel]\ntp = 1\n", "workload.model.hidden", 9),
    (STAR + "[workload]\nkind = 'llm'\npreset = 'gpt-7b'\n", "workload", 5),  # 64 GPUs on 4 hosts
    (STAR + "[workload]\nkind = 'flows'\nfile = 'nowhere.txt'\n", "workload.file", 7),
    (INCAST.replace("[topology]", "[topology]\nkind2 = 1"), "topology.kind2", 3),
]


@pytest.mark.parametrize("text, key, line", BAD, ids=[b[1] + f"-{i}" for i, b in enumerate(BAD)])
def test_bad_values_name_file_line_and_key(tmp_path, text, key, line):
    p = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_scenario(p)
    msg = str(err.value)
    assert msg.startswith(f"{p}:{line}: {key}:") or msg.startswith(f"{p}:{line}: {key}"), msg
    assert "\n" not in msg


def test_toml_syntax_error_has_line(tmp_path):
    p = write(tmp_path, "[topology]\nkind = \n")
    with pytest.raises(InputError, match=rf"^{p}:2: TOML syntax error"):
        load_scenario(p)


def test_missing_scenario_file(tmp_path):
    with pytest.raises(InputError, match="scenario file not found"):
        load_scenario(tmp_path / "none.toml")


def test_hpcc_file_errors_keep_their_line(tmp_path):
    (tmp_path / "topo.txt").write_text("3 1 2\n2\n0 2 100Gbps 0.001ms 0\n1 2 fast 0.001ms 0\n")
    p = write(tmp_path, "[topology]\nkind = 'hpcc'\nfile = 'topo.txt'\n[workload]\nkind='flows'\npattern='incast'\nbytes=1000\n")
    with pytest.raises(InputError, match=r"topo.txt:4: "):
        load_scenario(p)


# --------------------------------------------------------------------------- running


def test_run_and_compare_flows(tmp_path):
    sc = load_scenario(write(tmp_path, INCAST))
    res = sc.run("baseline")
    assert isinstance(res, RunResult) and res.completed.all()
    d = run_as_dict(res, sc)
    assert d["kernel"] == "baseline" and d["iteration_times_ns"] == [] and len(d["flows"]) == 3
    assert {"id", "src", "dst", "bytes", "start_ns", "fct_ns"} <= set(d["flows"][0])
    cmp = sc.compare()
    assert isinstance(cmp, ScenarioComparison) and cmp.speedup > 0
    out = cmp.as_dict()
    assert out["flows"] == 3 and out["iteration_time_error"] is None
    assert set(out["fct_error"]) == {"mean", "p50", "p99", "max"} and 0 <= out["fct_error"]["max"] < 0.2
    with pytest.raises(InputError, match="kernel"):
        sc.run("turbo")


def test_compare_llm_reports_iteration_error(tmp_path):
    sc = load_scenario(EXAMPLES / "gpt-tiny.toml", overrides={"workload.iterations": 1})
    cmp = sc.compare()
    assert isinstance(cmp.baseline_workload, WorkloadResult)
    d = cmp.as_dict()
    assert d["iteration_time_error"] is not None and d["iteration_time_error"] < 0.05
    assert len(d["baseline"]["iteration_times_ns"]) == 1 and d["flows"] == sc.num_flows
    assert d["flows_compared"] == sc.num_flows  # flows matched by DAG node under both kernels
    assert np.isfinite(d["speedup"]) and d["speedup"] > 0


def test_readme_documents_every_key():
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    for f in dataclasses.fields(fabric_mod.FabricConfig):
        assert f"| `{f.name}` |" in readme, f"fabric.{f.name} missing from the README"
    for f in dataclasses.fields(WormholeConfig):
        assert f"| `{f.name}` |" in readme, f"wormhole.{f.name} missing from the README"
    assert "ns3-wormhole compare examples/quickstart.toml --noise 2 --report report" in readme.splitlines()[9]


def test_table1_gpt7b_example_runs_under_wormhole():
    """The paper's GPT-7B job (64 GPUs) runs end to end under the Wormhole
    kernel in about a second: every flow completes and most of it is skipped."""
    sc = load_scenario(EXAMPLES / "gpt-7b.toml")
    result = sc.run("wormhole")
    net = getattr(result, "network", result)
    assert net.completed.all() and len(net.flows) == 512
    assert net.stats["fast_forwards"] > 0
    assert net.stats["events_executed"] < 10_000_000  # the default kernel needs ~597 M
