"""The Python API refuses misuse with a clear exception instead of aborting the
interpreter or hanging: a second simulation while one runs (another thread, or the
progress callback), a progress callback that raises (it stops the run as Ctrl-C does)."""

from __future__ import annotations

import textwrap
import threading
import warnings

import pytest

import ns3wormhole
from test_cli import SMALL

def scenario(tmp_path, size="2MB"):
    p = tmp_path / "s.toml"
    p.write_text(textwrap.dedent(SMALL.replace('bytes = "4MB"', f'bytes = "{size}"')))
    return ns3wormhole.load_scenario(p)


def test_a_progress_callback_that_raises_stops_the_run_as_ctrl_c_does(tmp_path):
    sc = scenario(tmp_path, "128MB")
    calls = []

    def progress(now_ns, done, total):
        calls.append(now_ns)
        raise ValueError("display broke")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = sc.run("baseline", progress=progress)
    assert calls and res.interrupted and not res.completed.all()
    assert any("display broke" in str(w.message) for w in caught)
    # and the process is fine afterwards: the same scenario runs to the end
    assert sc.run("baseline").completed.all()


def test_a_progress_callback_that_starts_a_simulation_gets_a_runtime_error(tmp_path):
    sc = scenario(tmp_path, "128MB")
    inner: list[BaseException] = []

    def progress(now_ns, done, total):
        try:
            sc.run("baseline")
        except RuntimeError as exc:
            inner.append(exc)
            raise

    # The callback comes every 200 ms of wall time: the outer run is the
    # baseline's (seconds), as Wormhole may now finish this incast sooner.
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        res = sc.run("baseline", progress=progress)
    assert inner and "another simulation is running" in str(inner[0])
    assert res.interrupted


def test_two_threads_at_once_one_gets_a_runtime_error(tmp_path):
    sc = scenario(tmp_path, "128MB")
    started = threading.Event()
    results: dict[str, object] = {}

    def first():
        def progress(now_ns, done, total):
            started.set()

        results["first"] = sc.run("baseline", progress=progress)

    t = threading.Thread(target=first)
    t.start()
    assert started.wait(120), "the first run never reported progress"
    with pytest.raises(RuntimeError, match="another simulation is running"):
        sc.run("baseline")
    t.join(300)
    assert results["first"].completed.all()


def test_overrides_must_be_a_mapping(tmp_path):
    p = scenario(tmp_path).path
    with pytest.raises(TypeError, match="overrides must be a mapping"):
        ns3wormhole.load_scenario(p, overrides="abc")
