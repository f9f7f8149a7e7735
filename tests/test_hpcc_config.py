"""HPCC/SimAI configs (``KEY value`` lines) run unchanged: every key of HPCC's
``run.py`` template mapped, HPCC's output files in HPCC's formats, ``convert``
to an equivalent scenario, and clear errors for what is not modelled."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLES
from test_cli import cli, one_error_line

from ns3wormhole.hpcc_config import is_hpcc_config, read_hpcc_config
from ns3wormhole.result_files import hpcc_ip

# The key lines of HPCC's simulation/run.py template, in its order.
TEMPLATE = """\
ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1

PACKET_PAYLOAD_SIZE 1000

TOPOLOGY_FILE mix/{topo}.txt
FLOW_FILE mix/{trace}.txt
TRACE_FILE mix/trace.txt
TRACE_OUTPUT_FILE mix/mix_{topo}_{trace}_{cc}.tr
FCT_OUTPUT_FILE mix/fct_{topo}_{trace}_{cc}.txt
PFC_OUTPUT_FILE mix/pfc_{topo}_{trace}_{cc}.txt

SIMULATOR_STOP_TIME 4.00

CC_MODE {mode}
ALPHA_RESUME_INTERVAL {t_alpha}
RATE_DECREASE_INTERVAL {t_dec}
CLAMP_TARGET_RATE 0
RP_TIMER {t_inc}
EWMA_GAIN {g}
FAST_RECOVERY_TIMES 1
RATE_AI {ai}Mb/s
RATE_HAI {hai}Mb/s
MIN_RATE 1000Mb/s
DCTCP_RATE_AI {dctcp_ai}Mb/s

ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0

HAS_WIN {has_win}
GLOBAL_T 1
VAR_WIN {vwin}
FAST_REACT {us}
U_TARGET {u_tgt}
MI_THRESH {mi}
INT_MULTI {int_multi}
MULTI_RATE 0
SAMPLE_FEEDBACK 0
PINT_LOG_BASE {pint_log_base}
PINT_PROB {pint_prob}

RATE_BOUND 1

ACK_HIGH_PRIO {ack_prio}

LINK_DOWN {link_down}

ENABLE_TRACE {enable_tr}

