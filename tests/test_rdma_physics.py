"""Physics of the RoCEv2 fabric model, checked against analytic expectations.

Every expected value here is computed in the test from the topology (link rates
and delays), the frame sizes of the model contract (DATA = payload + 48 B on the
wire, ACK/NACK/CNP/PFC = 64 B) and the algorithms of docs/anchors.md §1.3-1.4;
none is copied from an earlier run.  Runs use the baseline kernel (ns-3's
DefaultSimulatorImpl) and small flows, so the whole file takes a few seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet, incast
from ns3wormhole.run import RunResult, WormholeConfig, run_flows
from ns3wormhole.topology import Topology, leaf_spine, star

HEADER = 48  # DATA frame header bytes on the wire (contract: HeaderBytes)
CONTROL = 64  # ACK / NACK / CNP / PFC frame bytes on the wire
LINE = 100e9  # host link rate used throughout, bit/s


# ----------------------------------------------------------------- helpers


def tandem_fct_ns(size: int, mtu: int, hops: list[tuple[float, float]]) -> float:
    """FCT of a flow alone on its path, computed frame by frame.

    ``hops`` = [(rate_bps, delay_ns), ...] from source to destination.  All
    frames are ready at the source at t = 0 (a lone flow runs at line rate, so
    the NIC sends back to back).  Every hop is a store-and-forward FIFO server:
    frame k leaves hop h at D_h[k] = max(A_h[k], D_h[k-1]) + tx_h[k] and reaches
    the next hop at D_h[k] + delay_h.  The recurrence is solved exactly with
    D[k] = S[k] + max_{j<=k}(A[j] - S[j-1]), S = cumulative tx.  The flow ends
    when the ACK of the last frame (64 B, store-and-forward over the same hops
    back) reaches the source."""
    frames = -(-size // mtu)
    payload = np.full(frames, float(mtu))
    payload[-1] = size - (frames - 1) * mtu
    bits = (payload + HEADER) * 8
    arrive = np.zeros(frames)
    for rate, delay in hops:
        tx = bits / rate * 1e9
        s = np.cumsum(tx)
        depart = s + np.maximum.accumulate(arrive - (s - tx))
        arrive = depart + delay
    ack = sum(CONTROL * 8 / rate * 1e9 + delay for rate, delay in hops)
    return float(arrive[-1] + ack)


def path_hops(topo: Topology, path: list[int]) -> list[tuple[float, float]]:
    return [(float(topo.rate_bps[link]), float(topo.delay_ns[link])) for link in path]


def goodput_line(rate_bps: float = LINE, mtu: int = 1000) -> float:
    """Payload bit rate of a link that is busy with full DATA frames only."""
    return rate_bps * mtu / (mtu + HEADER)


def check_complete(r: RunResult, flows: FlowSet, mtu: int = 1000) -> None:
    """Every flow finished, and the sender put each of its bytes on the wire as
    new data exactly once (frames start at multiples of the MTU, so the non-
    retransmitted frames of a flow are exactly ceil(bytes/mtu))."""
    f = r.flows
    assert not r.interrupted
    assert np.all(f["finish_ns"] >= 0), f"unfinished flows: {f['id'][f['finish_ns'] < 0]}"
    want = dict(zip(flows.id.tolist(), flows.bytes.tolist()))
    assert dict(zip(f["id"].tolist(), f["bytes"].tolist())) == want
    new = f["data_packets"] - f["retransmitted_packets"]
    assert np.array_equal(new, -(-f["bytes"].astype(np.int64) // mtu))
    assert int(f["data_packets"].sum()) == r.counters["data_packets"]
    assert int(f["retransmitted_packets"].sum()) == r.counters["retransmitted_packets"]
    # Bytes acknowledged, as sampled, never run backwards nor past the flow size.
    for fid, size in zip(f["id"], f["bytes"]):
        d = r.rates["delivered_bytes"][r.rates["flow"] == fid]
        assert np.all(np.diff(d.astype(np.int64)) >= 0)
        assert np.all(d <= size)


def steady_throughputs(r: RunResult, n: int, start_frac: float = 0.3) -> tuple[float, float, np.ndarray]:
    """Per-flow payload throughput (bit/s) over the steady window of an incast
    whose flows all start at t = 0.

    Window: from the first rate sample at or after ``start_frac`` of the first
    completion to the last sample at which all flows still report (samples are
    taken of unfinished flows only, so that sample lies before the first
    completion).  Skipping the first 30 %: all senders start at line rate, the
    first CNPs cut them (by ~1/2 every 4 us while marks arrive) and fast
    recovery then takes several RpTimer (300 us) periods; the window keeps only
    the period after that start-up in which every flow is active."""
    rates = r.rates
    first_finish = int(r.flows["finish_ns"].min())
    times, counts = np.unique(rates["time_ns"], return_counts=True)
    all_active = times[counts == n]
    t0 = int(all_active[all_active >= start_frac * first_finish][0])
    t1 = int(all_active[all_active < first_finish][-1])
    assert t1 - t0 > 0.5 * first_finish, "steady window too short to mean anything"
    thr = np.zeros(n)
    for i, fid in enumerate(np.sort(r.flows["id"])):
        m = rates["flow"] == fid
        by_time = dict(zip(rates["time_ns"][m].tolist(), rates["delivered_bytes"][m].tolist()))
        thr[i] = (by_time[t1] - by_time[t0]) * 8 / ((t1 - t0) * 1e-9)
    return t0, t1, thr


def jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (x.size * (x**2).sum()))


# ----------------------------------------------------------------- lone flow FCT


SIZES = [1000, 10_500, 100_000, 1_000_000]  # one frame, a partial last frame, 100 KB, 1 MB


def _lone_flow_cases():
    for mtu in (1000, 4096, 9000):
        for size in SIZES:
            yield pytest.param("star", mtu, size, id=f"star-mtu{mtu}-{size}B")
            yield pytest.param("leaf_spine", mtu, size, id=f"leafspine-mtu{mtu}-{size}B")


@pytest.mark.parametrize("shape, mtu, size", list(_lone_flow_cases()))
def test_lone_flow_fct_is_serialization_propagation_store_and_forward(shape, mtu, size):
    if shape == "star":
        topo, src, dst = star(2, "100Gbps", "1us"), 0, 1
        want_rates = [100e9, 100e9]
    else:
        # 2 leaves x 2 hosts, 2 spines; hosts 0 and 2 are on different leaves:
        # host -> leaf (100G) -> spine (400G) -> leaf (400G) -> host (100G).
        topo, src, dst = leaf_spine(2, 2, 2, "100Gbps", "400Gbps", "1us"), 0, 2
        want_rates = [100e9, 400e9, 400e9, 100e9]
    flows = FlowSet.from_lists([src], [dst], size)
    r = run_flows(topo, flows, FabricConfig(mtu_bytes=mtu))
    check_complete(r, flows, mtu)
    path = r.paths[0]
    assert [float(topo.rate_bps[l]) for l in path] == want_rates
    assert {int(topo.link_a[path[0]]), int(topo.link_b[path[0]])} >= {src}
    assert {int(topo.link_a[path[-1]]), int(topo.link_b[path[-1]])} >= {dst}
    expected = tandem_fct_ns(size, mtu, path_hops(topo, path))
    fct = int(r.flows["fct_ns"][0])
    # Issue bound: 1 %.  Tighter bound actually expected: ns-3's time step is
    # 1 ns and the model floors each serialization to whole steps (carrying the
    # remainder), so each of the 2*hops transmissions on the critical path (data
    # and ACK) may be off by less than one step.
    assert abs(fct - expected) <= 0.01 * expected
    assert abs(fct - expected) < 2 * len(path), (fct, expected)
    # The model's own "alone on its path" FCT is the same quantity, in floating
    # point: agreement to rounding error.
    assert r.flows["ideal_fct_ns"][0] == pytest.approx(expected, rel=1e-9)
    assert r.counters["ecn_marks"] == 0 and r.counters["pauses"] == 0 and r.counters["drops"] == 0


def test_opposite_flows_share_each_host_link_with_the_other_flows_acks():
    # 0 -> 1 and 1 -> 0 at the same time: each host's egress carries its own
    # DATA (1048 B per frame) and one 64 B ACK per frame it receives; ACKs go
    # first, so each flow's frames are spaced (1048 + 64) * 8 / 100G apart.
    size, mtu = 4_000_000, 1000
    topo = star(2, "100Gbps", "1us")
    flows = FlowSet.from_lists([0, 1], [1, 0], size)
    r = run_flows(topo, flows)
    check_complete(r, flows)
    frames = size // mtu
    spacing = (mtu + HEADER + CONTROL) * 8 / LINE * 1e9
    # The last frame then needs what a lone one-frame flow needs after its
    # first serialization: propagation, the switch hop and the ACK's way back.
    hops = path_hops(topo, r.paths[0])
    tail = tandem_fct_ns(mtu, mtu, hops) - (mtu + HEADER) * 8 / LINE * 1e9
    expected = frames * spacing + tail
    alone = tandem_fct_ns(size, mtu, hops)
    # Tolerance 0.1 % (360 ns): during the first ~2 us no ACK is due yet, so the
    # first ~25 frames go 5 ns closer together (< 130 ns in all).  The ACK share
    # itself is 64/1048 = 6.1 % of the FCT, far outside that.
    for fct in r.flows["fct_ns"]:
        assert fct == pytest.approx(expected, rel=1e-3)
        assert fct > 1.05 * alone
    assert r.counters["ecn_marks"] == 0


# ----------------------------------------------------------------- incast fairness


@pytest.mark.parametrize(
    "n, size",
    [
        # With 2 senders the first CNPs cut both far below the fair share
        # (alpha ~ 1, a cut every 4 us while marked ACKs arrive) and recovery
        # takes RpTimer steps: measured in 500 us slices, utilisation stays
        # >= 95% only from ~3.5 ms on, when 2 x 16 MB flows are already done.
        # They have no steady window, so N = 2 is checked with 64 MB flows.
        pytest.param(8, "16MB", id="8to1-16MB"),
        pytest.param(2, "64MB", id="2to1-64MB"),
    ],
)
def test_incast_is_fair_and_fills_the_bottleneck_in_steady_state(n, size):
    topo = star(n + 1, "100Gbps", "1us")
    flows = incast(range(n), n, size)
    r = run_flows(topo, flows, FabricConfig(rate_sample_interval_ns=10_000))
    check_complete(r, flows)
    assert r.counters["drops"] == 0
    assert r.counters["ecn_marks"] > 0  # DCQCN is actually at work
    t0, t1, thr = steady_throughputs(r, n)
    util = thr.sum() / goodput_line()
    j = jain(thr)
    detail = f"window {t0}..{t1} ns, per-flow Gbps {np.round(thr / 1e9, 2)}, util {util:.4f}, jain {j:.4f}"
    assert j >= 0.98, detail
    assert util >= 0.95, detail
    # Sanity on the measurement itself: the payload rate cannot exceed the line.
    assert util <= 1.0 + 1e-3, detail


# ----------------------------------------------------------------- PFC


def _pfc_threshold_queue(n: int, fab: FabricConfig, rate: float = LINE, delay_ns: float = 1000) -> tuple[float, float]:
    """Egress queue of an n-to-1 star incast held by PFC (ECN off), from the
    MMU rules (anchors §1.3): every port reserves headroom = 3 x BDP and 4 KB;
    ingress i pauses its sender once its shared use s_i reaches
    (buffer - static - sum s) >> 3.  With n equal ingress ports this happens at
    s = F / (n + 8), F = buffer - static.  The queue then holds n(s + reserve),
    plus at most one headroom per ingress of frames already in flight."""
    headroom = fab.headroom_rtt_factor * rate * delay_ns * 1e-9 / 8
    ports = n + 1
    free = fab.buffer_bytes - ports * (headroom + fab.reserve_per_queue_bytes)
    s = free / (n + 2**fab.pfc_alpha_shift)
    low = n * (s + fab.reserve_per_queue_bytes)
    return low, low + n * headroom


@pytest.mark.parametrize(
    "n, size, buffer_bytes",
    [
        (16, "2MB", 32 * 2**20),
        (32, "1MB", 32 * 2**20),
        # the small-buffer incast of docs/switch-buffer-model.md: many pause/resume cycles
        (8, "4MB", 2 * 2**20),
    ],
)
def test_pfc_is_lossless_and_keeps_the_bottleneck_busy_without_ecn(n, size, buffer_bytes):
    topo = star(n + 1, "100Gbps", "1us")
    flows = incast(range(n), n, size)
    fab = FabricConfig(ecn_enabled=False, queue_sample_interval_ns=1000, buffer_bytes=buffer_bytes)
    r = run_flows(topo, flows, fab)
    check_complete(r, flows)
    c = r.counters
    assert c["drops"] == 0 and c["ecn_marks"] == 0 and c["cnps"] == 0
    assert c["retransmitted_packets"] == 0 and c["timeouts"] == 0
    assert c["pauses"] > 0 and c["resumes"] == c["pauses"]  # every pause was lifted
    pfc = r.pfc
    assert int(pfc["pauses"].sum()) == c["pauses"]
    # Only the sender-facing ingress ports pause (the receiver's link carries
    # only ACKs towards the switch, which bypass the MMU).
    paused_links = set(pfc["link"][pfc["pauses"] > 0].tolist())
    assert paused_links == set(range(n))
    # The queue reached the dynamic PFC threshold and headroom absorbed the
    # frames in flight: no more than the analytic band, never above the buffer.
    q = r.queues
    qmax = int(q["bytes"][q["link"] == n].max())
    low, high = _pfc_threshold_queue(n, fab)
    # 2 % below `low`: samples every 1 us can miss the peak by 1 us of net
    # growth at the (n-1) x 100G fill rate, at most 12.5 kB * (n-1) < 2 % here.
    assert 0.98 * low <= qmax <= high, (qmax, low, high)
    per_time = np.bincount(np.unique(q["time_ns"], return_inverse=True)[1], weights=q["bytes"])
    assert per_time.max() <= fab.buffer_bytes
    # Lossless and no congestion control: the bottleneck never idles once the
    # first frame is in, so the last ACK arrives after
    #   first frame onto the switch + all frames on the bottleneck + ACK back.
    tx = (1000 + HEADER) * 8 / LINE * 1e9
    frames = int(flows.bytes.sum()) // 1000
    expected = (tx + 1000) + frames * tx + 1000 + (CONTROL * 8 / LINE * 1e9 + 1000) * 2
    # per-hop rounding to 1 ns steps (4 transmissions on the critical path)
    assert abs(r.makespan_ns - expected) < 8, (r.makespan_ns, expected)


@pytest.mark.parametrize(
    "n, size, buffer_bytes",
    [
        (32, "2MB", None),  # default 32 MB buffer
        (32, "1MB", 4_000_000),  # small buffer: PFC must fire before DCQCN reacts
    ],
)
def test_pfc_with_ecn_heavy_incast_completes_without_drops(n, size, buffer_bytes):
    topo = star(n + 1, "100Gbps", "1us")
    flows = incast(range(n), n, size)
    kw = {} if buffer_bytes is None else {"buffer_bytes": buffer_bytes}
    fab = FabricConfig(queue_sample_interval_ns=1000, **kw)
    r = run_flows(topo, flows, fab)
    check_complete(r, flows)
    c = r.counters
    assert c["drops"] == 0 and c["retransmitted_packets"] == 0 and c["timeouts"] == 0
    assert c["ecn_marks"] > 0 and c["cnps"] > 0
    assert c["resumes"] == c["pauses"]
    if buffer_bytes is not None:
        # 32 line-rate senders fill the egress at 31 x 12.5 GB/s; the PFC
        # threshold queue (about 2.2 MB here) is reached in under 10 us, before
        # the first CNP can return through a queue of that size and cut a rate.
        low, _ = _pfc_threshold_queue(n, fab)
        assert low < 3e6
        assert c["pauses"] > 0
    q = r.queues
    per_time = np.bincount(np.unique(q["time_ns"], return_inverse=True)[1], weights=q["bytes"])
    assert per_time.max() <= fab.buffer_bytes
    # Lower bound: the payload cannot cross the bottleneck faster than line rate.
    assert r.makespan_ns >= int(flows.bytes.sum()) * 8 / goodput_line() * 1e9


# ----------------------------------------------------------------- lossy mode


def test_lossy_small_buffer_drops_and_go_back_n_recovers():
    # PFC off, 200 kB switch buffer; ECN thresholds lowered below the buffer so
    # that DCQCN still gets marks (kmin 20 kB, kmax 80 kB).
    n = 16
    topo = star(n + 1, "100Gbps", "1us")
    flows = incast(range(n), n, "2MB")
    fab = FabricConfig(
        pfc_enabled=False, buffer_bytes=200_000, kmin_bytes_per_100g=20_000, kmax_bytes_per_100g=80_000,
        queue_sample_interval_ns=1000,
    )
    r = run_flows(topo, flows, fab)
    check_complete(r, flows)
    c = r.counters
    assert c["pauses"] == 0 and c["resumes"] == 0 and r.pfc["pauses"].sum() == 0
    assert c["drops"] > 0
    assert c["nacks"] > 0  # gaps detected by receivers
    assert c["ecn_marks"] > 0
    assert (r.flows["retransmitted_packets"] > 0).any()
    # Every drop is a lost frame that was sent again at least once.
    assert c["retransmitted_packets"] >= c["drops"]
    q = r.queues
    per_time = np.bincount(np.unique(q["time_ns"], return_inverse=True)[1], weights=q["bytes"])
    assert per_time.max() <= fab.buffer_bytes


def test_lossy_without_ecn_recovers_through_timeouts():
    # PFC and ECN off: nothing slows the senders, tail drops hit the last frames
    # of a burst (no later frame to reveal the gap), and only the retransmit
    # timeout brings those flows back.  Still every byte arrives exactly once.
    n = 8
    topo = star(n + 1, "100Gbps", "1us")
    flows = incast(range(n), n, "2MB")
    fab = FabricConfig(pfc_enabled=False, ecn_enabled=False, buffer_bytes=200_000)
    r = run_flows(topo, flows, fab)
    check_complete(r, flows)
    c = r.counters
    assert c["drops"] > 0 and c["ecn_marks"] == 0 and c["cnps"] == 0
    assert c["timeouts"] > 0
    assert int(r.flows["timeouts"].sum()) == c["timeouts"]


# ----------------------------------------------------------------- ECN


def test_no_marks_while_the_queue_stays_below_kmin():
    n = 2
    topo = star(n + 1, "100Gbps", "1us")
    flows = incast(range(n), n, "4MB")
    kmin = 16_000_000  # above anything two 4 MB flows can queue
    fab = FabricConfig(kmin_bytes_per_100g=kmin, kmax_bytes_per_100g=2 * kmin, queue_sample_interval_ns=1000)
    r = run_flows(topo, flows, fab)
    check_complete(r, flows)
    qmax = int(r.queues["bytes"][r.queues["link"] == n].max())
    assert 500_000 < qmax < kmin  # a real standing queue, but below kmin
    assert r.counters["ecn_marks"] == 0 and r.counters["cnps"] == 0
    # Same load with default kmin (400 kB), which the queue exceeds: marks.
    fab2 = FabricConfig(queue_sample_interval_ns=1000)
    r2 = run_flows(topo, flows, fab2)
    check_complete(r2, flows)
    assert int(r2.queues["bytes"][r2.queues["link"] == n].max()) > fab2.kmin_bytes_per_100g
    assert r2.counters["ecn_marks"] > 0
    # Each marked frame is answered by a CNP-flagged ACK; the sender does not
    # count a CNP on the ACK that completes its flow.
    assert 0 < r2.counters["cnps"] <= r2.counters["ecn_marks"]


def _ramp_run(
    kmin: int, kmax: int, pmax: float, stop_ns: int, rate: float = LINE, **fabric
) -> tuple[RunResult, np.ndarray, np.ndarray]:
    """2-to-1 incast with congestion control made inert (MinRate = line rate,
    so a CNP cannot slow a sender): the bottleneck egress queue grows by one
    1048 B frame per frame time (two arrive, one leaves) until stop_ns.
    Returns the run and the bottleneck queue samples (every 100 ns)."""
    topo = star(3, f"{rate:.0f}bps", "1us")
    fab = FabricConfig(
        kmin_bytes_per_100g=kmin, kmax_bytes_per_100g=kmax, pmax=pmax, min_rate_mbps=rate / 1e6,
        queue_sample_interval_ns=100, rate_sample_interval_ns=1000, **fabric,
    )
    r = run_flows(topo, incast([0, 1], 2, "16MB"), fab, stop_ns=stop_ns)
    m = r.queues["link"] == 2
    assert r.rates["rate_bps"].min() == rate  # CNPs did not slow anyone
    return r, r.queues["time_ns"][m], r.queues["bytes"][m]


def test_marks_happen_exactly_for_frames_dequeued_above_kmin():
    # kmin == kmax: a frame is marked iff the egress queue it leaves behind is
    # above the threshold (deterministic).  No PFC within 100 us (the queue
    # stays near 1.2 MB, far below the ~6.7 MB pause point of two ingresses).
    k, stop = 200_000, 100_000
    r, t, q = _ramp_run(k, k, 1.0, stop)
    assert r.counters["pauses"] == 0
    # The queue samples show the physics: +1048 B per 83.84 ns = 12.5 B/ns.
    slope = np.polyfit(t, q.astype(float), 1)[0]
    assert slope == pytest.approx(2 * LINE / 8e9 - LINE / 8e9, rel=1e-3)
    # The bottleneck sends one frame per frame time; every one it sends after
    # the queue first exceeds k is marked.  Queue sampled every 100 ns = 1.2
    # frame times, so the crossing is known to +-2 frames.
    t_cross = int(t[q > k][0])
    frame = (1000 + HEADER) * 8 / LINE * 1e9
    expected = (stop - t_cross) / frame
    assert abs(r.counters["ecn_marks"] - expected) <= 3, (r.counters["ecn_marks"], expected)
    assert r.counters["ecn_marks"] > 900


def test_marking_probability_rises_linearly_between_kmin_and_kmax():
    # pmax * (q - kmin) / (kmax - kmin) per dequeued frame: the expected count
    # over the ramp from the queue samples, +- 5 standard deviations of the sum
    # of those Bernoulli draws.
    kmin, kmax, pmax, stop = 200_000, 800_000, 0.5, 100_000
    r, t, q = _ramp_run(kmin, kmax, pmax, stop)
    frame = (1000 + HEADER) * 8 / LINE * 1e9
    t_first = t[q > 0][0]
    dequeues = np.arange(t_first, stop, frame)
    qd = np.interp(dequeues, t, q)
    p = np.where(qd > kmax, 1.0, np.clip(pmax * (qd - kmin) / (kmax - kmin), 0.0, 1.0))
    mean, sd = p.sum(), np.sqrt((p * (1 - p)).sum())
    marks = r.counters["ecn_marks"]
    assert abs(marks - mean) <= 5 * sd + 2, (marks, mean, sd)
    # And clearly not the all-or-nothing rule of the previous test.
    assert marks < 0.8 * (stop - t[q > kmin][0]) / frame


def test_a_200g_port_marks_at_its_ecn_map_thresholds():
    # 200G links with an ecn_map entry for 200G (kmin = kmax = 300 KB, pmax 1:
    # step marking) while the per-100G keys would give 200G ports kmin 800 kB,
    # kmax 3.2 MB, pmax 0.2.  As in the step test above, every frame the
    # bottleneck sends after its queue first exceeds the map's 300 KB is marked.
    rate, k, stop = 200e9, 300_000, 30_000
    ecn_map = {"200Gbps": {"kmin_kb": k / 1000, "kmax_kb": k / 1000, "pmax": 1.0}}
    r, t, q = _ramp_run(400_000, 1_600_000, 0.2, stop, rate=rate, ecn_map=FabricConfig.from_mapping(
        {"ecn_map": ecn_map}).ecn_map)
    assert r.counters["pauses"] == 0
    slope = np.polyfit(t, q.astype(float), 1)[0]
    assert slope == pytest.approx(rate / 8e9, rel=1e-3)  # two in, one out at 200G
    frame = (1000 + HEADER) * 8 / rate * 1e9
    t_cross = int(t[q > k][0])
    expected = (stop - t_cross) / frame
    assert abs(r.counters["ecn_marks"] - expected) <= 3, (r.counters["ecn_marks"], expected)
    # The queue never reached the linear rule's kmin: without the map, no marks.
    assert q.max() < 800_000
    r2, _, _ = _ramp_run(400_000, 1_600_000, 0.2, stop, rate=rate)
    assert r2.counters["ecn_marks"] == 0


# ----------------------------------------------------------------- DCQCN


def test_dcqcn_cuts_on_cnps_and_climbs_back_to_line_rate():
    # A: 32 MB from host 0 at t = 0; B: 2 MB from host 1 at 200 us; both to host 2.
    fab = FabricConfig(rate_sample_interval_ns=1000)
    flows = FlowSet.from_lists([0, 1], [2, 2], ["32MB", "2MB"], [0, 200_000])
    r = run_flows(star(3, "100Gbps", "1us"), flows, fab)
    check_complete(r, flows)
    assert r.counters["cnps"] > 0
    b_start, b_end = (int(x) for x in (r.flows["start_ns"][1], r.flows["finish_ns"][1]))
    assert r.flows["finish_ns"][0] > b_end + 2_000_000  # A outlives B by > 2 ms
    m = r.rates["flow"] == 0
    t, rate = r.rates["time_ns"][m], r.rates["rate_bps"][m]
    assert rate.max() <= LINE
    assert np.all(rate[t < b_start] == LINE)  # alone: line rate, no CNP
    # Contention: two line-rate senders on one 100G port; the fair share is
    # 50 % and DCQCN's first cut is alpha/2 with alpha ~ 1, so the rate must go
    # to half the line or lower.
    during = (t >= b_start) & (t <= b_end)
    assert rate[during].min() <= 0.5 * LINE
    # First cut: alpha starts at 1 on the first CNP and gets 4 EWMA updates
    # (every 1 us, gain g) before the decrease check 4 us later, so the factor
    # (1 - alpha/2) lies in [0.5, 1 - (1-g)^4 / 2].
    g = fab.ewma_gain
    first_cut = rate[np.flatnonzero(rate < LINE)[0]] / LINE
    assert 0.5 - 1e-12 <= first_cut <= 1 - (1 - g) ** 4 / 2 + 1e-12
    # After the last cut the rate only rises, one step per RpTimer (300 us):
    # rate <- (rate + target) / 2 with target <= line rate, so each step at most
    # halves the gap to the line rate.
    change = np.flatnonzero(np.diff(rate) != 0) + 1
    cuts = change[rate[change] < rate[change - 1]]
    ups = change[change > cuts[-1]]
    assert t[cuts[-1]] < b_end  # no cut once B is gone
    assert len(ups) >= 7
    # The increase timer restarts at every cut, then fires every RpTimer.
    steps = np.diff(t[np.concatenate([[cuts[-1]], ups])])
    rp = fab.rp_timer_us * 1000
    assert np.all(np.abs(steps - rp) <= 1000), steps  # samples every 1 us
    gaps = LINE - rate[np.concatenate([[cuts[-1]], ups])]
    ratio = gaps[1:] / gaps[:-1]
    assert np.all(ratio >= 0.5 - 1e-9)
    # Every cut came within one RpTimer of the first CNP (the increase stage was
    # still 0), so target stayed at the line rate set by the first CNP and
    # each step halves the gap exactly.
    if t[cuts[-1]] - t[cuts[0]] < rp:
        assert ratio == pytest.approx(np.full(ratio.size, 0.5), rel=1e-6)
    # Back at line rate (within 1 %) before A ends.
    assert rate[-1] >= 0.99 * LINE


# ----------------------------------------------------------------- determinism


def _ecn_scenario(seed: int) -> RunResult:
    fab = FabricConfig(seed=seed, rate_sample_interval_ns=10_000, queue_sample_interval_ns=10_000)
    return run_flows(star(9), incast(range(8), 8, "2MB"), fab)


def _same(a: RunResult, b: RunResult) -> None:
    for name in a.flows.dtype.names:
        assert np.array_equal(a.flows[name], b.flows[name]), name
    assert a.counters == b.counters
    assert a.events == b.events and a.sim_time_ns == b.sim_time_ns
    for table in ("pfc", "queues", "rates"):
        x, y = getattr(a, table), getattr(b, table)
        assert x.dtype == y.dtype and np.array_equal(x, y), table
    assert a.paths == b.paths


def test_same_seed_same_results_different_seed_differs():
    a, b = _ecn_scenario(1), _ecn_scenario(1)
    assert a.counters["ecn_marks"] > 0  # the marking RNG is in play
    _same(a, b)
    c = _ecn_scenario(2)
    check_complete(c, incast(range(8), 8, "2MB"))
    assert (c.counters["ecn_marks"] != a.counters["ecn_marks"]) or not np.array_equal(
        c.flows["finish_ns"], a.flows["finish_ns"]
    )


def test_wormhole_kernel_without_fast_forward_matches_baseline():
    # Baseline identity (DESIGN.md): same seed, same events, same results.
    fab = FabricConfig(rate_sample_interval_ns=10_000, queue_sample_interval_ns=10_000)
    flows = incast(range(8), 8, "2MB")
    a = run_flows(star(9), flows, fab, kernel="baseline")
    b = run_flows(star(9), flows, fab, kernel="wormhole", wormhole=WormholeConfig(fast_forward=False))
    _same(a, b)
