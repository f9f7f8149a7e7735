"""ns3wormhole: memoization and fast-forwarding for packet-level ns-3 simulation of
RoCEv2 fabrics under LLM-training traffic.

Entry points:
  * ``ns3wormhole.use_wormhole()`` -- one line that makes an unchanged ns-3 Python
    script (``from ns import ns``) run under ``ns3::WormholeSimulatorImpl``;
  * ``ns3wormhole.kernel_stats()`` -- the kernel's counters after a run;
  * ``ns3wormhole.load_scenario(path)`` -- a TOML scenario file, with ``.run(kernel)`` and
    ``.compare()``; ``ns3wormhole.sweep.run_sweep(path)`` -- a parameter sweep;
  * the ``ns3-wormhole`` command (``ns3-wormhole --help``).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version as _dist_version

from .kernel import KERNEL_TYPE, kernel_stats, load_into_cppyy, use_baseline, use_wormhole
from .scenario import Scenario, load_scenario

try:
    __version__ = _dist_version("ns3wormhole")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "KERNEL_TYPE",
    "Scenario",
    "__version__",
    "kernel_stats",
    "load_into_cppyy",
    "load_scenario",
    "use_baseline",
    "use_wormhole",
]


def __getattr__(name: str):
    # submodules on first use: ``ns3wormhole.sweep.run_sweep(...)`` without an explicit import
    if name in ("sweep", "report", "compare", "run", "workload"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