KMAX_MAP {kmax_map}
KMIN_MAP {kmin_map}
PMAX_MAP {pmax_map}
BUFFER_SIZE {buffer_size}
QLEN_MON_FILE mix/qlen_{topo}_{trace}_{cc}.txt
QLEN_MON_START {qlen_start}
QLEN_MON_END {qlen_end}
"""


def run_py_config(cc: str = "dcqcn", bw: int = 100, topo: str = "topo", trace: str = "flow", **changes) -> str:
    """A config as run.py writes it (its Python 3 arithmetic: 32.0, 20.0Mb/s)."""
    kmax = "2 %d %d %d %d" % (bw * 10**9, 400 * bw / 25, bw * 4 * 10**9, 400 * bw * 4 / 25)
    kmin = "2 %d %d %d %d" % (bw * 10**9, 100 * bw / 25, bw * 4 * 10**9, 100 * bw * 4 / 25)
    pmax = "2 %d %.2f %d %.2f" % (bw * 10**9, 0.2, bw * 4 * 10**9, 0.2)
    modes = {"dcqcn": (1, 1, 4, 300), "dcqcn_paper": (1, 50, 50, 55), "hp": (3, 1, 4, 300), "timely": (7, 1, 4, 300),
             "dctcp": (8, 1, 4, 300)}
    mode, t_alpha, t_dec, t_inc = modes[cc]
    values = dict(topo=topo, trace=trace, cc=cc, mode=mode, t_alpha=t_alpha, t_dec=t_dec, t_inc=t_inc,
                  g=0.00390625, ai=5 * bw / 25, hai=50 * bw / 25, dctcp_ai=1000, has_win=0, vwin=0, us=0, u_tgt=0.95,
                  mi=0, int_multi=1, pint_log_base=1.01, pint_prob=1.0, ack_prio=1, link_down="0 0 0", enable_tr=1,
                  kmax_map=kmax, kmin_map=kmin, pmax_map=pmax, buffer_size=16 * bw / 50, qlen_start=2000000000,
                  qlen_end=3000000000)
    if cc == "hp":  # run.py's HPCC line
        values.update(ai=10 * bw / 25, hai=10 * bw / 25, int_multi=bw / 25, has_win=1, vwin=1, us=1, ack_prio=0)
    elif cc == "dctcp":
        dk = "2 %d %d %d %d" % (bw * 10**9, 30 * bw / 10, bw * 4 * 10**9, 30 * bw * 4 / 10)
        values.update(ai=10, hai=10, dctcp_ai=615, g=0.0625, has_win=1, vwin=1, ack_prio=0, kmax_map=dk, kmin_map=dk,
                      pmax_map="2 %d %.2f %d %.2f" % (bw * 10**9, 1.0, bw * 4 * 10**9, 1.0))
    elif cc == "timely":
        values.update(ai=10 * bw / 10, hai=50 * bw / 10)
    values.update(changes)
    return TEMPLATE.format(**values)


def fabric_has(name: str) -> bool:
    import dataclasses

    from ns3wormhole.fabric import FabricConfig

    return name in {f.name for f in dataclasses.fields(FabricConfig)}


@pytest.fixture
def sim(tmp_path: Path) -> Path:
    """HPCC's layout: simulation/ with mix/{topo,flow}.txt and the config in mix/."""
    mix = tmp_path / "simulation" / "mix"
    mix.mkdir(parents=True)
    shutil.copy(EXAMPLES / "hpcc-files" / "topology.txt", mix / "topo.txt")
    shutil.copy(EXAMPLES / "hpcc-files" / "flow.txt", mix / "flow.txt")
    return tmp_path / "simulation"


def write_config(sim: Path, text: str, name: str = "config.txt") -> Path:
    p = sim / "mix" / name
    p.write_text(text, encoding="utf-8")
    return p


def test_detected_by_form(sim):
    cfg = write_config(sim, run_py_config())
    assert is_hpcc_config(cfg)
    assert not is_hpcc_config(EXAMPLES / "incast.toml")


def test_every_template_key_is_mapped_with_hpcc_units(sim):
    cfg = read_hpcc_config(write_config(sim, run_py_config(cc="dcqcn_paper")))
    fab = cfg.scenario["fabric"]
    # run.py dcqcn_paper at 100 Gbps; units as third.cc reads them (us, Mb/s, MiB, KB = 1000 B)
    assert fab["alpha_resume_interval_us"] == 50 and fab["rate_decrease_interval_us"] == 50
    assert fab["rp_timer_us"] == 55 and fab["ewma_gain"] == 0.00390625 and fab["fast_recovery_times"] == 1
    assert fab["rate_ai_mbps"] == 20 and fab["rate_hai_mbps"] == 200 and fab["min_rate_mbps"] == 1000
    assert fab["buffer_bytes"] == 32 * 2**20 and fab["mtu_bytes"] == 1000 and fab["ack_interval"] == 1
    assert fab["kmin_bytes_per_100g"] == 400_000 and fab["kmax_bytes_per_100g"] == 1_600_000 and fab["pmax"] == 0.2
    assert fab["ecn_enabled"] is True and fab["clamp_target_rate"] is False
    assert fab["qlen_monitor_start_ns"] == 2_000_000_000 and fab["qlen_monitor_end_ns"] == 3_000_000_000
    assert cfg.scenario["stop"] == 4_000_000_000
    # paths resolve from the folder above mix/ (where HPCC's third runs)
    assert Path(cfg.scenario["topology"]["file"]) == (sim / "mix" / "topo.txt").resolve()
    assert cfg.outputs.fct == (sim / "mix" / "fct_topo_flow_dcqcn_paper.txt").resolve()
    # the keys with no effect are all named, none is silently dropped
    expected = {"TRACE_FILE", "TRACE_OUTPUT_FILE", "ENABLE_TRACE", "L2_CHUNK_SIZE", "GLOBAL_T", "VAR_WIN",
                "FAST_REACT", "U_TARGET", "MI_THRESH", "INT_MULTI", "MULTI_RATE", "SAMPLE_FEEDBACK", "PINT_LOG_BASE",
                "PINT_PROB", "DCTCP_RATE_AI"}
    if fabric_has("variable_window"):  # the model has windows: VAR_WIN is mapped
        expected.discard("VAR_WIN")
        assert fab["window"] is False and fab["variable_window"] is False and fab["ack_high_priority"] is True
    assert set(cfg.ignored) == expected
    assert cfg.unknown == []


def test_run_writes_hpcc_files_and_matches_converted_scenario(sim, tmp_path):
    cfg = write_config(sim, run_py_config(qlen_start=0, qlen_end=1_000_000))
    r = cli("run", cfg, "--kernel", "baseline", "--json", tmp_path / "a.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 1 and "TRACE_FILE" in warnings[0] and "PINT_PROB" in warnings[0]
    a = json.loads((tmp_path / "a.json").read_text())
    mix = sim / "mix"

    # fct: one line per flow in completion order, HPCC's fields
    fct = [l.split() for l in (mix / "fct_topo_flow_dcqcn.txt").read_text().splitlines()]
    flows = sorted(a["flows"], key=lambda f: (f["finish_ns"], f["id"]))
    assert len(fct) == len(flows) == 3
    for line, f in zip(fct, flows):
        assert int(line[0], 16) == hpcc_ip(f["src"]) and int(line[1], 16) == hpcc_ip(f["dst"])
        assert int(line[4]) == f["bytes"] and int(line[5]) == f["start_ns"] and int(line[6]) == f["fct_ns"]
        assert int(line[3]) == 100
    # flow 0 (0->2) and flow 2 (0->3, starts later) leave host 0 on ports 10000 and 10001
    ports = {(int(l[0], 16), int(l[5])): int(l[2]) for l in fct}
    assert ports == {(hpcc_ip(0), 0): 10000, (hpcc_ip(1), 0): 10000, (hpcc_ip(0), 1_000_000): 10001}
    # standalone FCT of 32 MB across 4 links of 100 Gbps / 1 us: HPCC's formula by hand
    big = [l for l in fct if int(l[4]) == 32_000_000][0]
    rtt = 2 * 4 * 1000 + 4 * (1000 * 8 // 100)
    assert int(big[7]) == rtt + (32_000_000 + 32_000 * 48) * 8 // 100

    # qlen: every dump's counts add up to the samples taken so far (one per 100 ns)
    qlen = (mix / "qlen_topo_flow_dcqcn.txt").read_text().splitlines()
    assert qlen[0] == "time: 0"
    ports = [l.split() for l in qlen[1:]]
    assert ports and all(sum(map(int, p[2:])) == 1 for p in ports)  # the dump at t = 0 holds the first sample

    # convert: the equivalent scenario runs to the same results
    out = tmp_path / "conv" / "s.toml"
    out.parent.mkdir()
    r = cli("convert", cfg, "-o", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = cli("run", out, "--kernel", "baseline", "--json", tmp_path / "b.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    b = json.loads((tmp_path / "b.json").read_text())
    assert [f["fct_ns"] for f in b["flows"]] == [f["fct_ns"] for f in a["flows"]]
    assert b["events"] == a["events"]


WINDOWLESS = [] if fabric_has("window") else [
    ({"has_win": 1}, "HAS_WIN", "not modelled"),
    ({"ack_prio": 0}, "ACK_HIGH_PRIO", "not modelled"),
]


@pytest.mark.parametrize("changes,key,words", [
    ({"mode": 10}, "CC_MODE", "not modelled yet"),
    ({"mode": 2}, "CC_MODE", "unknown mode"),
    *WINDOWLESS,
    ({"link_down": "1000 0 6"}, "LINK_DOWN", "no link joins nodes 0 and 6"),
    ({"link_down": "1000 4"}, "LINK_DOWN", "expected '<time_us> <node_a> <node_b>'"),
    ({"kmax_map": "1 400000000000 6400"}, "KMAX_MAP", "no entry for link rate 100000000000"),
    ({"pmax_map": "1 100000000000 1.5"}, "PMAX_MAP", "out of range"),
    ({"kmin_map": "1 100000000000 2000"}, "KMIN_MAP", "kmin"),
    ({"t_inc": "fast"}, "RP_TIMER", "expected a number"),
])
def test_unmodelled_or_bad_values_are_one_line_errors(sim, tmp_path, changes, key, words):
    text = run_py_config(**changes)
    cfg = write_config(sim, text)
    line = one_error_line(cli("validate", cfg, cwd=tmp_path))
    lineno = next(i for i, l in enumerate(text.splitlines(), 1) if l.startswith(key + " "))
    assert f"config.txt:{lineno}: {key}" in line and words in line, line


def test_missing_topology_names_the_places_tried(sim, tmp_path):
    cfg = write_config(sim, run_py_config(topo="nothere"))
    line = one_error_line(cli("validate", cfg, cwd=tmp_path))
    assert "TOPOLOGY_FILE" in line and "mix/nothere.txt" in line


def test_pfc_file_has_every_frame_at_the_paused_device(tmp_path):
    # 4-to-1 incast with a small buffer: PFC pauses the senders' switch ports
    (tmp_path / "mix").mkdir()
    (tmp_path / "mix" / "topo.txt").write_text("6 1 5\n5\n" + "".join(f"{h} 5 100Gbps 0.001ms 0\n" for h in range(5)))
    (tmp_path / "mix" / "flow.txt").write_text("4\n" + "".join(f"{h} 4 3 100 2000000 0\n" for h in range(4)))
    text = run_py_config(buffer_size=1, qlen_start=0, qlen_end=0)
    cfg = tmp_path / "mix" / "config.txt"
    cfg.write_text(text)
    r = cli("run", cfg, "--kernel", "baseline", "--json", tmp_path / "r.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    d = json.loads((tmp_path / "r.json").read_text())
    lines = [l.split() for l in (tmp_path / "mix" / "pfc_topo_flow_dcqcn.txt").read_text().splitlines()]
    assert d["counters"]["pauses"] > 0
    assert sum(l[4] == "1" for l in lines) == d["counters"]["pauses"]
    assert sum(l[4] == "0" for l in lines) == d["counters"]["resumes"]
    times = [int(l[0]) for l in lines]
    assert times == sorted(times)
    # the switch (node 5) pauses hosts: the paused devices are the hosts' ports (if_index 1)
    assert all(l[1] in {"0", "1", "2", "3"} and l[2] == "0" and l[3] == "1" for l in lines)


def test_other_ecn_maps_and_error_rates_map_to_per_rate_keys(sim):
    # pmax differs per rate: a per-rate ECN map; ERROR_RATE_PER_LINK fills links the file gives 0
    topo = sim / "mix" / "topo.txt"
    topo.write_text(topo.read_text().replace("4 6 100Gbps 0.001ms 0", "4 6 400Gbps 0.001ms 0.01"))
    text = run_py_config(pmax_map="2 100000000000 0.2 400000000000 0.8").replace(
        "ERROR_RATE_PER_LINK 0.0000", "ERROR_RATE_PER_LINK 0.001")
    cfg = read_hpcc_config(write_config(sim, text))
    assert cfg.scenario["fabric"]["ecn_map"] == {
        "100000000000bps": {"kmin_kb": 400, "kmax_kb": 1600, "pmax": 0.2},
        "400000000000bps": {"kmin_kb": 1600, "kmax_kb": 6400, "pmax": 0.8},
    }
    from ns3wormhole.scenario import scenario_from_mapping

    sc = scenario_from_mapping(cfg.scenario, base_dir=cfg.base)
    assert {e[0]: e[3] for e in sc.fabric.ecn_map} == {100_000_000_000: 0.2, 400_000_000_000: 0.8}
    er = dict(zip(zip(sc.topology.link_a.tolist(), sc.topology.link_b.tolist()), sc.topology.error_rate.tolist()))
    assert er[(4, 6)] == 0.01 and er[(0, 4)] == 0.001


@pytest.mark.parametrize("cc,mode,name", [("hp", 3, "hpcc"), ("timely", 7, "timely"), ("dctcp", 8, "dctcp")])
def test_other_congestion_controls(sim, tmp_path, cc, mode, name):
    cfg_path = write_config(sim, run_py_config(cc=cc, qlen_end=0, qlen_start=0))
    if not fabric_has("cc"):
        line = one_error_line(cli("validate", cfg_path, cwd=tmp_path))
        assert f"CC_MODE: {mode}" in line and "not modelled yet" in line
        return
    cfg = read_hpcc_config(cfg_path)
    fab = cfg.scenario["fabric"]
    assert fab["cc"] == name
    # DCQCN's own timers have no effect under another algorithm: named, not set
    assert {"ALPHA_RESUME_INTERVAL", "RP_TIMER", "RATE_DECREASE_INTERVAL"} <= set(cfg.ignored)
    assert "rp_timer_us" not in fab
    if name == "hpcc":
        assert fab["hpcc_rate_ai_mbps"] == 40 and fab["hpcc_u_target"] == 0.95 and fab["hpcc_int_multi"] == 4
        assert fab["hpcc_fast_react"] is True and fab["window"] is True and fab["ack_high_priority"] is False
    elif name == "timely":
        assert fab["timely_rate_ai_mbps"] == 100 and fab["timely_rate_hai_mbps"] == 500
    else:
        assert fab["dctcp_rate_ai_mbps"] == 615 and fab["dctcp_ewma_gain"] == 0.0625
        assert fab["kmin_bytes_per_100g"] == fab["kmax_bytes_per_100g"] == 300_000 and fab["pmax"] == 1.0
    r = cli("run", cfg_path, "--kernel", "baseline", "--json", tmp_path / "r.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "r.json").read_text())["flows_completed"] == 3


def test_link_down_is_a_link_event_at_2s_plus_its_microseconds(sim):
    from ns3wormhole.scenario import scenario_from_mapping

    cfg = read_hpcc_config(write_config(sim, run_py_config(link_down="1500 4 6")))
    assert cfg.scenario["events"] == [{"time": 2_001_500_000, "nodes": [4, 6], "action": "down"}]
    scenario_from_mapping(cfg.scenario, base_dir=cfg.base)  # a valid scenario
    assert "events" not in read_hpcc_config(write_config(sim, run_py_config())).scenario  # "0 0 0": none


def test_compare_writes_both_kernels_hpcc_files(sim, tmp_path):
    cfg = write_config(sim, run_py_config(qlen_start=0, qlen_end=0))
    r = cli("compare", cfg, "--json", tmp_path / "c.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    d = json.loads((tmp_path / "c.json").read_text())
    mix = sim / "mix"
    for name, key in (("fct_topo_flow_dcqcn.txt", "fct_wormhole_ns"), ("fct_topo_flow_dcqcn_baseline.txt", "fct_baseline_ns")):
        got = sorted(int(l.split()[6]) for l in (mix / name).read_text().splitlines())
        assert got == sorted(p[key] for p in d["per_flow"]), name
    assert (mix / "pfc_topo_flow_dcqcn_baseline.txt").exists() and (mix / "pfc_topo_flow_dcqcn.txt").exists()
    r = cli("show", cfg, cwd=tmp_path)
    assert r.returncode == 0 and 'kind = "hpcc"' in r.stdout and "rp_timer_us = 300" in r.stdout, r.stderr
