"""Signals and crashes never lose results: SIGTERM behaves like Ctrl-C (partial JSON,
one line, exit 143), Ctrl-C in the first moments exits 130 without a traceback, and a
sweep point whose process dies is that point's error while the others still run."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import time

import psutil
import pytest

from conftest import clean_env, ns3_wormhole_cmd
from test_cli import LONG, SMALL, _final_lines, _interrupt_after_progress, write


def test_sigterm_writes_partial_json_and_exits_143(tmp_path):
    p = write(tmp_path, LONG)
    out = tmp_path / "run.json"
    rc, err = _interrupt_after_progress(["run", p, "--kernel", "baseline", "--json", out], tmp_path, signal.SIGTERM)
    assert rc == 143, err
    lines = _final_lines(err)
    assert len(lines) == 1 and "terminated" in lines[0] and "Traceback" not in err
    d = json.loads(out.read_text())
    assert d["interrupted"] is True and d["flows_completed"] < 8


@pytest.mark.parametrize("delay_s", [0.12, 0.2, 0.3])
def test_ctrl_c_right_after_start_exits_130_without_traceback(tmp_path, delay_s):
    p = write(tmp_path, LONG)
    proc = subprocess.Popen([*ns3_wormhole_cmd(), "run", str(p), "--kernel", "baseline"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=clean_env(), text=True)
    time.sleep(delay_s)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 1, err


def test_a_sweep_point_whose_process_dies_is_its_error_and_the_others_run(tmp_path):
    write(tmp_path, LONG.replace('bytes = "2GB"', 'bytes = "4MB"'))
    sw = write(tmp_path, 'scenario = "s.toml"\nmode = "run"\nkernel = "baseline"\n'
                         '[grid]\n"workload.bytes" = ["20GB", "4MB", "8MB"]\n', "sw.toml")
    out = tmp_path / "out"
    proc = subprocess.Popen([*ns3_wormhole_cmd(), "sweep", str(sw), "--out", str(out), "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(), text=True)
    try:
        victim = None
        deadline = time.monotonic() + 120
        while victim is None and time.monotonic() < deadline:
            for child in psutil.Process(proc.pid).children(recursive=True):
                try:
                    if "ns3wormhole.sweep" in " ".join(child.cmdline()):
                        victim = child
                except psutil.Error:
                    pass
            time.sleep(0.2)
        assert victim is not None, "no point process appeared"
        time.sleep(1.0)  # inside the 20 GB point's simulation
        victim.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert "1 of 3 points failed" in err and "Traceback" not in err, err
    rows = list(csv.DictReader((out / "sweep.csv").open()))
    by_point = {r["point"]: r for r in rows}
    assert set(by_point) == {"0", "1", "2"}
    assert "exited" in by_point["0"]["error"] and "-9" in by_point["0"]["error"]
    assert by_point["1"]["error"] == "" and by_point["2"]["error"] == ""
    assert int(float(by_point["1"]["flows_completed"])) == 8


def test_small_sweep_still_exits_0(tmp_path):
    write(tmp_path, SMALL)
    sw = write(tmp_path, 'scenario = "s.toml"\nmode = "run"\n[grid]\n"wormhole.theta" = [0.05]\n', "sw.toml")
    r = subprocess.run([*ns3_wormhole_cmd(), "sweep", str(sw), "--out", str(tmp_path / "o"), "--quiet"],
                       capture_output=True, text=True, env=clean_env(), timeout=300)
    assert r.returncode == 0, r.stderr



def _main_running(monkeypatch, func) -> int:
    """``cli.main`` with ``func`` as the command, pytest's signal handlers kept."""
    from ns3wormhole import cli

    monkeypatch.setattr(signal, "signal", lambda *a: None)
    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(parser, "parse_args", lambda argv: type("A", (), {"func": staticmethod(func)})())
    return cli.main([])


def test_a_stop_signal_turned_into_an_import_error_still_exits_as_stopped(monkeypatch, capsys):
    """A Ctrl-C that lands inside an extension module's import surfaces as
    ImportError("initialization failed"), seen under load as exit 2 and an
    error line: it is still the user's stop (130), said as such."""
    from ns3wormhole import cli

    def interrupted_import(args):
        cli._STOPPED_BY.append(signal.SIGINT)  # what the handler records
        raise ImportError("initialization failed")

    assert _main_running(monkeypatch, interrupted_import) == 130
    err = capsys.readouterr().err
    assert "error" not in err and "interrupted" in err


def test_an_import_error_without_a_stop_is_an_error(monkeypatch, capsys):
    def broken(args):
        raise ImportError("initialization failed")

    assert _main_running(monkeypatch, broken) == 2
    assert "error: initialization failed" in capsys.readouterr().err
