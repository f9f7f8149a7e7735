"""Network topologies: a node/link table held in numpy arrays, builders, HPCC file I/O.

A :class:`Topology` is ``num_nodes`` nodes (each a host or a switch) and an undirected
link list ``(link_a[i], link_b[i], rate_bps[i], delay_ns[i])``.  Link ``i`` is the
link id the RDMA model and the kernel use (``RdmaLinkSpec`` index).  Parallel links
between the same two nodes are allowed (they are separate ports); self-loops are not.

Routing is shortest-path ECMP inside the C++ model; here only *reachability* is
checked: a path may pass through switches only, because hosts do not forward.

Units: rates are bits per second, delays nanoseconds, everywhere.  Every builder
also accepts strings with units, parsed by :func:`parse_rate` (``"100Gbps"``) and
:func:`parse_time` (``"1us"``, ``"0.001ms"``, ``"1000ns"``); :func:`parse_size`
parses byte counts (``"64MB"`` = 64 000 000 bytes, ``"32MiB"`` = 32 x 2^20 bytes).

Builders (node numbering: hosts first, then switches; link order: host links in
host order, then switch-to-switch links):

* :func:`star` -- one switch, ``n`` hosts (HPCC ``topology.txt`` style).
* :func:`leaf_spine` -- two-tier Clos, every leaf linked to every spine.
* :func:`fat_tree` -- textbook three-tier k-ary fat-tree.
* :func:`rail_optimized` -- one rail switch per GPU index, rails joined by spines.
* :func:`read_hpcc` -- HPCC / SimAI topology file.
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from os import PathLike
from typing import Iterator, Sequence

import numpy as np

from .errors import InputError
from . import limits

__all__ = [
    "Topology",
    "star",
    "leaf_spine",
    "fat_tree",
    "rail_optimized",
    "read_hpcc",
    "parse_rate",
    "parse_time",
    "parse_size",
    "format_rate",
    "format_time",
]

Rate = int | str
"""A rate: an int in bits/s or a string with a unit (``"100Gbps"``)."""
Time = int | str
"""A duration: an int in ns or a string with a unit (``"1us"``)."""

# --------------------------------------------------------------------------- units

_NUM_UNIT = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z/µ]*)\s*$")

_TIME_NS: dict[str, Decimal] = {
    "h": Decimal(3_600_000_000_000),
    "min": Decimal(60_000_000_000),
    "s": Decimal(1_000_000_000),
    "ms": Decimal(1_000_000),
    "us": Decimal(1_000),
    "µs": Decimal(1_000),
    "ns": Decimal(1),
    "ps": Decimal("0.001"),
}

_RATE_BPS: dict[str, Decimal] = {}
for _prefix, _mult in (("", 1), ("k", 10**3), ("K", 10**3), ("M", 10**6), ("G", 10**9), ("T", 10**12)):
    _RATE_BPS[f"{_prefix}bps"] = Decimal(_mult)
    _RATE_BPS[f"{_prefix}b/s"] = Decimal(_mult)
    _RATE_BPS[f"{_prefix}Bps"] = Decimal(8 * _mult)
    _RATE_BPS[f"{_prefix}B/s"] = Decimal(8 * _mult)

_SIZE_B: dict[str, Decimal] = {
    "": Decimal(1),
    "B": Decimal(1),
    "kB": Decimal(10**3),
    "KB": Decimal(10**3),
    "MB": Decimal(10**6),
    "GB": Decimal(10**9),
    "TB": Decimal(10**12),
    "KiB": Decimal(2**10),
    "MiB": Decimal(2**20),
    "GiB": Decimal(2**30),
    "TiB": Decimal(2**40),
}


def _parse_quantity(
    value: object,
    units: dict[str, Decimal],
    what: str,
    example: str,
    source: str,
    line: int | None,
    bare_unit: Decimal | None,
    whole: bool = False,
) -> int:
    """Parse ``value`` into an integer count of the base unit (rounded half-even)."""
    if isinstance(value, bool):
        raise InputError(source, line, f"expected a {what}, got {value!r}")
    if isinstance(value, (int, np.integer)):
        number, factor = Decimal(int(value)), bare_unit
    elif isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise InputError(source, line, f"expected a {what}, got {value!r}")
        number, factor = Decimal(repr(float(value))), bare_unit
    elif isinstance(value, str):
        m = _NUM_UNIT.match(value)
        if m is None:
            raise InputError(source, line, f"bad {what} {value!r} (expected e.g. {example})")
        try:
            number = Decimal(m.group(1))
        except InvalidOperation:  # pragma: no cover - regex already guarantees a number
            raise InputError(source, line, f"bad {what} {value!r}") from None
        unit = m.group(2)
        if unit == "" and "" not in units:
            raise InputError(source, line, f"{what} {value!r} has no unit (expected e.g. {example})")
        if unit not in units:
            known = ", ".join(u for u in units if u)
            raise InputError(source, line, f"unknown unit {unit!r} in {what} {value!r} (known: {known})")
        factor = units[unit]
    else:
        raise InputError(source, line, f"expected a {what}, got {type(value).__name__} {value!r}")
    if factor is None:  # pragma: no cover - callers always pass a bare unit
        raise InputError(source, line, f"{what} {value!r} needs a unit")
    if number < 0:
        raise InputError(source, line, f"negative {what} {value!r}")
    if number and number.adjusted() > 40:  # 1e999999999 would become a billion-digit integer
        raise InputError(source, line, f"{what} {value!r} is too large")
    exact = number * factor
    if whole and exact != exact.to_integral_value():
        raise InputError(source, line, f"{what} {value!r} is not a whole number of bytes")
    return int(exact.to_integral_value(rounding=ROUND_HALF_EVEN))


def parse_rate(value: Rate | float, *, source: str = "<inline>", line: int | None = None) -> int:
    """Parse a data rate into bits/s.

    Numbers are bits/s; strings need an ns-3 style unit: ``bps``, ``Kbps``/``kbps``,
    ``Mbps``, ``Gbps``, ``Tbps`` (also ``Gb/s``), or bytes per second ``Bps``, ``GBps``
    (x8).  Prefixes are decimal.  ``parse_rate("100Gbps") == 100_000_000_000``.
    Raises :class:`InputError` on a malformed or negative value.
    """
    return _parse_quantity(value, _RATE_BPS, "rate", "'100Gbps'", source, line, Decimal(1))


def parse_time(value: Time | float, *, source: str = "<inline>", line: int | None = None) -> int:
    """Parse a duration into integer nanoseconds (rounded to nearest, ties to even).

    Numbers are nanoseconds; strings need a unit: ``s``, ``ms``, ``us``, ``ns``, ``ps``,
    ``min``, ``h``.  ``parse_time("0.001ms") == parse_time("1us") == 1000``.
    Raises :class:`InputError` on a malformed or negative value.
    """
    return _parse_quantity(value, _TIME_NS, "time", "'1us' or '1000ns'", source, line, Decimal(1))


def parse_size(value: int | str, *, source: str = "<inline>", line: int | None = None) -> int:
    """Parse a byte count: ints are bytes; strings may carry ``B``, ``KB``, ``MB``, ``GB``
    (decimal) or ``KiB``, ``MiB``, ``GiB`` (binary).  ``parse_size("64MB") == 64_000_000``.
    """
    return _parse_quantity(value, _SIZE_B, "size", "'64MB' or '4096'", source, line, Decimal(1), whole=True)


def format_rate(bps: int) -> str:
    """Shortest exact ns-3 rate string: ``100_000_000_000 -> "100Gbps"``.

    Stops at Gbps (ns-3.17, used by HPCC, has no ``T`` prefix)."""
    bps = int(bps)
    for unit, mult in (("Gbps", 10**9), ("Mbps", 10**6), ("Kbps", 10**3)):
        if bps and bps % mult == 0:
            return f"{bps // mult}{unit}"
    return f"{bps}bps"


def format_time(ns: int) -> str:
    """Shortest exact ns-3 time string: ``300_000 -> "300us"``, ``0 -> "0ns"``."""
    ns = int(ns)
    for unit, mult in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns and ns % mult == 0:
            return f"{ns // mult}{unit}"
    return f"{ns}ns"


# --------------------------------------------------------------------------- file lines

_UINT = re.compile(r"^\d+$")


def iter_data_lines(path: str | PathLike[str]) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, tokens)`` for each non-blank line of a text file, with
    ``#`` comments stripped.  Raises :class:`InputError` if the file cannot be read."""
    source = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise InputError(source, None, f"cannot read file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(source, None, f"not a UTF-8 text file ({exc.reason})") from None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        tokens = raw.split("#", 1)[0].split()
        if tokens:
            yield lineno, tokens


def parse_uint(token: str, what: str, source: str, line: int | None) -> int:
    """Parse a non-negative decimal integer token or raise :class:`InputError`."""
    if not _UINT.match(token):
        raise InputError(source, line, f"bad {what} {token!r} (expected a non-negative integer)")
    return int(token)


# --------------------------------------------------------------------------- arrays


def _as_uint_array(values: object, dtype: type, what: str, source: str) -> np.ndarray:
    """Coerce to a 1-D unsigned array, rejecting negatives, fractions and overflow."""
    arr = np.asarray(values).reshape(-1)
    if arr.size == 0:
        return np.zeros(0, dtype=dtype)
    if arr.dtype == bool:
        raise InputError(source, None, f"{what} must be integers, got booleans")
    if np.issubdtype(arr.dtype, np.floating):
        if not (np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
            i = int(np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))[0])
            raise InputError(source, None, f"{what}[{i}] is not an integer ({arr[i]!r})")
        arr = arr.astype(np.int64)
    elif not np.issubdtype(arr.dtype, np.integer):
        raise InputError(source, None, f"{what} must be integers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.signedinteger) and arr.min() < 0:
        i = int(np.flatnonzero(arr < 0)[0])
        raise InputError(source, None, f"{what}[{i}] is negative ({int(arr[i])})")
    if int(arr.max()) > int(np.iinfo(dtype).max):
        i = int(np.argmax(arr))
        raise InputError(source, None, f"{what}[{i}] is too large ({int(arr[i])})")
    return np.ascontiguousarray(arr, dtype=dtype)


# --------------------------------------------------------------------------- topology


@dataclass(eq=False, repr=False)
class Topology:
    """Nodes and undirected links, as numpy arrays.

    Attributes:
        num_nodes: node count; node ids are ``0..num_nodes-1``.
        is_switch: ``bool[num_nodes]``; True for switches (NVSwitches count as switches).
        link_a, link_b: ``uint32[L]`` link endpoints; link ``i`` has id ``i``.
        rate_bps: ``uint64[L]`` link rate in bits/s (both directions).
        delay_ns: ``uint64[L]`` one-way propagation delay in ns.
        error_rate: ``float64[L]`` per-link error rate (HPCC files' last column; 0 if
            absent): the probability that a frame put on the link is lost.
        gpu_index: ``int32[num_nodes]``: GPU index within its server for hosts of
            GPU topologies (rail-optimised, SimAI files), else -1.
        gpus_per_server: GPUs per server for GPU topologies, else None.
        name: a short description, e.g. ``"fat_tree(k=4)"``.
        source: where it came from (file path or ``"<inline>"``), used in errors.
        link_line: ``int64[L]`` line number of each link in ``source``, or None.

    Construction validates (see :meth:`validate`) and raises :class:`InputError`.
    """

    num_nodes: int
    is_switch: np.ndarray
    link_a: np.ndarray
    link_b: np.ndarray
    rate_bps: np.ndarray
    delay_ns: np.ndarray
    error_rate: np.ndarray | None = None
    gpu_index: np.ndarray | None = None
    gpus_per_server: int | None = None
    name: str = ""
    source: str = "<inline>"
    link_line: np.ndarray | None = None
    _adj_ptr: np.ndarray | None = field(default=None, init=False, repr=False)
    _adj_nbr: np.ndarray | None = field(default=None, init=False, repr=False)
    _label: np.ndarray | None = field(default=None, init=False, repr=False)
    _single: np.ndarray | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        src = self.source
        if isinstance(self.num_nodes, bool) or not isinstance(self.num_nodes, (int, np.integer)) or self.num_nodes < 0:
            raise InputError(src, None, f"num_nodes must be a non-negative integer, got {self.num_nodes!r}")
        self.num_nodes = int(self.num_nodes)
        self.is_switch = np.ascontiguousarray(np.asarray(self.is_switch, dtype=bool).reshape(-1))
        self.link_a = _as_uint_array(self.link_a, np.uint32, "link_a", src)
        self.link_b = _as_uint_array(self.link_b, np.uint32, "link_b", src)
        self.rate_bps = _as_uint_array(self.rate_bps, np.uint64, "rate_bps", src)
        self.delay_ns = _as_uint_array(self.delay_ns, np.uint64, "delay_ns", src)
        n_links = self.link_a.size
        if self.error_rate is None:
            self.error_rate = np.zeros(n_links, dtype=np.float64)
        else:
            self.error_rate = np.ascontiguousarray(np.asarray(self.error_rate, dtype=np.float64).reshape(-1))
        if self.gpu_index is None:
            self.gpu_index = np.full(self.num_nodes, -1, dtype=np.int32)
        else:
            self.gpu_index = np.ascontiguousarray(np.asarray(self.gpu_index, dtype=np.int32).reshape(-1))
        if self.link_line is not None:
            self.link_line = np.asarray(self.link_line, dtype=np.int64).reshape(-1)
        self.validate()

    # ----------------------------------------------------------------- basics

    @property
    def num_links(self) -> int:
        return int(self.link_a.size)

    def hosts(self) -> np.ndarray:
        """Host node ids (``uint32``, ascending)."""
        return np.flatnonzero(~self.is_switch).astype(np.uint32)

    def switches(self) -> np.ndarray:
        """Switch node ids (``uint32``, ascending)."""
        return np.flatnonzero(self.is_switch).astype(np.uint32)

    def _adjacency(self) -> tuple[np.ndarray, np.ndarray]:
        if self._adj_ptr is None or self._adj_nbr is None:
            ends = np.concatenate([self.link_a, self.link_b]).astype(np.int64)
            others = np.concatenate([self.link_b, self.link_a]).astype(np.int64)
            order = np.argsort(ends, kind="stable")
            counts = np.bincount(ends, minlength=self.num_nodes)
            self._adj_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            self._adj_nbr = others[order]
        return self._adj_ptr, self._adj_nbr

    def neighbours(self, node: int) -> np.ndarray:
        """Node ids linked to ``node`` (one entry per link, so parallel links repeat)."""
        self._check_node(node)
        ptr, nbr = self._adjacency()
        return nbr[ptr[node] : ptr[node + 1]].astype(np.uint32)

    def degree(self) -> np.ndarray:
        """Number of links at each node (``int64[num_nodes]``)."""
        ptr, _ = self._adjacency()
        return np.diff(ptr)

    def _check_node(self, node: int) -> None:
        if not 0 <= int(node) < self.num_nodes:
            raise InputError(self.source, None, f"unknown node id {node} (nodes are 0..{self.num_nodes - 1})")

    # ----------------------------------------------------------------- reachability

    def _components(self) -> tuple[np.ndarray, np.ndarray]:
        """BFS over the switch-only subgraph.

        Returns ``label`` (switch component per node, -1 for hosts) and ``single``
        (per node: the one component through which it can reach the fabric: its own
        label for switches, its attached switches' label for hosts attached to one
        component only, -2 for hosts attached to none, -3 for hosts attached to several).
        """
        if self._label is not None and self._single is not None:
            return self._label, self._single
        ptr, nbr = self._adjacency()
        is_sw = self.is_switch
        label = np.full(self.num_nodes, -1, dtype=np.int64)
        next_label = 0
        for start in np.flatnonzero(is_sw):
            if label[start] >= 0:
                continue
            label[start] = next_label
            queue = deque([int(start)])
            while queue:
                u = queue.popleft()
                for v in nbr[ptr[u] : ptr[u + 1]]:
                    if is_sw[v] and label[v] < 0:
                        label[v] = next_label
                        queue.append(int(v))
            next_label += 1
        single = label.copy()
        hosts = np.flatnonzero(~is_sw)
        single[hosts] = -2
        # (host, component) pairs for every host-switch link
        a = self.link_a.astype(np.int64)
        b = self.link_b.astype(np.int64)
        host_end = np.concatenate([a[~is_sw[a] & is_sw[b]], b[~is_sw[b] & is_sw[a]]])
        sw_end = np.concatenate([b[~is_sw[a] & is_sw[b]], a[~is_sw[b] & is_sw[a]]])
        if host_end.size:
            pairs = np.unique(np.stack([host_end, label[sw_end]], axis=1), axis=0)
            h, first, count = np.unique(pairs[:, 0], return_index=True, return_counts=True)
            single[h] = np.where(count == 1, pairs[first, 1], -3)
        self._label, self._single = label, single
        return label, single

    def _fabric_labels(self, node: int) -> set[int]:
        label, _ = self._components()
        if self.is_switch[node]:
            return {int(label[node])}
        ptr, nbr = self._adjacency()
        ns = nbr[ptr[node] : ptr[node + 1]]
        return {int(label[v]) for v in ns if self.is_switch[v]}

    def unreachable_pairs(self, pairs: np.ndarray | Sequence[tuple[int, int]]) -> np.ndarray:
        """Indices (``int64``, ascending) of the ``(src, dst)`` rows of ``pairs`` that
        have no path.  A path may pass through switches only (hosts do not forward);
        a direct link counts; ``src == dst`` is reachable.  Node ids must be valid."""
        arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if arr.size == 0:
            return np.zeros(0, dtype=np.int64)
        if arr.min() < 0 or arr.max() >= self.num_nodes:
            self._check_node(int(arr[(arr < 0) | (arr >= self.num_nodes)][0]))
        _, single = self._components()
        s, d = arr[:, 0], arr[:, 1]
        ok = (s == d) | ((single[s] >= 0) & (single[s] == single[d]))
        candidates = np.flatnonzero(~ok)
        if candidates.size == 0:
            return candidates
        direct = {(int(x), int(y)) for x, y in zip(np.minimum(self.link_a, self.link_b), np.maximum(self.link_a, self.link_b))}
        bad: list[int] = []
        cache: dict[int, set[int]] = {}
        for i in candidates:
            u, v = int(s[i]), int(d[i])
            if (min(u, v), max(u, v)) in direct:
                continue
            lu = cache.get(u)
            if lu is None:
                lu = cache[u] = self._fabric_labels(u)
            lv = cache.get(v)
            if lv is None:
                lv = cache[v] = self._fabric_labels(v)
            if not (lu & lv):
                bad.append(int(i))
        return np.asarray(bad, dtype=np.int64)

    def path_exists(self, src: int, dst: int) -> bool:
        """True if ``dst`` is reachable from ``src`` through switches only."""
        self._check_node(src)
        self._check_node(dst)
        return self.unreachable_pairs(np.array([[src, dst]])).size == 0

    # ----------------------------------------------------------------- validation

    def _link_error(self, i: int, message: str) -> InputError:
        if self.link_line is not None and i < self.link_line.size:
            return InputError(self.source, int(self.link_line[i]), message)
        return InputError(self.source, None, f"link {i}: {message}")

    def validate(self) -> None:
        """Check consistency; raise :class:`InputError` naming the link (file line if
        known) on: array length mismatch, link endpoint not a node, self-loop, rate 0,
        error rate outside [0, 1], a host without any link.  Parallel links are allowed.
        """
        src = self.source
        n, L = self.num_nodes, self.link_a.size
        if self.is_switch.size != n:
            raise InputError(src, None, f"is_switch has {self.is_switch.size} entries for {n} nodes")
        columns = (("link_b", self.link_b), ("rate_bps", self.rate_bps), ("delay_ns", self.delay_ns), ("error_rate", self.error_rate))
        for what, arr in columns:
            assert arr is not None
            if arr.size != L:
                raise InputError(src, None, f"{what} has {arr.size} entries for {L} links")
        assert self.gpu_index is not None and self.error_rate is not None
        if self.gpu_index.size != n:
            raise InputError(src, None, f"gpu_index has {self.gpu_index.size} entries for {n} nodes")
        if self.link_line is not None and self.link_line.size != L:
            raise InputError(src, None, f"link_line has {self.link_line.size} entries for {L} links")
        if L:
            bad = np.flatnonzero((self.link_a >= n) | (self.link_b >= n))
            if bad.size:
                i = int(bad[0])
                node = int(self.link_a[i]) if self.link_a[i] >= n else int(self.link_b[i])
                raise self._link_error(i, f"unknown node id {node} (nodes are 0..{n - 1})")
            bad = np.flatnonzero(self.link_a == self.link_b)
            if bad.size:
                i = int(bad[0])
                raise self._link_error(i, f"self-loop on node {int(self.link_a[i])}")
            bad = np.flatnonzero(self.rate_bps == 0)
            if bad.size:
                raise self._link_error(int(bad[0]), "link rate must be positive")
            er = self.error_rate
            bad = np.flatnonzero(~np.isfinite(er) | (er < 0) | (er > 1))
            if bad.size:
                i = int(bad[0])
                raise self._link_error(i, f"error rate {er[i]!r} is outside [0, 1]")
        if self.gpus_per_server is not None and self.gpus_per_server < 1:
            raise InputError(src, None, f"gpus_per_server must be >= 1, got {self.gpus_per_server}")
        deg = self.degree()
        lonely = np.flatnonzero(~self.is_switch & (deg == 0))
        if lonely.size:
            more = f" ({lonely.size} such hosts)" if lonely.size > 1 else ""
            raise InputError(src, None, f"host {int(lonely[0])} has no link{more}")

    # ----------------------------------------------------------------- output

    def to_hpcc(self, path: str | PathLike[str]) -> None:
        """Write an HPCC topology file (3-field header; GPU info is not kept).

        Rates are written like ``100Gbps``, delays like ``1us``/``1000ns``, which both
        HPCC's ns-3.17 and :func:`read_hpcc` read back exactly."""
        sw = self.switches()
        assert self.error_rate is not None
        out = [f"{self.num_nodes} {sw.size} {self.num_links}", " ".join(str(int(s)) for s in sw)]
        cols = (self.link_a, self.link_b, self.rate_bps, self.delay_ns, self.error_rate)
        for a, b, r, d, e in zip(*(c.tolist() for c in cols)):
            out.append(f"{a} {b} {format_rate(r)} {format_time(d)} {_format_float(e)}")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(out) + "\n")

    def __repr__(self) -> str:
        n_sw = int(self.is_switch.sum())
        label = f"{self.name!r}, " if self.name else ""
        return f"Topology({label}{self.num_nodes - n_sw} hosts, {n_sw} switches, {self.num_links} links)"


