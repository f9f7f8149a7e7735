"""ns3wormhole.limits: values the simulator cannot represent, and physically meaningless
combinations, are refused when the scenario loads (before anything runs) with one
message naming the file, the line and the key. Each case below aborted ns-3, hung, or
ended in an internal error (or was silently coerced) before the limits existed."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from conftest import ns3_wormhole_cmd  # noqa: F401  (the CLI cases import it via test_cli)
from test_cli import cli, one_error_line

from ns3wormhole import limits
from ns3wormhole.errors import InputError
from ns3wormhole.scenario import load_scenario

STAR = """
[topology]
kind = "star"
n_hosts = 5
{topo}
[fabric]
{fabric}
[workload]
kind = "flows"
pattern = "{pattern}"
bytes = {bytes}
{wl}
[wormhole]
{wh}
"""

LLM = """
[topology]
kind = "rail_optimized"
n_servers = 2
gpus_per_server = 4
[workload]
kind = "llm"
{wl}
[workload.model]
num_layers = 2
hidden = {hidden}
heads = 4
[workload.parallel]
tp = {tp}
dp = {dp}
"""


def star(topo="", fabric="", wl="", wh="", bytes='"2MB"', pattern="incast"):
    return STAR.format(topo=topo, fabric=fabric, wl=wl, wh=wh, bytes=bytes, pattern=pattern)


def llm(wl="", hidden=256, tp=4, dp=2):
    return LLM.format(wl=wl, hidden=hidden, tp=tp, dp=dp)


CASES = {
    # were SIGABRT (ns-3 asserts)
    "max_extrapolation_nan": (star(wh="max_extrapolation = nan"), "wormhole.max_extrapolation", "finite"),
    "max_extrapolation_inf": (star(wh="max_extrapolation = inf"), "wormhole.max_extrapolation", "finite"),
    "ifg_ns_huge": (star(fabric="ifg_ns = 10000000000000000000"), "fabric.ifg_ns", "beyond"),
    "queue_sample_huge": (star(fabric="queue_sample_interval_ns = 9000000000000000000"),
                          "fabric.queue_sample_interval_ns", "beyond"),
    "rate_sample_huge": (star(fabric="rate_sample_interval_ns = 9000000000000000000"),
                         "fabric.rate_sample_interval_ns", "beyond"),
    "rp_timer_1e16": (star(fabric="rp_timer_us = 1e16"), "fabric.rp_timer_us", "beyond"),
    "rp_timer_1e20": (star(fabric="rp_timer_us = 1e20"), "fabric.rp_timer_us", "beyond"),
    "optimizer_2e63": (llm(wl="optimizer_ns = 9223372036854775808"), "workload.optimizer_ns", "beyond"),
    # were hangs
    "flow_2e63_bytes": (star(bytes='"9.3e18"'), "workload.bytes", "beyond"),
    "start_2e63": (star(wl="start = 9223372036854775807"), "workload.start", "beyond"),
    "optimizer_2e62": (llm(wl="optimizer_ns = 4611686018427387904"), "workload.optimizer_ns", "beyond"),
    "iterations_1e9": (llm(wl="iterations = 1000000000"), "workload.iterations", "DAG nodes"),
    "rto_below_rtt": (star(topo='delay = "10ms"', bytes='"10KB"'), "fabric.retransmit_timeout_us", "round trip"),
    # were internal errors
    "rate_1e30": (star(topo='rate = "1e30bps"'), "topology.rate", "out of range"),
    "delay_1e30s": (star(topo='delay = "1e30s"'), "topology.delay", "beyond"),
    "gap_2e64": (star(pattern="staggered", wl='gap = "18446744073709551616ns"'), "workload.gap", "beyond"),
    "window_inf": (star(wh="window = inf"), "wormhole.window", "whole number"),
    "min_skip_inf": (star(wh="min_skip_us = inf"), "wormhole.min_skip_us", "finite"),
    "tflops_tiny": (llm(wl="effective_tflops = 1e-300"), "workload.effective_tflops", "beyond"),
    "bwd_factor_inf": (llm(wl="bwd_factor = inf"), "workload.bwd_factor", "finite"),
    "layer_fwd_2e70": (llm(wl="layer_fwd_ns = 1180591620717411303424"), "workload.layer_fwd_ns", "beyond"),
    "hidden_2e32": (llm(hidden=4294967296), "workload.model.hidden", "too large"),
    "n_hosts_1e11": (star().replace("n_hosts = 5", "n_hosts = 100000000000"), "topology.n_hosts", "memory"),
    "stop_2e63": ("stop = 9223372036854775808\n" + star(), "stop", "beyond"),
    # were coerced
    "window_2.7": (star(wh="window = 2.7"), "wormhole.window", "whole number"),
    "bytes_1.5": (star(bytes="1.5"), "workload.bytes", "whole number of bytes"),
    "tp_wider_than_server": (llm(tp=8, dp=1), "workload.parallel.tp", "wider than a server"),
    # named no key before
    "window_nan": (star(wh="window = nan"), "wormhole.window", "whole number"),
    "min_skip_nan": (star(wh="min_skip_us = nan"), "wormhole.min_skip_us", "finite"),
    "margin_nan": (star(wh="completion_margin_us = nan"), "wormhole.completion_margin_us", "finite"),
    "window_huge": (star(wh="window = 10000000000000"), "wormhole.window", "out of range"),
    "tflops_zero": (llm(wl="effective_tflops = 0"), "workload.effective_tflops", "> 0"),
    "bwd_factor_negative": (llm(wl="bwd_factor = -1.0"), "workload.bwd_factor", "> 0"),
    "seed_huge": ("seed = 99999999999\n" + star(), "seed", "out of range"),
}


def _line_of(text: str, key: str) -> int:
    """The line the error should point at: the key's own line."""
    leaf = key.split(".")[-1]
    for i, line in enumerate(text.splitlines(), start=1):
        if re.match(rf"\s*{re.escape(leaf)}\s*=", line):
            return i
    table = f"[{key.split('.')[0]}]"  # a default value: its table's header
    return next(i for i, line in enumerate(text.splitlines(), start=1) if line.strip() == table)


@pytest.mark.parametrize("name", list(CASES))
def test_refused_at_load_naming_file_line_and_key(tmp_path, name):
    text, key, reason = CASES[name]
    path = tmp_path / f"{name}.toml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(InputError) as e:
        load_scenario(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}:{_line_of(path.read_text(), key)}: {key}: "), msg
    assert reason in msg, msg
    assert "\n" not in msg


@pytest.mark.parametrize("name", ["rp_timer_1e16", "start_2e63", "iterations_1e9", "rate_1e30"])
def test_cli_exits_2_with_one_line(tmp_path, name):
    text, key, _ = CASES[name]
    path = tmp_path / f"{name}.toml"
    path.write_text(textwrap.dedent(text))
    line = one_error_line(cli("run", path, timeout=60))
    assert f"{path}:" in line and key in line


def test_hpcc_files_beyond_the_limits_name_file_and_line(tmp_path):
    topo = tmp_path / "topo.txt"
    topo.write_text("1000000000000 1 999\n0\n")
    sc = tmp_path / "s.toml"
    sc.write_text('[topology]\nkind = "hpcc"\nfile = "topo.txt"\n[workload]\nkind = "flows"\nfile = "flows.txt"\n')
    with pytest.raises(InputError, match=rf"^{re.escape(str(topo))}:1: .*memory"):
        load_scenario(sc)
    topo.write_text("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n")
    flows = tmp_path / "flows.txt"
    flows.write_text("1000000000000\n")
    with pytest.raises(InputError, match=rf"^{re.escape(str(flows))}:1: .*memory"):
        load_scenario(sc)
    flows.write_text(f"1\n0 1 3 100 {2**63 + 1} 0\n")
    with pytest.raises(InputError, match=rf"^{re.escape(str(flows))}:2: .*beyond"):
        load_scenario(sc)
    flows.write_text("1\n0 1 3 100 1000 99999999999\n")
    with pytest.raises(InputError, match=rf"^{re.escape(str(flows))}:2: .*beyond"):
        load_scenario(sc)
    flows.write_text("1\n0 1 3 100 1000 0\n")
    topo.write_text("3 1 2\n2\n0 2 1e30bps 1us 0\n1 2 100Gbps 1us 0\n")
    with pytest.raises(InputError, match=rf"^{re.escape(str(topo))}:3: .*out of range"):
        load_scenario(sc)


