"""Sweeps: grid files, every point in its own process, locally and on a real Dask
cluster (LocalCluster on loopback), results as a table, CSV and plot."""

from __future__ import annotations

import csv
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ns3wormhole.errors import InputError
from ns3wormhole.sweep import _make_table, load_sweep, run_sweep

from conftest import clean_env, ns3_wormhole_cmd

BASE = """
name = "sweep-base"
[topology]
kind = "star"
n_hosts = 5
[workload]
kind = "flows"
pattern = "incast"
bytes = "2MB"
"""

SWEEP = """
scenario = "base.toml"
mode = "compare"
[grid]
"wormhole.theta" = [0.03, 0.1]
"fabric.rp_timer_us" = [300]
"""


def setup_files(tmp_path: Path, sweep: str = SWEEP) -> Path:
    (tmp_path / "base.toml").write_text(textwrap.dedent(BASE))
    p = tmp_path / "sweep.toml"
    p.write_text(textwrap.dedent(sweep))
    return p


def test_load_sweep_and_points(tmp_path):
    spec = load_sweep(setup_files(tmp_path))
    assert spec.mode == "compare" and spec.scenario == tmp_path / "base.toml"
    assert spec.points() == [{"wormhole.theta": 0.03, "fabric.rp_timer_us": 300},
                             {"wormhole.theta": 0.1, "fabric.rp_timer_us": 300}]


@pytest.mark.parametrize(
    "sweep, match",
    [
        ('scenario = "base.toml"\n[grid]\n"fabrik.mtu" = [1]\n', "not a scenario key path"),
        ('scenario = "base.toml"\n[grid]\n"wormhole.theta" = 0.1\n', "non-empty list"),
        ('scenario = "nothere.toml"\n[grid]\n"wormhole.theta" = [0.1]\n', "file not found"),
        ('scenario = "base.toml"\nmode = "fast"\n[grid]\n"wormhole.theta" = [0.1]\n', "mode"),
        ('scenario = "base.toml"\n', "grid"),
        ('scenario = "base.toml"\ncolour = 1\n[grid]\n"wormhole.theta" = [0.1]\n', "colour"),
    ],
)
def test_bad_sweep_files(tmp_path, sweep, match):
    with pytest.raises(InputError, match=match):
        load_sweep(setup_files(tmp_path, sweep))


def test_bad_point_is_rejected_before_running(tmp_path):
    p = setup_files(tmp_path, SWEEP.replace("[0.03, 0.1]", "[0.03, 7]"))
    with pytest.raises(InputError, match=r"sweep.toml:5: point 1 .*wormhole.theta"):
        run_sweep(p, out_dir=tmp_path / "out", workers=1)
    assert not (tmp_path / "out").exists()


def _events(csv_path: Path) -> list[tuple[str, str, str]]:
    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [(r["wormhole.theta"], r["baseline_events"], r["wormhole_events"]) for r in rows]


def test_sweep_locally(tmp_path):
    out = tmp_path / "out"
    table = run_sweep(setup_files(tmp_path), out_dir=out, workers=1)
    import pandas as pd

    assert isinstance(table, pd.DataFrame) and len(table) == 2
    for col in ("wormhole.theta", "fabric.rp_timer_us", "speedup", "event_ratio", "fct_error_mean", "fct_error_max",
                "baseline_wall_s", "wormhole_wall_s", "error"):
        assert col in table.columns
    assert (table["speedup"] > 0).all() and (table["error"] == "").all()
    assert sorted(table["wormhole.theta"]) == [0.03, 0.1]
    assert (out / "sweep.csv").is_file() and (out / "sweep.json").is_file()
    assert (out / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(set(table["pid"])) == 2  # each point in its own process


def test_table_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    arr = _make_table([{"point": 0, "x": 0.1, "speedup": 2.0, "error": ""},
                       {"point": 1, "x": 0.2, "speedup": None, "error": "boom"}], ["point", "x", "speedup", "error"])
    assert arr.dtype.names == ("point", "x", "speedup", "error")
    assert arr["speedup"][0] == 2.0 and arr["error"][1] == "boom"


def test_sweep_cli_on_dask_local_cluster(tmp_path):
    """A real dask.distributed cluster on loopback: two worker processes, one
    thread each; the CLI submits every point to it. Results match a local sweep."""
    distributed = pytest.importorskip("dask.distributed")
    p = setup_files(tmp_path)
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        r = subprocess.run(
            [*ns3_wormhole_cmd(), "sweep", str(p), "--out", str(tmp_path / "dask-out"), "--scheduler",
             cluster.scheduler_address],
            capture_output=True, text=True, timeout=120, env=clean_env(),
        )
    assert r.returncode == 0, r.stderr
    assert "Dask scheduler" in r.stderr and "speedup" in r.stdout
    r2 = subprocess.run([*ns3_wormhole_cmd(), "sweep", str(p), "--out", str(tmp_path / "local-out"), "--workers", "1",
                         "--quiet"], capture_output=True, text=True, timeout=120, env=clean_env())
    assert r2.returncode == 0 and r2.stdout == "", r2.stderr
    dask_rows = sorted(_events(tmp_path / "dask-out" / "sweep.csv"))
    assert len(dask_rows) == 2 and dask_rows == sorted(_events(tmp_path / "local-out" / "sweep.csv"))


def test_unreachable_scheduler_is_an_input_error(tmp_path):
    pytest.importorskip("dask.distributed")
    with pytest.raises(InputError, match=r"--scheduler: cannot connect to the Dask scheduler at tcp://127.0.0.1:9"):
        run_sweep(setup_files(tmp_path), out_dir=tmp_path / "o", scheduler="tcp://127.0.0.1:9", connect_timeout_s=1)
