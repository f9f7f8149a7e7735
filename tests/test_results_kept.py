"""Results are never lost once computed: output paths (JSON, report, sweep folder, memo
store) are checked before the first event, writes go to the file the shell would write,
a memo store that cannot take the new records is a warning, `memo info` changes nothing."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import warnings

import pytest

from conftest import clean_env
from test_cli import SMALL, cli, one_error_line, write

import ns3wormhole
from ns3wormhole import memo as memo_mod
from ns3wormhole.memo import MemoDatabase, MemoError

# A run that would take minutes: refusing it within the subprocess timeout shows the check
# came before the simulation.
LONG = SMALL.replace('bytes = "4MB"', 'bytes = "4GB"')


def test_json_through_a_symlink_writes_the_target(tmp_path):
    sc = write(tmp_path, SMALL)
    target = tmp_path / "real.json"
    target.write_text("{}")
    (tmp_path / "link.json").symlink_to(target)
    r = cli("run", sc, "--json", tmp_path / "link.json", "--quiet")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads(target.read_text())["flows_completed"] == 4


def test_json_onto_the_memo_database_or_the_scenario_is_refused(tmp_path):
    sc = write(tmp_path, LONG + '\n[wormhole]\nmemo_db = "m.db"\n')
    for out in (tmp_path / "m.db", sc):
        line = one_error_line(cli("run", sc, "--json", out, timeout=60))
        assert "--json" in line and "would be overwritten" in line
    assert not (tmp_path / "m.db").exists()


def test_report_and_memo_folders_are_checked_before_the_baseline_runs(tmp_path):
    sc = write(tmp_path, LONG)
    (tmp_path / "file").write_text("")
    line = one_error_line(cli("compare", sc, "--report", tmp_path / "file" / "rep", timeout=60))
    assert "--report" in line and "is not a folder" in line
    sc2 = write(tmp_path, LONG + '\n[wormhole]\nmemo_db = "no/such/dir/m.db"\n', "s2.toml")
    line = one_error_line(cli("compare", sc2, timeout=60))
    assert "s2.toml:" in line and "wormhole.memo_db" in line and "does not exist" in line


def test_sweep_out_under_a_regular_file_is_refused_before_running(tmp_path):
    write(tmp_path, LONG)
    (tmp_path / "file").write_text("")
    sw = write(tmp_path, 'scenario = "s.toml"\n[grid]\n"wormhole.theta" = [0.05]\n', "sw.toml")
    line = one_error_line(cli("sweep", sw, "--out", tmp_path / "file" / "out", timeout=60))
    assert "is not a folder" in line


def test_a_memo_store_that_cannot_be_written_is_a_warning_and_results_stay(tmp_path, monkeypatch):
    sc = ns3wormhole.load_scenario(write(tmp_path, SMALL + '\n[wormhole]\nmemo_db = "m.db"\n'))

    def refuse(self, scope, blobs):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(MemoDatabase, "save", refuse)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = sc.run("wormhole")
    assert res.completed.all()
    msgs = [str(w.message) for w in caught]
    assert any("m.db" in m and "not updated" in m for m in msgs), msgs


def _make_db(path):
    with MemoDatabase(path):
        pass


def _sql(path, statement, args=()):
    db = sqlite3.connect(path)
    with db:
        db.execute(statement, args)
    db.close()


def _snapshot(path):
    return path.read_bytes(), sorted(p.name for p in path.parent.iterdir())


def test_memo_info_never_creates_or_changes_a_file(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    before = _snapshot(empty)
    r = cli("memo", "info", empty)
    assert "empty file" in one_error_line(r)
    assert _snapshot(empty) == before
    r = cli("memo", "info", tmp_path / "missing.db")
    assert "no such memo database" in one_error_line(r)
    assert not (tmp_path / "missing.db").exists()

    norec = tmp_path / "norec.db"
    _make_db(norec)
    _sql(norec, "DROP TABLE records")
    before = _snapshot(norec)
    assert "no 'records' table" in one_error_line(cli("memo", "info", norec))
    assert _snapshot(norec) == before

    good = tmp_path / "good.db"
    _make_db(good)
    before = _snapshot(good)
    r = cli("memo", "info", good)
    assert r.returncode == 0 and "0 records" in r.stdout, r.stderr
    assert _snapshot(good) == before


@pytest.mark.parametrize("blob", ["some text", None])
def test_text_or_null_blobs_are_dropped_with_a_warning(tmp_path, blob):
    path = tmp_path / "m.db"
    _make_db(path)
    digest = hashlib.sha256(b"x").hexdigest()
    _sql(path, "INSERT INTO records VALUES ('s', ?, ?, 0)", (digest, blob))
    with MemoDatabase(path) as db, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert db.load("s") == []
    assert any("1 memo record(s)" in str(w.message) for w in caught)
    r = cli("memo", "info", path)
    assert r.returncode == 0 and "1 records" in r.stdout, r.stderr


def test_check_memo_path_reads_only(tmp_path):
    f = tmp_path / "foreign.db"
    _sql(f, "CREATE TABLE t (x)")
    before = _snapshot(f)
    with pytest.raises(MemoError, match="not an ns3-wormhole memo database"):
        memo_mod.check_memo_path(f)
    assert _snapshot(f) == before
    memo_mod.check_memo_path(tmp_path / "new.db")
    assert not (tmp_path / "new.db").exists()
    with pytest.raises(MemoError, match="does not exist"):
        memo_mod.check_memo_path(tmp_path / "no" / "m.db")


def test_warnings_are_one_line(tmp_path):
    sc_path = write(tmp_path, SMALL + '\n[wormhole]\nmemo_db = "m.db"\n')
    sc = ns3wormhole.load_scenario(sc_path)
    scope = memo_mod.scope_of(sc.fabric.to_ns3_attributes(), sc.wormhole.to_ns3_attributes())
    path = tmp_path / "m.db"
    _make_db(path)
    _sql(path, "INSERT INTO records VALUES (?, 'd', NULL, 0)", (scope,))
    r = cli("run", sc_path, "--quiet", env=clean_env())
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ns3-wormhole: warning: ") and "m.db" in lines[0], r.stderr
