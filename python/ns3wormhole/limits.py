"""What the simulator can represent, in one place.

ns-3 keeps time as a signed 64-bit count of nanoseconds and parses attributes as
C++ doubles and 32/64-bit integers; our fabric model counts bytes in 64 bits; a
topology, a flow list and a training DAG live in memory. A value outside these
ranges does not fail cleanly later: ns-3 aborts (``NS_ASSERT``), or the run never
ends (a flow of 2^63 bytes, a start at 2^63-1 ns ticked through by the 100 us
watchdog), or Python runs out of memory building the DAG. So every loader checks its
values here *before anything runs* and raises :class:`~ns3wormhole.errors.InputError`
naming the file, line and key and the limit it breaks.

The limits (README, section "Limits"):

* ``HORIZON_NS`` (1000 s): no time may exceed it, nor any time plus what is added to
  it (a flow's start plus the time its bytes need at its host link's rate, a stop time,
  a compute delay, a DCQCN timer period, a training job's uncongested iteration). ns-3
  itself goes to 2^63-1 ns (292 years), but the watchdog that polls Ctrl-C ticks every
  100 us of simulated time, so 10^7 idle ticks at most; and nobody simulates a 1000 s
  packet-level run.
* rates: links 1 Kbps .. 10 Tbps; sizes: whole bytes.
* counts: nodes, links, flows, DAG nodes (estimated before the DAG is built), so that
  the memory a run needs stays in the gigabytes (``MAX_*`` below).
* physically meaningless combinations: a retransmission timeout at or below a flow's
  base round trip (every packet would time out: go-back-N forever), tensor parallelism
  wider than a server (the model charges TP traffic at NVLink speed).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import InputError

__all__ = [
    "HORIZON_NS", "MAX_LINK_RATE_BPS", "MIN_LINK_RATE_BPS", "MAX_NODES", "MAX_LINKS", "MAX_FLOWS",
    "MAX_DAG_NODES", "MAX_FACTOR", "MAX_COUNT", "check_time_ns", "check_whole", "check_finite",
    "check_count", "check_nodes", "check_topology", "check_flows", "check_retransmit_timeout",
    "check_dag_size", "check_dag_horizon", "fmt_ns",
]

HORIZON_NS = 10**12
"""Latest simulated time a run may reach (1000 s)."""
MAX_LINK_RATE_BPS = 10**13
"""10 Tbps: beyond any link built today."""
MIN_LINK_RATE_BPS = 10**3
MAX_NODES = 1_000_000
"""Hosts plus switches: each is an ns-3 node with devices and queues (~tens of KB)."""
MAX_LINKS = 4_000_000
MAX_FLOWS = 10_000_000
MAX_DAG_NODES = 10_000_000
"""Estimated training-DAG nodes (compute delays and flows); the estimate is 2-6x the real
count of the presets, and building a million real nodes takes ~3 s."""
MAX_FACTOR = 1e6
"""Upper bound of dimensionless multipliers (max_extrapolation, bwd_factor, ...)."""
MAX_COUNT = 2**31 - 1
"""Counts ns-3 keeps in 32-bit attributes (window, intervals in packets)."""


def fmt_ns(ns: float) -> str:
    ns = float(ns)
    for unit, mult in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= mult:
            return f"{ns / mult:.4g} {unit}"
    return f"{ns:.0f} ns"


def _err(key: str, message: str, line: int | None = None) -> InputError:
    return InputError(key, line, message)


def check_time_ns(value_ns: Any, key: str, what: str = "", line: int | None = None) -> int:
    """A time (ns) in ``[0, HORIZON_NS]``; ``what`` says what it is added to, if anything."""
    v = int(value_ns)
    if v < 0:
        raise _err(key, f"negative time {v} ns", line)
    if v > HORIZON_NS:
        extra = f" ({what})" if what else ""
        raise _err(key, f"{fmt_ns(v)}{extra} is beyond the {fmt_ns(HORIZON_NS)} a run can simulate", line)
    return v


def check_finite(value: Any, key: str, lo: float | None = None, hi: float | None = MAX_FACTOR,
                 lo_open: bool = False, line: int | None = None) -> float:
    """A finite number in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _err(key, f"expected a number, got {value!r}", line)
    try:
        v = float(value)
    except OverflowError:
        raise _err(key, f"{value} is too large (at most {hi:g})", line) from None
    if not math.isfinite(v):
        raise _err(key, f"expected a finite number, got {value!r}", line)
    if lo is not None and (v <= lo if lo_open else v < lo):
        raise _err(key, f"must be {'>' if lo_open else '>='} {lo:g}, got {value!r}", line)
    if hi is not None and v > hi:
        raise _err(key, f"{value!r} is too large (at most {hi:g})", line)
    return v


def check_whole(value: Any, key: str, what: str = "an integer", line: int | None = None) -> int:
    """An integer; a float only when it is whole (``2.0``), never rounded (``2.7``)."""
    if isinstance(value, bool):
        raise _err(key, f"expected {what}, got {value!r}", line)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    raise _err(key, f"expected {what}, got {value!r}", line)


def check_count(value: Any, key: str, lo: int = 0, hi: int = MAX_COUNT, line: int | None = None) -> int:
    v = check_whole(value, key, line=line)
    if v < lo or v > hi:
        raise _err(key, f"{v} is out of range: must be >= {lo} and <= {hi}", line)
    return v


def check_nodes(n_nodes: int, n_links: int, key: str, line: int | None = None) -> None:
    """Before allocating a topology: node and link counts within memory."""
    if n_nodes > MAX_NODES:
        raise _err(key, f"{n_nodes} nodes: more than the {MAX_NODES:,} a run can hold in memory", line)
    if n_links > MAX_LINKS:
        raise _err(key, f"{n_links} links: more than the {MAX_LINKS:,} a run can hold in memory", line)


def check_topology(topology: Any) -> None:
    """Link rates and delays of a built topology (its file line when it has one)."""
    src = topology.source if topology.source != "<inline>" else "topology"
    check_nodes(topology.num_nodes, topology.num_links, src)
    for i in np.flatnonzero((topology.rate_bps > MAX_LINK_RATE_BPS) | (topology.rate_bps < MIN_LINK_RATE_BPS))[:1]:
        line = None if topology.link_line is None else int(topology.link_line[i])
        raise _err(src if line else f"{src}.rate", f"link {i}: rate {int(topology.rate_bps[i])} bps is outside "
                   f"{MIN_LINK_RATE_BPS} bps .. {MAX_LINK_RATE_BPS // 10**12} Tbps", line)
    for i in np.flatnonzero(topology.delay_ns > HORIZON_NS)[:1]:
        line = None if topology.link_line is None else int(topology.link_line[i])
        raise _err(src if line else f"{src}.delay", f"link {i}: delay {fmt_ns(int(topology.delay_ns[i]))} is beyond "
                   f"the {fmt_ns(HORIZON_NS)} a run can simulate", line)


def _host_links(topology: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per node: the fastest rate and the shortest delay of its links (hosts have one)."""
    n = topology.num_nodes
    rate = np.zeros(n, dtype=np.float64)
    delay = np.full(n, np.inf)
    for end in (topology.link_a, topology.link_b):
        np.maximum.at(rate, end, topology.rate_bps.astype(np.float64))
        np.minimum.at(delay, end, topology.delay_ns.astype(np.float64))
    return rate, delay


def check_flows(src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray, start_ns: np.ndarray, topology: Any,
                where: Any) -> None:
    """Each flow's start plus the time its bytes need at its host links' rate stays within
    the horizon. ``where(i, message)`` returns the InputError locating flow ``i``."""
    if len(src) > MAX_FLOWS:
        raise where(0, f"{len(src):,} flows: more than the {MAX_FLOWS:,} a run can hold in memory")
    rate, delay = _host_links(topology)
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    bottleneck = np.maximum(np.minimum(rate[src], rate[dst]), 1.0)
    end = np.asarray(start_ns, dtype=np.float64) + np.asarray(nbytes, dtype=np.float64) * 8e9 / bottleneck
    bad = np.flatnonzero(~(end <= HORIZON_NS))
    if bad.size:
        i = int(bad[0])
        raise where(i, f"starting at {fmt_ns(float(start_ns[i]))}, {int(nbytes[i])} bytes at "
                       f"{bottleneck[i] / 1e9:g} Gbps end after {fmt_ns(end[i])}, beyond the "
                       f"{fmt_ns(HORIZON_NS)} a run can simulate")


def check_retransmit_timeout(rto_ns: int, frame_bytes: int, src: np.ndarray, dst: np.ndarray, topology: Any,
                             key: str) -> None:
    """Refuse a retransmission timeout at or below a flow's base round trip (a lower
    bound: its two host links there and back, one frame serialised on each): every packet
    would time out before its acknowledgement can arrive, and go-back-N resends forever."""
    if len(src) == 0:
        return
    rate, delay = _host_links(topology)
    s, d = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    rtt = 2 * (delay[s] + delay[d]) + frame_bytes * 8e9 * (1 / np.maximum(rate[s], 1) + 1 / np.maximum(rate[d], 1))
    i = int(np.argmax(rtt))
    if rtt[i] >= rto_ns:
        raise _err(key, f"{fmt_ns(rto_ns)} is shorter than the base round trip of flow {int(s[i])}->{int(d[i])} "
                        f"(at least {fmt_ns(rtt[i])}): every packet would time out")


def check_dag_size(estimate: float, key: str, what: str) -> None:
    """Refuse a training job whose DAG would not fit in memory, before building it."""
    if not estimate <= MAX_DAG_NODES:
        raise _err(key, f"{what} would need about {estimate:.3g} DAG nodes, more than the "
                        f"{MAX_DAG_NODES:,} a run can hold in memory")


def check_dag_horizon(dag: Any, topology: Any, key: str) -> None:
    """The job fits in the horizon by two lower bounds of its makespan: every node alone
    (a flow at the fastest link), and every GPU's compute delays, which it runs one
    after another (its program is a chain, iteration after iteration)."""
    if dag.num_nodes == 0:
        return
    flow = dag.op == 1
    fastest = float(topology.rate_bps.max()) if topology.num_links else 1.0
    dur = np.where(flow, dag.bytes.astype(np.float64) * 8e9 / fastest, dag.duration_ns.astype(np.float64))
    i = int(np.argmax(dur))
    if float(dur[i]) > HORIZON_NS:
        raise _err(key, f"DAG node {i} alone lasts {fmt_ns(dur[i])}, beyond the {fmt_ns(HORIZON_NS)} a run can simulate")
    compute = (dag.op == 0) & (dag.src == dag.dst)
    if compute.any():
        per_gpu = np.bincount(dag.src[compute].astype(np.int64), weights=dur[compute])
        g = int(np.argmax(per_gpu))
        if float(per_gpu[g]) > HORIZON_NS:
            raise _err(key, f"GPU {g} computes for {fmt_ns(per_gpu[g])} in all, beyond the {fmt_ns(HORIZON_NS)} "
                            "a run can simulate")
