"""The ns3-wormhole command end to end (installed entry point, subprocesses): exit
codes and one-line errors, the JSON of run and compare, reports, and Ctrl-C."""

from __future__ import annotations

import json
import os
import select
import signal
import struct
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from conftest import EXAMPLES, clean_env, ns3_wormhole_cmd

SMALL = """
name = "small-incast"
[topology]
kind = "star"
n_hosts = 5
[workload]
kind = "flows"
pattern = "incast"
bytes = "4MB"
"""


def cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*ns3_wormhole_cmd(), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout,
        env=env or clean_env(),
    )


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def one_error_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("ns3-wormhole: error: ")
    return lines[0]


# --------------------------------------------------------------------------- help


@pytest.mark.parametrize("command", ["run", "compare", "sweep"])
def test_help_has_examples(command):
    r = cli(command, "--help")
    assert r.returncode == 0 and "examples:" in r.stdout and f"ns3-wormhole {command}" in r.stdout


def test_top_level_help_lists_commands():
    r = cli("--help")
    assert r.returncode == 0
    for word in ("run", "compare", "sweep", "config", "info", "exit codes"):
        assert word in r.stdout


# --------------------------------------------------------------------------- errors: exit 2, one line


@pytest.mark.parametrize(
    "text, expect",
    [
        (SMALL + "[fabric]\nmtu_bytes = 20\n", ":11: fabric.mtu_bytes: 20 bytes is out of range"),  # impossible value
        (SMALL + "[fabric\nmtu_bytes = 20\n", ":10: TOML syntax error"),  # malformed TOML, with its line
        (SMALL.replace("kind = \"flows\"", "kind = \"llm\"\npreset = \"gpt-99b\"").replace('pattern = "incast"\nbytes = "4MB"\n', ""),
         ": workload.preset: unknown preset 'gpt-99b'"),  # unknown preset
        (SMALL.replace('kind = "star"\nn_hosts = 5', 'kind = "hpcc"\nfile = "missing-topo.txt"'),
         ":5: topology.file: file not found"),  # missing referenced file
        (SMALL + "[wormhole]\nthetta = 0.1\n", ":11: wormhole.thetta: unknown key"),  # unknown key
        (SMALL.replace('"4MB"', '"-4MB"'), ":9: workload.bytes"),
    ],
    ids=["impossible-value", "toml-syntax", "unknown-preset", "missing-file", "unknown-key", "negative-size"],
)
def test_bad_scenarios_exit_2_with_one_line(tmp_path, text, expect):
    p = write(tmp_path, text)
    for command in ("run", "compare"):
        line = one_error_line(cli(command, p, "--json", tmp_path / "out.json"))
        assert str(p) in line and expect in line, line
    assert not (tmp_path / "out.json").exists()


def test_missing_scenario_and_bad_output_paths(tmp_path):
    line = one_error_line(cli("run", tmp_path / "nope.toml"))
    assert "nope.toml" in line and "not found" in line
    p = write(tmp_path, SMALL)
    line = one_error_line(cli("run", p, "--json", tmp_path / "no-such-dir" / "out.json"))
    assert "--json" in line and "no-such-dir" in line
    line = one_error_line(cli("sweep", tmp_path / "nope-sweep.toml"))
    assert "nope-sweep.toml" in line


def test_bad_kernel_is_a_usage_error(tmp_path):
    r = cli("run", write(tmp_path, SMALL), "--kernel", "turbo")
    assert r.returncode == 2 and "invalid choice" in r.stderr and "Traceback" not in r.stderr


# --------------------------------------------------------------------------- run and compare


def test_run_json(tmp_path):
    p = write(tmp_path, SMALL)
    out = tmp_path / "run.json"
    r = cli("run", p, "--kernel", "wormhole", "--json", out)
    assert r.returncode == 0, r.stderr
    assert "kernel     wormhole" in r.stdout and "events" in r.stdout
    d = json.loads(out.read_text())
    for key in ("kernel", "wall_s", "events", "sim_time_s", "flows", "iteration_times_ns", "stats", "counters", "interrupted"):
        assert key in d
    assert d["kernel"] == "wormhole" and d["interrupted"] is False and d["iteration_times_ns"] == []
    assert len(d["flows"]) == 4 and d["events"] > 0 and d["sim_time_s"] > 0 and d["wall_s"] > 0
    assert "fast_forwards" in d["stats"] and d["stats"]["events_executed"] == d["events"]
    f = d["flows"][0]
    assert set(f) >= {"id", "src", "dst", "bytes", "start_ns", "fct_ns"}
    assert f["bytes"] == 4_000_000 and f["dst"] == 4 and f["fct_ns"] > 0

    r = cli("run", p, "--kernel", "baseline", "--json", "-", "--quiet")  # JSON on stdout, nothing else
    assert r.returncode == 0 and r.stderr == ""
    assert json.loads(r.stdout)["kernel"] == "baseline"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_compare_json_and_report(tmp_path):
    pytest.importorskip("matplotlib")
    p = write(tmp_path, SMALL)
    out, rep = tmp_path / "cmp.json", tmp_path / "report"
    r = cli("compare", p, "--json", out, "--report", rep)
    assert r.returncode == 0, r.stderr
    assert "speedup" in r.stdout and "FCT error" in r.stdout and "report" in r.stdout
    d = json.loads(out.read_text())
    for key in ("speedup", "event_ratio", "fct_error", "makespan_error", "iteration_time_error", "flows",
                "baseline", "wormhole"):
        assert key in d
    assert d["speedup"] > 0 and d["event_ratio"] > 0 and d["flows"] == 4 and d["iteration_time_error"] is None
    assert set(d["fct_error"]) == {"mean", "p50", "p99", "max"}
    assert 0 <= d["fct_error"]["mean"] <= d["fct_error"]["max"] < 0.2
    assert {"wall_s", "events"} <= set(d["baseline"]) and {"wall_s", "events", "stats"} <= set(d["wormhole"])
    assert len(d["per_flow"]) == 4
    md = (rep / "report.md").read_text()
    assert "speedup" in md and "![FCT CDF](fct_cdf.png)" in md
    for name in ("fct_cdf.png", "fct_error.png", "rates.png"):
        w, h = _png_size(rep / name)
        assert w > 300 and h > 200


def test_compare_llm_json(tmp_path):
    text = (EXAMPLES / "gpt-tiny.toml").read_text().replace("iterations = 2", "iterations = 1")
    p = write(tmp_path, text)
    out = tmp_path / "cmp.json"
    r = cli("compare", p, "--json", out, "--quiet")
    assert r.returncode == 0 and r.stdout == "", r.stderr
    d = json.loads(out.read_text())
    assert d["iteration_time_error"] is not None and 0 <= d["iteration_time_error"] < 0.05
    assert len(d["baseline"]["iteration_times_ns"]) == 1 and d["flows"] > 0


# --------------------------------------------------------------------------- Ctrl-C

LONG = """
name = "long-incast"
[topology]
kind = "star"
n_hosts = 9
[workload]
kind = "flows"
pattern = "incast"
bytes = "2GB"
"""


def _interrupt_after_progress(args: list, tmp_path: Path, sig: int = signal.SIGINT) -> tuple[int, str]:
    """Start the command with a forced progress line, wait until the simulation
    reports progress (so it is inside Simulator::Run), then send ``sig``."""
    env = clean_env(NS3WH_PROGRESS="always")
    proc = subprocess.Popen([*ns3_wormhole_cmd(), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    err = b""
    deadline = time.monotonic() + 60
    try:
        while b"sim " not in err:
            assert time.monotonic() < deadline, "no progress line within 60 s"
            ready, _, _ = select.select([proc.stderr], [], [], 1.0)
            if ready:
                chunk = os.read(proc.stderr.fileno(), 4096)
                assert chunk, f"process ended early: {proc.wait()} {err!r}"
                err += chunk
        proc.send_signal(sig)
        out, rest = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, (err + rest).decode()


def _final_lines(stderr: str) -> list[str]:
    text = stderr.split("\r")[-1].replace("\x1b[K", "")
    return [ln for ln in text.splitlines() if ln.strip()]


def test_ctrl_c_run_writes_partial_json(tmp_path):
    p = write(tmp_path, LONG)
    out = tmp_path / "run.json"
    rc, err = _interrupt_after_progress(["run", p, "--kernel", "baseline", "--json", out], tmp_path)
    assert rc == 130, err
    lines = _final_lines(err)
    assert len(lines) == 1 and "interrupted" in lines[0] and "Traceback" not in err
    d = json.loads(out.read_text())
    assert d["interrupted"] is True and 0 < d["sim_time_s"] < 1.0
    assert d["flows_completed"] < 8 and any(f["fct_ns"] is None for f in d["flows"])


def test_ctrl_c_compare_writes_partial_json(tmp_path):
    p = write(tmp_path, LONG)
    out = tmp_path / "cmp.json"
    rc, err = _interrupt_after_progress(["compare", p, "--json", out], tmp_path)
    assert rc == 130, err
    assert len(_final_lines(err)) == 1 and "Traceback" not in err
    d = json.loads(out.read_text())
    assert d["interrupted"] is True and d["wormhole"] is None and d["speedup"] is None
    assert d["baseline"]["interrupted"] is True and d["baseline"]["events"] > 0
