"""Selecting the Wormhole kernel from Python, including inside ns-3's own
cppyy bindings (``from ns import ns``)."""

from __future__ import annotations

from typing import Any

from . import paths

KERNEL_TYPE = "ns3::WormholeSimulatorImpl"
BASELINE_TYPE = "ns3::DefaultSimulatorImpl"
KERNEL_QUEUE = "ns3::WormholeEventQueue"  # same event order as ns-3's, no allocation per event
BASELINE_QUEUE = "ns3::MapScheduler"

_loaded = False


def load_into_cppyy() -> Any:
    """Load our libraries and headers into ns-3's cppyy bindings and return the
    ``ns3`` namespace, so ``ns.WormholeSimulatorImpl``, ``ns.RdmaNetwork``,
    ``ns.RdmaLinkSpec``/``ns.RdmaFlowSpec`` and ``ns.WorkloadExecutor`` are
    usable from Python ns-3 scripts (see examples/rdma-incast.py)."""
    global _loaded
    import cppyy
    from ns import ns  # noqa: F401  (loads ns-3 itself first)

    if not _loaded:
        cppyy.add_include_path(str(paths.INCLUDE_DIR))
        for lib in paths.available_libraries():
            cppyy.load_library(str(lib))
        cppyy.include("wormhole-simulator-impl.h")
        # The RDMA model and the workload executor, where they were built.
        for header in ("rdma-network.h", "workload-executor.h"):
            if (paths.INCLUDE_DIR / header).exists():
                cppyy.include(header)
        _loaded = True
    return cppyy.gbl.ns3


def _bind(type_name: str, queue: str) -> None:
    ns3 = load_into_cppyy()
    ns3.GlobalValue.Bind("SimulatorImplementationType", ns3.StringValue(type_name))
    ns3.GlobalValue.Bind("SchedulerType", ns3.StringValue(queue))


def use_wormhole() -> None:
    """Make every following ns-3 simulation in this process run under
    ``ns3::WormholeSimulatorImpl``. Call it before the first ``ns.Simulator``
    use (or after ``Simulator.Destroy()``), as ns-3 requires for any kernel.
    Its event queue too: ``ns3::WormholeEventQueue`` (the same events in the
    same order, faster)."""
    _bind(KERNEL_TYPE, KERNEL_QUEUE)


def use_baseline() -> None:
    """Select ns-3's stock ``DefaultSimulatorImpl`` and its default queue again."""
    _bind(BASELINE_TYPE, BASELINE_QUEUE)


def kernel_stats() -> dict[str, Any]:
    """Counters of the most recent Wormhole kernel in this process (events
    executed, fast-forwards, time skipped, partitions, memo hits/misses), and
    why it did not skip more: ``no_skip``, ``memo_miss_reasons`` (dicts),
    partition sizes (docs/why-not.md)."""
    from . import _core

    return dict(_core.kernel_stats())
