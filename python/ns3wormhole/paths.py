"""Where the installed native pieces live, and the flags a C++ ns-3 program
needs to use them (``ns3-wormhole config --cflags --libs``)."""

from __future__ import annotations

import os
from pathlib import Path


def _installed_dir() -> Path:
    """Where the build put the native pieces: beside this file in a normal install; in
    an editable one (pip install -e) the sources stay here and the build's files go to
    site-packages, beside the compiled module."""
    import importlib.util

    here = Path(__file__).resolve().parent
    if (here / "lib").is_dir():
        return here
    spec = importlib.util.find_spec("ns3wormhole._core")
    if spec is not None and spec.origin:
        return Path(spec.origin).resolve().parent
    return here


PACKAGE_DIR = _installed_dir()
LIB_DIR = PACKAGE_DIR / "lib"
INCLUDE_DIR = PACKAGE_DIR / "include"
LIBRARIES = ("ns3wormhole-kernel", "ns3wormhole-rdma", "ns3wormhole-workload")


def library_path(name: str) -> Path:
    """Absolute path of one of our shared libraries, e.g. ``ns3wormhole-kernel``."""
    path = LIB_DIR / f"lib{name}.so"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: is ns3wormhole installed (pip install .)?")
    return path


def available_libraries() -> list[Path]:
    return [LIB_DIR / f"lib{n}.so" for n in LIBRARIES if (LIB_DIR / f"lib{n}.so").exists()]


def _buildinfo():
    # Written by the CMake build; absent in a bare source tree.
    from . import _buildinfo as info

    return info


def ns3_include_dir() -> Path:
    return Path(_buildinfo().NS3_INCLUDE_DIR) if not _buildinfo().NS3_FROM_WHEEL else _wheel_dir() / "include"


def ns3_lib_dir() -> Path:
    return Path(_buildinfo().NS3_LIB_DIR) if not _buildinfo().NS3_FROM_WHEEL else _wheel_dir() / "lib64"


def _wheel_dir() -> Path:
    # The wheel used at build time lived in an isolated build environment; at
    # run time the same version is installed beside us.
    import importlib.util

    spec = importlib.util.find_spec("ns3")
    if spec is None:
        raise FileNotFoundError("the Python package `ns3` is not installed")
    if spec.origin:
        return Path(spec.origin).parent
    return Path(list(spec.submodule_search_locations)[0])


def cflags() -> list[str]:
    return [
        f"-std={getattr(_buildinfo(), 'PROGRAM_CXX_STD', 'c++20')}",
        "-DNS3_LOG_ENABLE",
        "-DNS3_ASSERT_ENABLE",
        *(["-DNS3WH_STOP_RETURNS_VOID"] if getattr(_buildinfo(), "PROGRAM_CXX_STD", "") == "c++17" else []),
        f"-I{INCLUDE_DIR}",
        f"-I{ns3_include_dir()}",
    ]


def libs(ns3_modules: list[str] | None = None) -> list[str]:
    """Link flags: our libraries (kept even though no symbol is referenced, so
    their TypeIds register), the requested ns-3 modules, and rpaths."""
    prefix = _ns3_lib_prefix()
    modules = ns3_modules or ["core", "network"]
    flags = [f"-L{LIB_DIR}", "-Wl,--no-as-needed"]
    flags += [f"-l{p.name[3:-3]}" for p in available_libraries()]
    flags += ["-Wl,--as-needed", f"-L{ns3_lib_dir()}"]
    flags += [f"-l{prefix}-{m}" for m in modules]
    flags += [f"-Wl,-rpath,{LIB_DIR}", f"-Wl,-rpath,{ns3_lib_dir()}"]
    return flags


def _ns3_lib_prefix() -> str:
    # "ns3.44-core" -> "ns3.44"
    core = next(n for n in _buildinfo().NS3_LIBRARY_NAMES if "-core" in n)
    return core.split("-core")[0]


def preload_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """Environment that loads the kernel into an unchanged, already-built ns-3
    program (LD_PRELOAD) and selects it and its event queue (NS_GLOBAL_VALUE;
    the queue changes no result, docs/why-not.md "The event queue")."""
    env = dict(os.environ if env is None else env)
    pre = [str(library_path("ns3wormhole-kernel"))]
    if env.get("LD_PRELOAD"):
        pre.append(env["LD_PRELOAD"])
    env["LD_PRELOAD"] = ":".join(pre)
    env["NS_GLOBAL_VALUE"] = "SimulatorImplementationType=ns3::WormholeSimulatorImpl;SchedulerType=ns3::WormholeEventQueue"
    return env
