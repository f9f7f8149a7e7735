"""Link failures and recoveries of a run (a scenario's ``[[events]]``).

Each event takes one link down or brings it back up at a time. The fabric then
recomputes its routes; started flows move to their new paths (ECMP over what
survives) and flows left without any path stall until a link comes back, as
with HPCC's ``LINK_DOWN``. A run reports the flows that had no path after its
last event (:attr:`RunResult.stalled`).

A scenario writes them as an array of tables::

    [[events]]
    time = "200us"
    link = 12            # a link id (its index in the topology) ...
    action = "down"
    [[events]]
    time = "1ms"
    nodes = [16, 20]     # ... or the two nodes it joins
    action = "up"
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .errors import InputError
from .limits import check_time_ns
from .topology import Topology, parse_time

__all__ = ["LinkEvent", "parse_link_events", "link_event_arrays"]

_KEYS = ("time", "link", "nodes", "action")
_ACTIONS = ("down", "up")


@dataclass(frozen=True)
class LinkEvent:
    """Link ``link`` goes down (``up`` False) or comes back at ``time_ns``."""

    time_ns: int
    link: int
    up: bool


def parse_link_events(raw: Any, topology: Topology, source: str = "events") -> tuple[LinkEvent, ...]:
    """``[[events]]`` tables -> events; every bad entry raises :class:`InputError`
    naming ``events[i].key``."""
    if not isinstance(raw, (list, tuple)):
        raise InputError(source, None, f"expected an array of tables ([[events]]), got {type(raw).__name__}")
    return tuple(_parse_one(entry, topology, f"{source}[{i}]") for i, entry in enumerate(raw))


def _parse_one(entry: Any, topology: Topology, where: str) -> LinkEvent:
    if not isinstance(entry, dict):
        raise InputError(where, None, f"expected a table {{time, link or nodes, action}}, got {entry!r}")
    unknown = [k for k in entry if k not in _KEYS]
    if unknown:
        raise InputError(f"{where}.{unknown[0]}", None, f"unknown key; an event has {', '.join(_KEYS)}")
    for key in ("time", "action"):
        if key not in entry:
            raise InputError(f"{where}.{key}", None, "missing")
    action = entry["action"]
    if action not in _ACTIONS:
        raise InputError(f"{where}.action", None, f"must be 'down' or 'up', got {action!r}")
    time_ns = check_time_ns(parse_time(entry["time"], source=f"{where}.time"), f"{where}.time")
    if ("link" in entry) == ("nodes" in entry):
        raise InputError(where, None, "give exactly one of link (an id) or nodes (a pair)")
    if "link" in entry:
        link = entry["link"]
        if isinstance(link, bool) or not isinstance(link, (int, np.integer)) or not 0 <= link < topology.num_links:
            raise InputError(f"{where}.link", None, f"unknown link {link!r} (links are 0..{topology.num_links - 1})")
        return LinkEvent(int(time_ns), int(link), action == "up")
    nodes = entry["nodes"]
    if not (isinstance(nodes, (list, tuple)) and len(nodes) == 2 and all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in nodes)):
        raise InputError(f"{where}.nodes", None, f"expected two node ids, got {nodes!r}")
    a, b = (int(n) for n in nodes)
    joins = np.flatnonzero(((topology.link_a == a) & (topology.link_b == b)) |
                           ((topology.link_a == b) & (topology.link_b == a)))
    if joins.size != 1:
        hint = f"{joins.size} parallel links join them; give link = id instead" if joins.size else "no link joins them"
        raise InputError(f"{where}.nodes", None, f"nodes {a} and {b}: {hint}")
    return LinkEvent(int(time_ns), int(joins[0]), action == "up")


def link_event_arrays(events: Sequence[LinkEvent]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(time_ns uint64, link uint32, up uint8) columns for the native layer."""
    return (
        np.array([e.time_ns for e in events], dtype=np.uint64),
        np.array([e.link for e in events], dtype=np.uint32),
        np.array([e.up for e in events], dtype=np.uint8),
    )
