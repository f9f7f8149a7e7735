"""The fixed scenarios that tests and benchmarks share (sizes are parameters:
tests use small flows, benchmarks large ones)."""

from __future__ import annotations

from collections.abc import Callable

from .flows import FlowSet, incast, permutation, staggered
from .topology import Topology, leaf_spine, star

Scenario = tuple[Topology, FlowSet]


def incast8(flow_bytes: int) -> Scenario:
    """8-to-1 incast on a 9-host 100G/1us star, all flows start at t = 0."""
    return star(9, "100Gbps", "1us"), incast(list(range(8)), 8, flow_bytes)


def staggered4(flow_bytes: int) -> Scenario:
    """4 flows into one receiver starting 50 us apart."""
    return star(9, "100Gbps", "1us"), staggered([0, 1, 2, 3], 8, flow_bytes, 50_000)


def permutation16(flow_bytes: int, seed: int = 1) -> Scenario:
    """16 hosts on a leaf-spine (4 leaves x 4 hosts, 2 spines, 100G hosts,
    400G fabric), each sending to one other host (a random derangement)."""
    topo = leaf_spine(4, 2, 4, "100Gbps", "400Gbps", "1us")
    return topo, permutation(topo.hosts(), flow_bytes, seed=seed)


def long_and_short(flow_bytes: int) -> Scenario:
    """4 long flows into host 8 plus three 1 MB flows into it at 2, 4, 6 ms:
    short flows join a running long-flow partition."""
    short_starts = [2_000_000, 4_000_000, 6_000_000]
    flows = FlowSet.concat(
        [
            incast([0, 1, 2, 3], 8, flow_bytes),
            FlowSet.from_lists([4, 5, 6], [8, 8, 8], [1_000_000] * 3, short_starts),
        ]
    )
    return star(9, "100Gbps", "1us"), flows


def lone(flow_bytes: int) -> Scenario:
    """One flow alone on host-switch-host."""
    return star(2, "100Gbps", "1us"), FlowSet.from_lists([0], [1], [flow_bytes])


SCENARIOS: dict[str, Callable[[int], Scenario]] = {
    "incast8": incast8,
    "staggered4": staggered4,
    "permutation16": permutation16,
    "long_and_short": long_and_short,
    "lone": lone,
}