def _format_float(x: float) -> str:
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


# --------------------------------------------------------------------------- builders


def _positive_int(value: object, key: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < minimum:
        raise InputError(f"topology.{key}", None, f"must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_rate(bps: int, source: str, line: int | None = None) -> int:
    if bps <= 0:
        raise InputError(source, line, "link rate must be positive")
    if not limits.MIN_LINK_RATE_BPS <= bps <= limits.MAX_LINK_RATE_BPS:
        raise InputError(source, line, f"rate {bps:g} bps is out of range: must be >= {limits.MIN_LINK_RATE_BPS} bps "
                         f"and <= {limits.MAX_LINK_RATE_BPS // 10**12} Tbps")
    return bps


def _rate_arg(value: Rate, key: str) -> int:
    bps = parse_rate(value, source=f"topology.{key}")
    if bps <= 0:
        raise InputError(f"topology.{key}", None, f"rate must be positive, got {value!r}")
    return _check_rate(bps, f"topology.{key}")


def _time_arg(value: Time, key: str) -> int:
    return limits.check_time_ns(parse_time(value, source=f"topology.{key}"), f"topology.{key}")


def _size_check(num_nodes: int, num_links: int, key: str) -> None:
    """Before any array is allocated: the memory the topology would need."""
    limits.check_nodes(num_nodes, num_links, f"topology.{key}")


def _assemble(
    name: str,
    num_nodes: int,
    switch_ids: np.ndarray,
    links: list[tuple[np.ndarray, np.ndarray, int]],
    delay_ns: int,
    gpu_index: np.ndarray | None = None,
    gpus_per_server: int | None = None,
) -> Topology:
    is_switch = np.zeros(num_nodes, dtype=bool)
    is_switch[switch_ids] = True
    a = np.concatenate([np.asarray(x, dtype=np.int64) for x, _, _ in links]) if links else np.zeros(0, np.int64)
    b = np.concatenate([np.asarray(y, dtype=np.int64) for _, y, _ in links]) if links else np.zeros(0, np.int64)
    r = np.concatenate([np.full(len(x), rate, dtype=np.uint64) for x, _, rate in links]) if links else np.zeros(0, np.uint64)
    return Topology(
        num_nodes=num_nodes,
        is_switch=is_switch,
        link_a=a,
        link_b=b,
        rate_bps=r,
        delay_ns=np.full(a.size, delay_ns, dtype=np.uint64),
        gpu_index=gpu_index,
        gpus_per_server=gpus_per_server,
        name=name,
    )


def star(n_hosts: int, rate: Rate = "100Gbps", delay: Time = "1us") -> Topology:
    """One switch and ``n_hosts`` hosts (HPCC ``topology.txt`` style).

    Hosts are ``0..n_hosts-1``, the switch is ``n_hosts``; link ``i`` joins host ``i``
    to the switch.  ``n_hosts + 1`` nodes, ``n_hosts`` links."""
    n = _positive_int(n_hosts, "n_hosts")
    _size_check(n + 1, n, "n_hosts")
    bps, d = _rate_arg(rate, "rate"), _time_arg(delay, "delay")
    hosts = np.arange(n)
    return _assemble(f"star(n_hosts={n})", n + 1, np.array([n]), [(hosts, np.full(n, n), bps)], d)


def leaf_spine(
    n_leaves: int,
    n_spines: int,
    hosts_per_leaf: int,
    host_rate: Rate = "100Gbps",
    fabric_rate: Rate = "400Gbps",
    delay: Time = "1us",
) -> Topology:
    """Two-tier Clos: every leaf links to every spine.

    Numbering: host ``h`` of leaf ``l`` is ``l*hosts_per_leaf + h``; leaf ``l`` is
    ``H + l`` and spine ``s`` is ``H + n_leaves + s`` with ``H = n_leaves*hosts_per_leaf``.
    Links: the ``H`` host links (host order), then leaf-major ``n_leaves*n_spines``
    leaf-spine links.  ``n_spines`` may be 0 only with a single leaf."""
    L = _positive_int(n_leaves, "n_leaves")
    S = _positive_int(n_spines, "n_spines", minimum=0 if L == 1 else 1)
    per = _positive_int(hosts_per_leaf, "hosts_per_leaf")
    hr, fr, d = _rate_arg(host_rate, "host_rate"), _rate_arg(fabric_rate, "fabric_rate"), _time_arg(delay, "delay")
    H = L * per
    _size_check(H + L + S, H + L * S, "hosts_per_leaf")
    hosts = np.arange(H)
    leaf_of_host = H + hosts // per
    leaves = np.repeat(np.arange(L), S) + H
    spines = np.tile(np.arange(S), L) + H + L
    return _assemble(
        f"leaf_spine(n_leaves={L}, n_spines={S}, hosts_per_leaf={per})",
        H + L + S,
        np.arange(H, H + L + S),
        [(hosts, leaf_of_host, hr), (leaves, spines, fr)],
        d,
    )


def fat_tree(k: int, rate: Rate = "100Gbps", delay: Time = "1us") -> Topology:
    """Textbook three-tier k-ary fat-tree (Al-Fares et al.), ``k`` even, all links at ``rate``.

    ``k^3/4`` hosts, ``k^2/2`` edge, ``k^2/2`` aggregation and ``(k/2)^2`` core switches,
    ``3k^3/4`` links.  With ``m = k/2`` and ``H = k^3/4``: host ``h`` of edge ``e`` in pod
    ``p`` is ``p*m*m + e*m + h``; edge ``(p, e)`` is ``H + p*m + e``; aggregation ``(p, a)``
    is ``H + k*m + p*m + a``; core ``(i, j)`` is ``H + k*k + i*m + j``.  Every edge switch
    links to every aggregation switch of its pod; aggregation ``(p, a)`` links to cores
    ``(a, 0..m-1)``.  Links: host links, then edge-aggregation, then aggregation-core."""
    kk = _positive_int(k, "k", minimum=2)
    if kk % 2:
        raise InputError("topology.k", None, f"fat-tree k must be even, got {kk}")
    r, d = _rate_arg(rate, "rate"), _time_arg(delay, "delay")
    m = kk // 2
    H = kk * m * m
    _size_check(H + kk * kk + m * m, 3 * H, "k")
    edge0, agg0, core0 = H, H + kk * m, H + kk * kk
    n = core0 + m * m
    hosts = np.arange(H)
    host_edge = edge0 + hosts // m  # consecutive blocks of m hosts per edge switch
    p, e, a = np.meshgrid(np.arange(kk), np.arange(m), np.arange(m), indexing="ij")
    ea_edge = (edge0 + p * m + e).reshape(-1)
    ea_agg = (agg0 + p * m + a).reshape(-1)
    p2, a2, j2 = np.meshgrid(np.arange(kk), np.arange(m), np.arange(m), indexing="ij")
    ac_agg = (agg0 + p2 * m + a2).reshape(-1)
    ac_core = (core0 + a2 * m + j2).reshape(-1)
    return _assemble(
        f"fat_tree(k={kk})",
        n,
        np.arange(H, n),
        [(hosts, host_edge, r), (ea_edge, ea_agg, r), (ac_agg, ac_core, r)],
        d,
    )


def rail_optimized(
    n_servers: int,
    gpus_per_server: int = 8,
    host_rate: Rate = "100Gbps",
    fabric_rate: Rate = "400Gbps",
    delay: Time = "1us",
    n_spines: int | None = None,
) -> Topology:
    """Rail-optimised GPU fabric (NVLink not modelled).

    GPU ``g`` of server ``s`` is host ``s*gpus_per_server + g`` (``gpu_index = g``); it
    links to rail switch ``g``, node ``H + g`` with ``H = n_servers*gpus_per_server``.
    Every rail links to every spine ``j`` (node ``H + gpus_per_server + j``), so
    cross-rail traffic is reachable via a spine.  ``n_spines`` defaults to the smallest
    count giving no oversubscription, ``ceil(n_servers*host_rate/fabric_rate)``.
    Links: host links (host order), then rail-major rail-spine links."""
    S = _positive_int(n_servers, "n_servers")
    G = _positive_int(gpus_per_server, "gpus_per_server")
    hr, fr, d = _rate_arg(host_rate, "host_rate"), _rate_arg(fabric_rate, "fabric_rate"), _time_arg(delay, "delay")
    if n_spines is None:
        n_sp = max(1, -(-S * hr // fr)) if G > 1 else 0
    else:
        n_sp = _positive_int(n_spines, "n_spines", minimum=0 if G == 1 else 1)
    H = S * G
    _size_check(H + G + n_sp, H + G * n_sp, "n_servers")
    hosts = np.arange(H)
    rail_of_host = H + hosts % G
    rails = np.repeat(np.arange(G), n_sp) + H
    spines = np.tile(np.arange(n_sp), G) + H + G
    gpu_index = np.full(H + G + n_sp, -1, dtype=np.int32)
    gpu_index[:H] = hosts % G
    return _assemble(
        f"rail_optimized(n_servers={S}, gpus_per_server={G}, n_spines={n_sp})",
        H + G + n_sp,
        np.arange(H, H + G + n_sp),
        [(hosts, rail_of_host, hr), (rails, spines, fr)],
        d,
        gpu_index=gpu_index,
        gpus_per_server=G,
    )


# --------------------------------------------------------------------------- HPCC file


def read_hpcc(path: str | PathLike[str], *, name: str | None = None) -> Topology:
    """Read an HPCC topology file (also SimAI's extended header).

    Format (blank lines and ``#`` comments ignored)::

        <nodes> <switches> <links>                      # HPCC
        <nodes> <gpus_per_server> <nvswitches> <switches> <links> <gpu_type>   # SimAI
        <switch ids ...>          # HPCC: <switches> ids; SimAI: nvswitches + switches ids
        <src> <dst> <rate> <delay> <error_rate>          # one line per link

    The switch ids may span several lines.  NVSwitches are treated as switches; for
    SimAI files, host ``h`` gets ``gpu_index = h % gpus_per_server``.  Every malformed
    line raises :class:`InputError` naming the file and line."""
    source = str(path)
    lines = iter_data_lines(path)
    try:
        hline, header = next(lines)
    except StopIteration:
        raise InputError(source, None, "empty topology file (expected '<nodes> <switches> <links>')") from None
    gps: int | None = None
    if len(header) == 3:
        names = ("node count", "switch count", "link count")
        n_nodes, n_sw, n_links = (parse_uint(t, w, source, hline) for t, w in zip(header, names))
        n_sw_total = n_sw
    elif len(header) == 6:
        n_nodes, gps, n_nv, n_sw, n_links = (
            parse_uint(t, w, source, hline)
            for t, w in zip(header[:5], ("node count", "gpus_per_server", "nvswitch count", "switch count", "link count"))
        )
        if gps < 1:
            raise InputError(source, hline, "gpus_per_server must be >= 1")
        n_sw_total = n_nv + n_sw
    else:
        raise InputError(
            source,
            hline,
            f"header has {len(header)} fields; expected '<nodes> <switches> <links>' or "
            "'<nodes> <gpus_per_server> <nvswitches> <switches> <links> <gpu_type>'",
        )
    if n_sw_total > n_nodes:
        raise InputError(source, hline, f"{n_sw_total} switches declared but only {n_nodes} nodes")
    limits.check_nodes(n_nodes, n_links, source, hline)

    is_switch = np.zeros(n_nodes, dtype=bool)
    seen = 0
    last_line = hline
    while seen < n_sw_total:
        try:
            lineno, toks = next(lines)
        except StopIteration:
            raise InputError(source, last_line, f"file ends after {seen} of {n_sw_total} switch ids") from None
        last_line = lineno
        for t in toks:
            if not _UINT.match(t):
                raise InputError(
                    source, lineno, f"expected {n_sw_total} switch ids (header line {hline}), found {seen} before {t!r}"
                )
        if seen + len(toks) > n_sw_total:
            raise InputError(
                source, lineno, f"too many switch ids: header line {hline} declares {n_sw_total}, found {seen + len(toks)}"
            )
        for t in toks:
            sid = int(t)
            if sid >= n_nodes:
                raise InputError(source, lineno, f"switch id {sid} out of range (nodes are 0..{n_nodes - 1})")
            if is_switch[sid]:
                raise InputError(source, lineno, f"switch id {sid} listed twice")
            is_switch[sid] = True
        seen += len(toks)

    a = np.zeros(n_links, dtype=np.int64)
    b = np.zeros(n_links, dtype=np.int64)
    rate = np.zeros(n_links, dtype=np.uint64)
    delay = np.zeros(n_links, dtype=np.uint64)
    err = np.zeros(n_links, dtype=np.float64)
    line_of = np.zeros(n_links, dtype=np.int64)
    count = 0
    for lineno, toks in lines:
        if count == n_links:
            raise InputError(source, lineno, f"more link lines than the {n_links} declared on line {hline}")
        if len(toks) != 5:
            raise InputError(
                source, lineno, f"link line has {len(toks)} fields; expected '<src> <dst> <rate> <delay> <error_rate>'"
            )
        u = parse_uint(toks[0], "node id", source, lineno)
        v = parse_uint(toks[1], "node id", source, lineno)
        for node in (u, v):
            if node >= n_nodes:
                raise InputError(source, lineno, f"unknown node id {node} (nodes are 0..{n_nodes - 1})")
        r = _check_rate(parse_rate(toks[2], source=source, line=lineno), source, lineno)
        dl = limits.check_time_ns(parse_time(toks[3], source=source, line=lineno), source, "link delay", lineno)
        try:
            e = float(toks[4])
        except ValueError:
            raise InputError(source, lineno, f"bad error rate {toks[4]!r}") from None
        a[count], b[count], rate[count], delay[count], err[count], line_of[count] = u, v, r, dl, e, lineno
        count += 1
    if count != n_links:
        raise InputError(source, hline, f"header declares {n_links} links but the file has {count}")

    gpu_index = None
    if gps is not None:
        gpu_index = np.where(is_switch, -1, np.arange(n_nodes) % gps).astype(np.int32)
    return Topology(
        num_nodes=n_nodes,
        is_switch=is_switch,
        link_a=a,
        link_b=b,
        rate_bps=rate,
        delay_ns=delay,
        error_rate=err,
        gpu_index=gpu_index,
        gpus_per_server=gps,
        name=name if name is not None else source,
        source=source,
        link_line=line_of,
    )
