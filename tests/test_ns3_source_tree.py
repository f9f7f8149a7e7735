"""Opt-in: ns3-patches/add-to-ns3.sh makes our kernel, RDMA model and examples a
contrib module of an ns-3 source tree that ns-3's own build compiles and runs.

Slow (it builds ns-3's core and network modules): deselected by default. Run with

    NS3_SOURCE_DIR=/path/to/ns-3.37 .venv/bin/python -m pytest -m ns3_source tests/test_ns3_source_tree.py

e.g. on Debian's source package: add a deb-src line, `apt-get source ns3`, apt-get install libboost-dev.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.ns3_source


def ns3(tree: Path, *args: str, timeout: float = 7200) -> str:
    proc = subprocess.run(["nice", "./ns3", *args], cwd=tree, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"./ns3 {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def fcts(out: str) -> list[tuple[int, int]]:
    """(flow, fct_ns) rows of rdma-incast's table."""
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("flow src dst bytes"))
    rows = []
    for l in lines[start + 1:]:
        if not re.match(r"^\d+ ", l):
            break
        t = l.split()
        rows.append((int(t[0]), int(t[5])))
    return rows


def test_contrib_module_builds_and_runs_under_both_kernels():
    tree = os.environ.get("NS3_SOURCE_DIR")
    if not tree:
        pytest.fail("set NS3_SOURCE_DIR to an ns-3 source tree (the folder with the ./ns3 script)")
    tree = Path(tree)
    subprocess.run([str(ROOT / "ns3-patches" / "add-to-ns3.sh"), str(tree)], check=True, capture_output=True)
    ns3(tree, "configure", "-d", "release", "--enable-examples", "--enable-modules=core;network;wormhole")
    ns3(tree, "build", "-j", "2")
    args = "rdma-incast --senders=4 --bytes=4000000"
    base = ns3(tree, "run", "--no-build", args)
    exact = ns3(tree, "run", "--no-build",
                f"{args} --SimulatorImplementationType=ns3::WormholeSimulatorImpl "
                "--ns3::WormholeSimulatorImpl::FastForward=false")
    assert len(fcts(base)) == 4
    # without fast-forward the kernel is exact: same FCTs and the same event count
    assert fcts(exact) == fcts(base)
    events = re.compile(r"^events (\d+)", re.M)
    assert events.search(exact).group(1) == events.search(base).group(1)
    # flows long enough to turn steady: the kernel fast-forwards (fewer events), every
    # flow completes, each FCT within 5% of the default kernel's
    args = "rdma-incast --senders=2 --bytes=64000000"
    base = ns3(tree, "run", "--no-build", args)
    fast = ns3(tree, "run", "--no-build", f"{args} --SimulatorImplementationType=ns3::WormholeSimulatorImpl")
    assert int(events.search(fast).group(1)) < int(events.search(base).group(1))
    assert len(fcts(fast)) == len(fcts(base)) == 2
    for (i, b), (j, w) in zip(fcts(base), fcts(fast)):
        assert i == j and abs(w - b) <= 0.05 * b
