"""Shared fixtures: compiling small ns-3 C++ programs against the installed
package, and running subprocesses with a clean environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "programs"
EXAMPLES = ROOT / "examples"
NS3_MODULES = ["core", "network", "internet", "applications", "point-to-point"]


def ns3_wormhole_cmd() -> list[str]:
    exe = shutil.which("ns3-wormhole", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "ns3wormhole.cli"]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "NS_GLOBAL_VALUE", "NS_LOG")}
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def compile_program(tmp_path_factory):
    """compile_program(source, link_wormhole=True) -> path of the executable."""
    out_dir = tmp_path_factory.mktemp("programs")
    from ns3wormhole import paths

    def build(source: Path, link_wormhole: bool = True, modules: list[str] | None = None) -> Path:
        exe = out_dir / (source.stem + ("" if link_wormhole else "-plain"))
        if exe.exists():
            return exe
        mods = modules or NS3_MODULES
        if link_wormhole:
            flags = paths.cflags() + paths.libs(mods)
        else:
            prefix = paths._ns3_lib_prefix()
            flags = [
                "-std=c++20", "-DNS3_LOG_ENABLE", "-DNS3_ASSERT_ENABLE", f"-I{paths.ns3_include_dir()}",
                f"-L{paths.ns3_lib_dir()}", *[f"-l{prefix}-{m}" for m in mods],
                f"-Wl,-rpath,{paths.ns3_lib_dir()}",
            ]
        cmd = ["g++", "-O1", str(source), *flags, "-o", str(exe)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, f"compile failed: {' '.join(cmd)}\n{proc.stderr}"
        return exe

    return build


def run(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 300) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env or clean_env(), timeout=timeout)
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout
