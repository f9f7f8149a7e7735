"""ns3wormhole: memoization and fast-forwarding for packet-level ns-3 simulation of
RoCEv2 fabrics under LLM-training traffic.

Entry points:
  * ``ns3wormhole.use_wormhole()`` -- one line that makes an unchanged ns-3 Python
    script (``from ns import ns``) run under ``ns3::WormholeSimulatorImpl``;
  * ``ns3wormhole.kernel_stats()`` -- the kernel's counters after a run;
  * the ``ns3-wormhole`` command (``ns3-wormhole --help``).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version as _dist_version

from .kernel import KERNEL_TYPE, kernel_stats, load_into_cppyy, use_baseline, use_wormhole

try:
    __version__ = _dist_version("ns3wormhole")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "KERNEL_TYPE",
    "__version__",
    "kernel_stats",
    "load_into_cppyy",
    "use_baseline",
    "use_wormhole",
]