AICB = """HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: {ga} all_gpus: {gpus}
1
layer 0 {fwd} ALLREDUCE {nbytes} 100 NONE 0 100 ALLREDUCE 1000 10
"""


@pytest.mark.parametrize("ga,gpus,fwd,nbytes,reason", [
    ("10000000", "4", "100", "1000", "DAG nodes"),
    ("1", "4.4", "100", "1000", "whole number"),
    ("1", "4", "100", "0.4", "whole number"),
    ("1", "4", "inf", "1000", "finite"),
    ("1", "4", "1e400", "1000", "finite"),
    ("1", "4", "1e300", "1000", "beyond"),
])
def test_aicb_values_beyond_the_limits(tmp_path, ga, gpus, fwd, nbytes, reason):
    (tmp_path / "w.txt").write_text(AICB.format(ga=ga, gpus=gpus, fwd=fwd, nbytes=nbytes))
    sc = tmp_path / "s.toml"
    sc.write_text('[topology]\nkind = "rail_optimized"\nn_servers = 2\ngpus_per_server = 2\n'
                  '[workload]\nkind = "llm"\naicb = "w.txt"\n')
    with pytest.raises(InputError, match=reason) as e:
        load_scenario(sc)
    assert str(sc) in str(e.value) or "w.txt:" in str(e.value)


def test_deep_nesting_and_bad_overrides(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text("x = " + "[" * 500 + "]" * 500 + "\n")
    with pytest.raises(InputError, match="nested too deeply"):
        load_scenario(sc)
    sc.write_text(textwrap.dedent(star()))
    with pytest.raises(TypeError, match="overrides must be a mapping"):
        load_scenario(sc, overrides="abc")
    with pytest.raises(TypeError, match="key paths are strings"):
        load_scenario(sc, overrides={1: 2})


def test_the_horizon_is_what_the_readme_says():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert f"{limits.HORIZON_NS // 10**9} s" in readme and f"{limits.MAX_NODES:,}" in readme


def test_limits_accept_what_is_inside_them(tmp_path):
    """A flow ending just inside the horizon and a timeout just above the round trip load."""
    sc = tmp_path / "s.toml"
    # 2 hosts' links of 1 us: base round trip >= 4 us plus two 1048-byte frames at 100 Gbps
    sc.write_text(textwrap.dedent(star(fabric="retransmit_timeout_us = 4.2", wl='start = "999s"', bytes='"1MB"')))
    s = load_scenario(sc)
    assert int(s.flows.start_ns[0]) == 999 * 10**9


def test_keys_of_other_tables_are_within_the_limits_too(tmp_path):
    """[[events]] times and [fabric] ecn_map entries (added by the link-event and MMU work)."""
    sc = tmp_path / "s.toml"
    sc.write_text(textwrap.dedent(star()) + '\n[[events]]\ntime = 9223372036854775808\nlink = 0\naction = "down"\n')
    line = sc.read_text().splitlines().index("time = 9223372036854775808") + 1
    with pytest.raises(InputError, match=rf"^{re.escape(str(sc))}:{line}: events\[0\]\.time: .*beyond"):
        load_scenario(sc)
    for entry, reason in (('"1e30bps" = {kmin_kb = 1, kmax_kb = 2, pmax = 0.5}', "above 10 Tbps"),
                          ('"100Gbps" = {kmin_kb = 1, kmax_kb = 1e30, pmax = 0.5}', "too large")):
        sc.write_text(textwrap.dedent(star(fabric=f"ecn_map = {{ {entry} }}")))
        line = next(i for i, t in enumerate(sc.read_text().splitlines(), 1) if t.startswith("ecn_map"))
        with pytest.raises(InputError, match=rf"^{re.escape(str(sc))}:{line}: fabric\.ecn_map\..*{reason}"):
            load_scenario(sc)


def test_a_gpu_computing_beyond_the_horizon_is_refused(tmp_path):
    """Each compute delay fits, but one GPU runs them one after another for over 1000 s."""
    sc = tmp_path / "s.toml"
    sc.write_text(textwrap.dedent(llm(wl='layer_fwd_ns = "100s"\niterations = 4')))
    with pytest.raises(InputError, match=r"workload: GPU \d+ computes for .* in all, beyond"):
        load_scenario(sc)
