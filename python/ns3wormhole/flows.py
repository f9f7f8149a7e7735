"""Flow sets: RDMA flows (one QP each) as numpy columns, HPCC flow-file I/O, generators.

A :class:`FlowSet` holds ``id, src, dst, pg, bytes, start_ns`` (plus HPCC's ``dport``,
kept for round trips).  Construction checks what can be checked without a topology
(positive sizes, ``src != dst``, priority group 0..7, unique ids); :meth:`FlowSet.validate`
adds the topology checks (known nodes, hosts as endpoints, reachability).  Errors are
:class:`~ns3wormhole.errors.InputError` naming the file and line of the flow, or for
inline flows its index (``flows[3]: ...``).

Generators for tests and benchmarks: :func:`incast`, :func:`staggered`, :func:`permutation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from os import PathLike
from typing import Iterable, Sequence

import numpy as np

from .errors import InputError
from .limits import MAX_FLOWS, check_time_ns
from .topology import Time, Topology, iter_data_lines, parse_size, parse_time, parse_uint

__all__ = ["FlowSet", "read_hpcc", "incast", "staggered", "permutation", "DEFAULT_PG", "DEFAULT_DPORT"]

DEFAULT_PG = 3
"""Priority group HPCC and SimAI use for RDMA data."""
DEFAULT_DPORT = 100
"""Destination port HPCC and SimAI write in flow files."""
NUM_PGS = 8

Size = int | str
"""A byte count: an int or a string like ``"64MB"`` (decimal) / ``"1MiB"``."""

_NS_PER_S = Decimal(1_000_000_000)


@dataclass(eq=False, repr=False)
class FlowSet:
    """Flows as parallel numpy columns (all the same length ``N``).

    Attributes:
        id: ``uint32[N]`` flow ids, unique.
        src, dst: ``uint32[N]`` sending and receiving host.
        pg: ``uint32[N]`` priority group 1..7 (HPCC uses 3; 0 is the control queue).
        bytes: ``uint64[N]`` payload bytes, > 0.
        start_ns: ``uint64[N]`` start time in ns.
        dport: ``uint32[N]`` HPCC destination port (not modelled; default 100).
        source: file the flows came from, or ``"flows"`` for inline flows (used in errors).
        line: ``int64[N]`` line number of each flow in ``source``, or None.
    """

    id: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    pg: np.ndarray
    bytes: np.ndarray
    start_ns: np.ndarray
    dport: np.ndarray | None = None
    source: str = "flows"
    line: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = np.asarray(self.id).reshape(-1).size
        self.line = None if self.line is None else np.asarray(self.line, dtype=np.int64).reshape(-1)
        if self.line is not None and self.line.size != n:
            raise InputError(self.source, None, f"line has {self.line.size} entries for {n} flows")
        self.id = self._column(self.id, np.uint32, "id", n)
        self.src = self._column(self.src, np.uint32, "src", n)
        self.dst = self._column(self.dst, np.uint32, "dst", n)
        self.pg = self._column(self.pg, np.uint32, "pg", n)
        self.bytes = self._column(self.bytes, np.uint64, "bytes", n)
        self.start_ns = self._column(self.start_ns, np.uint64, "start_ns", n)
        self.dport = self._column(DEFAULT_DPORT if self.dport is None else self.dport, np.uint32, "dport", n)
        self.check()

    # ----------------------------------------------------------------- construction helpers

    def error(self, i: int, message: str, source: str | None = None) -> InputError:
        """An :class:`InputError` locating flow ``i`` (file line, or ``flows[i]``)."""
        src = self.source if source is None else source
        if self.line is not None:
            return InputError(src, int(self.line[i]), message)
        return InputError(f"{src}[{i}]", None, message)

    def _column(self, values: object, dtype: type, what: str, n: int) -> np.ndarray:
        arr = np.asarray(values)
        if arr.ndim == 0:
            arr = np.full(n, arr.item())
        arr = arr.reshape(-1)
        if arr.size != n:
            raise InputError(self.source, None, f"{what} has {arr.size} entries for {n} flows")
        if n == 0:
            return np.zeros(0, dtype=dtype)
        if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
            raise InputError(self.source, None, f"{what} must be integers, got {arr.dtype}")
        if np.issubdtype(arr.dtype, np.floating):
            bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))
            if bad.size:
                raise self.error(int(bad[0]), f"{what} {arr[bad[0]]!r} is not an integer")
            arr = arr.astype(np.int64)
        if np.issubdtype(arr.dtype, np.signedinteger):
            bad = np.flatnonzero(arr < 0)
            if bad.size:
                raise self.error(int(bad[0]), f"{what} is negative ({int(arr[bad[0]])})")
        if int(arr.max()) > int(np.iinfo(dtype).max):
            i = int(np.flatnonzero(arr.astype(np.uint64) > np.iinfo(dtype).max)[0])
            raise self.error(i, f"{what} {int(arr[i])} is too large")
        return np.ascontiguousarray(arr, dtype=dtype)

    @classmethod
    def from_lists(
        cls,
        src: Sequence[int] | np.ndarray,
        dst: Sequence[int] | np.ndarray,
        bytes: Size | Sequence[Size] | np.ndarray,
        start_ns: Time | Sequence[int] | np.ndarray = 0,
        pg: int | Sequence[int] = DEFAULT_PG,
        ids: Sequence[int] | np.ndarray | None = None,
        *,
        source: str = "flows",
    ) -> FlowSet:
        """Build from per-flow lists; ``bytes``, ``start_ns`` and ``pg`` may be scalars.

        ``bytes`` entries may be strings (``"64MB"``), ``start_ns`` a time string
        (``"10us"``); ``ids`` default to ``0..N-1``."""
        src_a = np.asarray(src).reshape(-1)
        n = src_a.size
        if isinstance(bytes, (str, int, np.integer)) and not isinstance(bytes, bool):
            size_col: object = parse_size(bytes, source=f"{source}.bytes")
        elif isinstance(bytes, np.ndarray):
            size_col = bytes
        else:
            size_col = [parse_size(b, source=f"{source}[{i}]") if isinstance(b, str) else b for i, b in enumerate(bytes)]
        start_col: object = parse_time(start_ns, source=f"{source}.start_ns") if isinstance(start_ns, str) else start_ns
        return cls(
            id=np.arange(n, dtype=np.uint32) if ids is None else ids,
            src=src_a,
            dst=dst,
            pg=pg,
            bytes=size_col,
            start_ns=start_col,
            source=source,
        )

    @classmethod
    def empty(cls) -> FlowSet:
        z = np.zeros(0, dtype=np.uint32)
        return cls(id=z, src=z, dst=z, pg=z, bytes=z, start_ns=z)

    @classmethod
    def concat(cls, sets: Iterable[FlowSet], *, renumber: bool = True) -> FlowSet:
        """Concatenate flow sets; with ``renumber`` ids become ``0..N-1``."""
        sets = list(sets)
        if not sets:
            return cls.empty()
        cat = {k: np.concatenate([getattr(s, k) for s in sets]) for k in ("id", "src", "dst", "pg", "bytes", "start_ns", "dport")}
        if renumber:
            cat["id"] = np.arange(cat["id"].size, dtype=np.uint32)
        return cls(**cat)

    # ----------------------------------------------------------------- basics

    def __len__(self) -> int:
        return int(self.id.size)

    def __repr__(self) -> str:
        where = f", source={self.source!r}" if self.source != "flows" else ""
        return f"FlowSet({len(self)} flows, {int(self.bytes.sum())} bytes{where})"

    @property
    def total_bytes(self) -> int:
        return int(self.bytes.sum())

    def sorted_by_start(self) -> FlowSet:
        """A copy in (stable) start-time order, ids and line numbers kept."""
        order = np.argsort(self.start_ns, kind="stable")
        return FlowSet(
            id=self.id[order],
            src=self.src[order],
            dst=self.dst[order],
            pg=self.pg[order],
            bytes=self.bytes[order],
            start_ns=self.start_ns[order],
            dport=None if self.dport is None else self.dport[order],
            source=self.source,
            line=None if self.line is None else self.line[order],
        )

    # ----------------------------------------------------------------- validation

    def _raise_first(self, problems: list[tuple[np.ndarray, object]], source: str | None) -> None:
        """``problems``: (bad mask, message or callable(i)->message) in priority order.
        Raise for the lowest flow index with any problem, using its first problem."""
        any_bad = np.zeros(len(self), dtype=bool)
        for mask, _ in problems:
            any_bad |= mask
        if not any_bad.any():
            return
        i = int(np.flatnonzero(any_bad)[0])
        more = int(any_bad.sum()) - 1
        for mask, msg in problems:
            if mask[i]:
                text = msg(i) if callable(msg) else str(msg)
                if more:
                    text += f" (and {more} more flow{'s' if more > 1 else ''} with problems)"
                raise self.error(i, text, source)

    def check(self, source: str | None = None) -> None:
        """Topology-free checks: ``src != dst``, ``bytes > 0``, ``pg`` in 1..7, unique ids."""
        n = len(self)
        if n == 0:
            return
        dup = np.zeros(n, dtype=bool)
        order = np.argsort(self.id, kind="stable")
        sid = self.id[order]
        dup[order[1:][sid[1:] == sid[:-1]]] = True
        self._raise_first(
            [
                (self.src == self.dst, lambda i: f"source and destination are the same node ({int(self.src[i])})"),
                (self.bytes == 0, "flow size must be positive"),
                ((self.pg == 0) | (self.pg >= NUM_PGS), lambda i: f"priority group {int(self.pg[i])} outside 1..{NUM_PGS - 1} (0 carries PFC and control frames)"),
                (dup, lambda i: f"duplicate flow id {int(self.id[i])}"),
            ],
            source,
        )

    def validate(self, topology: Topology, source: str | None = None) -> None:
        """All checks, including against ``topology``: node ids exist, endpoints are
        hosts (not switches), and a path through switches exists (BFS).  Raises
        :class:`InputError` for the first bad flow, naming its file line or index;
        ``source`` overrides the name used (then flows are named by index)."""
        self.check(source)
        n = topology.num_nodes
        unknown = (self.src >= n) | (self.dst >= n)
        known = ~unknown
        is_sw = np.zeros(len(self), dtype=bool)
        is_sw[known] = topology.is_switch[self.src[known]] | topology.is_switch[self.dst[known]]
        unreachable = np.zeros(len(self), dtype=bool)
        candidates = np.flatnonzero(known & ~is_sw & (self.src != self.dst))
        if candidates.size:
            pairs = np.stack([self.src[candidates], self.dst[candidates]], axis=1)
            unreachable[candidates[topology.unreachable_pairs(pairs)]] = True

        def unknown_msg(i: int) -> str:
            node = int(self.src[i]) if self.src[i] >= n else int(self.dst[i])
            return f"unknown node id {node} (topology has nodes 0..{n - 1})"

        def switch_msg(i: int) -> str:
            which, node = ("source", int(self.src[i])) if topology.is_switch[self.src[i]] else ("destination", int(self.dst[i]))
            return f"{which} {node} is a switch, not a host"

        self._raise_first(
            [
                (unknown, unknown_msg),
                (is_sw, switch_msg),
                (unreachable, lambda i: f"no path from {int(self.src[i])} to {int(self.dst[i])} through switches"),
            ],
            source,
        )

    # ----------------------------------------------------------------- output

    def to_hpcc(self, path: str | PathLike[str]) -> None:
        """Write an HPCC flow file (``N``, then ``src dst pg dport size start_s``),
        in start-time order as HPCC requires.  Start times are written in seconds with
        9 decimals (exact).  HPCC files carry no ids: read back, flow ids are positions."""
        s = self.sorted_by_start()
        assert s.dport is not None
        out = [str(len(s))]
        for a, b, p, d, size, t in zip(
            s.src.tolist(), s.dst.tolist(), s.pg.tolist(), s.dport.tolist(), s.bytes.tolist(), s.start_ns.tolist()
        ):
            out.append(f"{a} {b} {p} {d} {size} {t // 1_000_000_000}.{t % 1_000_000_000:09d}")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(out) + "\n")


# --------------------------------------------------------------------------- HPCC file


def _parse_start_seconds(token: str, source: str, line: int) -> int:
    try:
        value = Decimal(token)
    except InvalidOperation:
        raise InputError(source, line, f"bad start time {token!r} (expected seconds, e.g. 2.0)") from None
    if not value.is_finite():
        raise InputError(source, line, f"bad start time {token!r}")
    if value < 0:
        raise InputError(source, line, f"negative start time {token!r}")
    ns = int((value * _NS_PER_S).to_integral_value(rounding=ROUND_HALF_EVEN))
    return check_time_ns(ns, source, "start", line)


def read_hpcc(path: str | PathLike[str], topology: Topology | None = None) -> FlowSet:
    """Read an HPCC flow file.

    Format (blank lines and ``#`` comments ignored)::

        N
        <src> <dst> <pg> <dport> <size bytes> <start seconds>     # N lines

    Start times are converted to integer ns, rounded to nearest.  Flow ids are
    ``0..N-1`` in file order.  With ``topology`` the flows are also validated against
    it.  Every malformed line raises :class:`InputError` naming the file and line."""
    source = str(path)
    lines = iter_data_lines(path)
    try:
        hline, header = next(lines)
    except StopIteration:
        raise InputError(source, None, "empty flow file (expected the flow count on line 1)") from None
    if len(header) != 1:
        raise InputError(source, hline, f"first line has {len(header)} fields; expected the flow count N")
    n = parse_uint(header[0], "flow count", source, hline)
    if n > MAX_FLOWS:
        raise InputError(source, hline, f"{n} flows: more than the {MAX_FLOWS:,} a run can hold in memory")
    cols = np.zeros((5, n), dtype=np.uint64)  # src dst pg dport size
    start = np.zeros(n, dtype=np.uint64)
    line_of = np.zeros(n, dtype=np.int64)
    limits = (np.iinfo(np.uint32).max,) * 4 + (np.iinfo(np.uint64).max,)
    names = ("source node id", "destination node id", "priority group", "dport", "flow size")
    count = 0
    for lineno, toks in lines:
        if count == n:
            raise InputError(source, lineno, f"more flow lines than the {n} declared on line {hline}")
        if len(toks) != 6:
            raise InputError(
                source, lineno, f"flow line has {len(toks)} fields; expected '<src> <dst> <pg> <dport> <size> <start_s>'"
            )
        for k in range(5):
            v = parse_uint(toks[k], names[k], source, lineno)
            if v > limits[k]:
                raise InputError(source, lineno, f"{names[k]} {v} is too large")
            cols[k, count] = v
        start[count] = _parse_start_seconds(toks[5], source, lineno)
        line_of[count] = lineno
        count += 1
    if count != n:
        raise InputError(source, hline, f"line {hline} declares {n} flows but the file has {count}")
    flows = FlowSet(
        id=np.arange(n, dtype=np.uint32),
        src=cols[0],
        dst=cols[1],
        pg=cols[2],
        dport=cols[3],
        bytes=cols[4],
        start_ns=start,
        source=source,
        line=line_of,
    )
    if topology is not None:
        flows.validate(topology)
    return flows


# --------------------------------------------------------------------------- generators


def _size_arg(value: Size | Sequence[Size] | np.ndarray, n: int) -> np.ndarray:
    if isinstance(value, (str, int, np.integer)) and not isinstance(value, bool):
        return np.full(n, parse_size(value, source="flows.bytes"), dtype=np.uint64)
    arr = [parse_size(v, source=f"flows.bytes[{i}]") for i, v in enumerate(value)]  # type: ignore[union-attr]
    if len(arr) != n:
        raise InputError("flows.bytes", None, f"{len(arr)} sizes for {n} flows")
    return np.asarray(arr, dtype=np.uint64)


def _hosts_arg(values: Iterable[int] | np.ndarray, key: str) -> np.ndarray:
    arr = np.asarray(list(values) if not isinstance(values, np.ndarray) else values).reshape(-1)
    if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0):
        raise InputError(f"flows.{key}", None, "host ids must be non-negative integers")
    return arr.astype(np.int64)


def incast(
    senders: Iterable[int] | np.ndarray,
    receiver: int,
    bytes: Size | Sequence[Size] = "64MB",
    start_ns: Time = 0,
    pg: int = DEFAULT_PG,
) -> FlowSet:
    """Every sender sends ``bytes`` to ``receiver`` at ``start_ns``; ids ``0..N-1`` in
    sender order.  ``incast(range(8), 8, "64MB")`` is the ``bench_incast8_64MB`` load."""
    s = _hosts_arg(senders, "senders")
    return FlowSet(
        id=np.arange(s.size),
        src=s,
        dst=np.full(s.size, receiver),
        pg=pg,
        bytes=_size_arg(bytes, s.size),
        start_ns=parse_time(start_ns, source="flows.start_ns"),
    )


def staggered(
    senders: Iterable[int] | np.ndarray,
    receiver: int,
    bytes: Size | Sequence[Size],
    gap_ns: Time,
    start_ns: Time = 0,
    pg: int = DEFAULT_PG,
) -> FlowSet:
    """Like :func:`incast`, but sender ``i`` starts at ``start_ns + i*gap_ns``."""
    s = _hosts_arg(senders, "senders")
    gap = parse_time(gap_ns, source="flows.gap_ns")
    t0 = parse_time(start_ns, source="flows.start_ns")
    return FlowSet(
        id=np.arange(s.size),
        src=s,
        dst=np.full(s.size, receiver),
        pg=pg,
        bytes=_size_arg(bytes, s.size),
        start_ns=np.uint64(t0) + np.arange(s.size, dtype=np.uint64) * np.uint64(gap),
    )


def permutation(
    hosts: Iterable[int] | np.ndarray,
    bytes: Size | Sequence[Size],
    seed: int = 0,
    start_ns: Time = 0,
    pg: int = DEFAULT_PG,
) -> FlowSet:
    """Random permutation traffic: host ``hosts[i]`` sends to ``hosts[perm[i]]`` where
    ``perm`` is a derangement (no host sends to itself), drawn uniformly by rejection
    with ``numpy.random.default_rng(seed)``, so the result depends only on ``seed``."""
    h = _hosts_arg(hosts, "hosts")
    if h.size < 2:
        raise InputError("flows.hosts", None, "permutation traffic needs at least 2 hosts")
    if np.unique(h).size != h.size:
        raise InputError("flows.hosts", None, "host ids must be distinct")
    rng = np.random.default_rng(seed)
    idx = np.arange(h.size)
    while True:  # expected e ~ 2.7 draws
        perm = rng.permutation(h.size)
        if not np.any(perm == idx):
            break
    return FlowSet(
        id=np.arange(h.size),
        src=h,
        dst=h[perm],
        pg=pg,
        bytes=_size_arg(bytes, h.size),
        start_ns=parse_time(start_ns, source="flows.start_ns"),
    )
