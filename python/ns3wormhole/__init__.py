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

# Nothing heavy is imported here: `ns3-wormhole` must reach its signal handlers within
# milliseconds (a Ctrl-C during numpy's import would print a traceback), so the public
# names load on first use.
_LAZY = {
    "KERNEL_TYPE": "kernel", "kernel_stats": "kernel", "load_into_cppyy": "kernel", "use_baseline": "kernel",
    "use_wormhole": "kernel", "Scenario": "scenario", "load_scenario": "scenario",
}
_SUBMODULES = ("sweep", "report", "compare", "run", "workload", "limits", "outputs")

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
    import importlib

    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("ns3wormhole")
        except PackageNotFoundError:  # running from a source tree
            value = "0+unknown"
        globals()["__version__"] = value
        return value
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    # submodules on first use: ``ns3wormhole.sweep.run_sweep(...)`` without an explicit import
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
