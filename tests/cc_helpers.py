"""Shared measurements for the congestion-control tests (tests/test_cc_*.py).

Every expectation is computed from the topology and the algorithm's parameters; the
helpers only turn a run's samples into rates and windows of time."""

from __future__ import annotations

import numpy as np

from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet, incast
from ns3wormhole.run import RunResult, run_flows
from ns3wormhole.topology import star

LINE = 100e9
MTU = 1000
HEADER = 48
CONTROL = 64
INT_BYTES = 42  # HPCC: 2-byte hop count + 5 hop slots of 8 bytes, on DATA and ACK
STAMP_BYTES = 8  # TIMELY: the send stamp, on DATA and ACK
EXTRA = {"dcqcn": 0, "dctcp": 0, "hpcc": INT_BYTES, "timely": STAMP_BYTES}


def fabric(cc: str, **kw) -> FabricConfig:
    return FabricConfig(cc=cc, queue_sample_interval_ns=1000, rate_sample_interval_ns=1000, **kw)


def payload_capacity(cc: str, rate: float = LINE) -> float:
    """Payload bit rate of a link busy with full DATA frames of this algorithm."""
    return rate * MTU / (MTU + HEADER + EXTRA[cc])


def base_rtt_s(cc: str, hops: list[tuple[float, float]]) -> float:
    """A full frame store-and-forwarded out, its ACK back, over (rate, delay_s) hops."""
    bits = 8 * (MTU + HEADER + EXTRA[cc] + CONTROL + EXTRA[cc])
    return sum(bits / rate + 2 * delay for rate, delay in hops)


def run_incast(cc: str, n: int, size: str, **kw) -> tuple[RunResult, int]:
    """n-to-1 incast on a star of 100G/1us links; returns the run and the bottleneck
    link (the receiver's)."""
    topo = star(n + 1, "100Gbps", "1us")
    return run_flows(topo, incast(list(range(n)), n, size), fabric(cc, **kw)), n


def delivered(r: RunResult, flow_id: int, t: float | np.ndarray) -> np.ndarray:
    """Bytes the flow had acknowledged at time(s) t (interpolated between samples)."""
    s = r.rates[r.rates["flow"] == flow_id]
    return np.interp(t, s["time_ns"], s["delivered_bytes"])


def delivered_rates(r: RunResult, t1: float, t2: float) -> np.ndarray:
    """Per-flow delivered payload rate (bit/s) over [t1, t2] ns, in flow order."""
    return np.array([(delivered(r, int(f), t2) - delivered(r, int(f), t1)) * 8e9 / (t2 - t1) for f in r.flows["id"]])


def queue_between(r: RunResult, link: int, t1: float, t2: float) -> np.ndarray:
    """Egress queue samples of `link` with t1 <= time <= t2 (samples of an empty
    queue are not recorded: they are filled in as zeros)."""
    q = r.queues
    times = np.arange(np.ceil(t1 / 1000) * 1000, t2 + 1, 1000)
    m = q["link"] == link
    seen = dict(zip(q["time_ns"][m].tolist(), q["bytes"][m].tolist()))
    return np.array([seen.get(int(t), 0) for t in times], dtype=float)


def jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def long_and_short(cc: str, long_bytes: int, short_bytes: int, short_start_ns: int = 100_000) -> RunResult:
    """Flow 0 (host 0) runs alone, flow 1 (host 1) joins it at short_start_ns into
    the same receiver (host 2) and leaves: the congestion ends when flow 1 does."""
    topo = star(3, "100Gbps", "1us")
    flows = FlowSet.from_lists([0, 1], [2, 2], [long_bytes, short_bytes], [0, short_start_ns])
    return run_flows(topo, flows, fabric(cc))


def assert_complete_and_conserved(r: RunResult, flows_bytes: np.ndarray) -> None:
    """Every flow finished with exactly its bytes; no byte was sent as new data twice."""
    f = r.flows
    assert not r.interrupted and (f["finish_ns"] >= 0).all()
    np.testing.assert_array_equal(np.sort(f["bytes"]), np.sort(flows_bytes))
    if r.kernel == "baseline":
        new = f["data_packets"] - f["retransmitted_packets"]
        np.testing.assert_array_equal(new, -(-f["bytes"].astype(np.int64) // MTU))
    else:
        assert (f["credited_bytes"] < f["bytes"]).all()
        s = r.stats  # no event lost or run twice
        assert s["events_scheduled"] == s["events_executed"] + s["events_removed"]
