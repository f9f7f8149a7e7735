"""The daily workflow on the command line: --set and --seed, validate, show,
presets, --out-dir files, compare --noise and --repeat."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from test_cli import SMALL, cli, one_error_line, write

from ns3wormhole.scenario import load_scenario, parse_toml
from ns3wormhole.workload import preset_names


def run_json(tmp_path: Path, *args, name: str = "r.json") -> dict:
    r = cli("run", *args, "--json", tmp_path / name, "--quiet")
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / name).read_text())


def test_seed_and_set_equal_editing_the_file(tmp_path):
    s = write(tmp_path, SMALL)
    edited = write(tmp_path, SMALL.replace('name = "small-incast"', 'name = "small-incast"\nseed = 7')
                   .replace('bytes = "4MB"', 'bytes = "2MB"') + "[fabric]\nrp_timer_us = 900\n", "e.toml")
    a = run_json(tmp_path, s, "--kernel", "baseline", "--seed", "7", "--set", 'workload.bytes="2MB"',
                 "--set", "fabric.rp_timer_us=900", name="a.json")
    b = run_json(tmp_path, edited, "--kernel", "baseline", name="b.json")
    assert [f["fct_ns"] for f in a["flows"]] == [f["fct_ns"] for f in b["flows"]]
    assert a["events"] == b["events"] and a["flows"][0]["bytes"] == 2_000_000
    # a bare word is taken as a string, so units need no extra quotes
    c = run_json(tmp_path, s, "--kernel", "baseline", "--seed", "7", "--set", "workload.bytes=2MB",
                 "--set", "fabric.rp_timer_us=900", name="c.json")
    assert c["events"] == a["events"]


def test_bad_overrides_are_one_line_errors(tmp_path):
    s = write(tmp_path, SMALL)
    assert "fabric.rp_timer_uss" in one_error_line(cli("run", s, "--set", "fabric.rp_timer_uss=3"))
    assert "KEY=VALUE" in one_error_line(cli("validate", s, "--set", "fabric.rp_timer_us"))
    assert "--seed" in one_error_line(cli("validate", s, "--seed", "-1"))


def test_validate_says_ok_or_the_error_without_simulating(tmp_path):
    s = write(tmp_path, SMALL)
    r = cli("validate", s)
    assert r.returncode == 0 and r.stdout.startswith("ok: small-incast: 4 flows"), r.stdout
    bad = write(tmp_path, SMALL + "[fabric]\nmtu_bytes = 20\n", "bad.toml")
    assert "fabric.mtu_bytes" in one_error_line(cli("validate", bad))


def test_show_prints_every_default_and_loads_back(tmp_path):
    s = write(tmp_path, SMALL)
    r = cli("show", s, "--set", "wormhole.theta=0.1")
    assert r.returncode == 0, r.stderr
    data = parse_toml(r.stdout, "show")
    assert data["fabric"]["rp_timer_us"] == 300 and data["wormhole"]["theta"] == 0.1
    assert data["topology"]["rate"] == "100Gbps"
    shown = write(tmp_path, r.stdout, "shown.toml")
    a, b = load_scenario(s, overrides={"wormhole.theta": 0.1}), load_scenario(shown)
    assert a.fabric == b.fabric and a.wormhole == b.wormhole
    assert (a.flows.bytes == b.flows.bytes).all() and (a.flows.dst == b.flows.dst).all()


def test_presets_lists_every_preset():
    r = cli("presets")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["name", "model"]
    assert [l.split()[0] for l in lines[1:]] == preset_names()


def test_run_out_dir(tmp_path):
    s = write(tmp_path, SMALL + "[fabric]\nqueue_sample_interval_ns = 10000\nrate_sample_interval_ns = 10000\n")
    d = run_json(tmp_path, s, "--out-dir", tmp_path / "out")
    rows = list(csv.DictReader((tmp_path / "out" / "flows.csv").open()))
    assert [int(r["fct_ns"]) for r in rows] == [f["fct_ns"] for f in d["flows"]]
    for r, f in zip(rows, d["flows"]):
        assert float(r["ideal_fct_ns"]) == f["ideal_fct_ns"] > 0
        assert abs(float(r["slowdown"]) - f["fct_ns"] / f["ideal_fct_ns"]) < 1e-5 * float(r["slowdown"])
    assert len((tmp_path / "out" / "fct.txt").read_text().splitlines()) == len(d["flows"])
    assert (tmp_path / "out" / "pfc.txt").exists()
    assert (tmp_path / "out" / "queues.csv").read_text().startswith("time_ns,node,link,bytes\n")
    assert (tmp_path / "out" / "rates.csv").read_text().startswith("time_ns,flow,rate_bps,delivered_bytes\n")


def test_compare_out_dir_noise_and_repeat(tmp_path):
    s = write(tmp_path, SMALL)
    r = cli("compare", s, "--noise", "2", "--repeat", "2", "--out-dir", tmp_path / "out", "--json", tmp_path / "c.json")
    assert r.returncode == 0, r.stderr
    d = json.loads((tmp_path / "c.json").read_text())
    n = d["noise"]
    assert n["runs"] == 2 and len(n["spread_runs"]["fct_mean"]) == 2
    for k in ("fct_mean", "fct_max", "makespan"):
        assert n["spread"][k] == max(n["spread_runs"]["fct_max" if k == "fct_max" else k])
    assert n["inside"]["fct_max"] == (d["fct_error"]["max"] <= n["spread"]["fct_max"])
    # Judged against the larger of the spread and the target: "OUTSIDE" only past both.
    for k, ours in (("fct_mean", d["fct_error"]["mean"]), ("fct_max", d["fct_error"]["max"]),
                    ("makespan", d["makespan_error"])):
        tol = max(n["spread"][k], n["targets"][k])
        assert (n["judged"][k] == "OUTSIDE") == (ours > tol)
    assert n["verdict"] in r.stdout and "reference's own spread" in r.stdout
    rep = d["repeat"]
    assert len(rep["wall_s"]["baseline"]) == len(rep["wall_s"]["wormhole"]) == 2
    assert d["speedup"] == rep["median_wall_s"]["baseline"] / rep["median_wall_s"]["wormhole"]
    rows = list(csv.DictReader((tmp_path / "out" / "flows.csv").open()))
    assert len(rows) == d["flows"]
    for row, p in zip(rows, d["per_flow"]):
        assert int(row["fct_baseline_ns"]) == p["fct_baseline_ns"] and int(row["fct_wormhole_ns"]) == p["fct_wormhole_ns"]
    for kernel in ("baseline", "wormhole"):
        assert (tmp_path / "out" / kernel / "fct.txt").exists()
