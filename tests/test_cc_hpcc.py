"""HPCC (cc = "hpcc") against its published behaviour (SIGCOMM'19): in-band telemetry
lets the senders hold the most loaded hop at U_TARGET with a near-empty queue, and a
flow climbs back as soon as its competitor leaves. Expectations come from the
topology and the algorithm's parameters, not from earlier runs."""

from __future__ import annotations

import numpy as np
import pytest

from cc_helpers import (
    INT_BYTES, LINE, MTU, delivered_rates, jain, long_and_short, payload_capacity, queue_between, run_incast,
)


@pytest.fixture(scope="module")
def incast8():
    return run_incast("hpcc", 8, "2MB")


def test_int_bytes_on_the_wire(incast8):
    """Each DATA frame and its ACK carry the 42-byte INT header: the ideal FCT
    (alone, store-and-forward over two 100G/1us hops) counts it."""
    r, _ = incast8
    f = r.flows
    wire = (MTU + 48 + INT_BYTES) * 8 / LINE * 1e9
    ack = (64 + INT_BYTES) * 8 / LINE * 1e9
    frames = -(-f["bytes"].astype(np.int64) // MTU)
    ideal = (frames - 1) * wire + 2 * (wire + 1000) + 2 * (ack + 1000)
    np.testing.assert_allclose(f["ideal_fct_ns"], ideal, rtol=1e-9)
    assert (f["data_packets"] == frames).all()  # no loss, no retransmission


def test_incast_holds_u_target_with_a_near_empty_queue(incast8):
    r, link = incast8
    eta = 0.95
    end = float(r.flows["finish_ns"].min())
    t1, t2 = 0.25 * end, 0.75 * end
    rates = delivered_rates(r, t1, t2)
    utilisation = rates.sum() / payload_capacity("hpcc")
    assert utilisation == pytest.approx(eta, abs=0.02)
    # U counts queued bytes too: at eta < 1 the queue drains to about a frame per
    # sender or less (DCQCN keeps hundreds of KB here), and never builds up again.
    q = queue_between(r, link, t1, t2)
    frame = MTU + 48 + INT_BYTES
    assert q.mean() < 8 * frame
    assert q.max() < 8 * 8 * frame
    assert jain(rates) > 0.95


def test_recovers_after_the_competitor_leaves():
    r = long_and_short("hpcc", 12_000_000, 2_000_000)
    f = r.flows
    t_end = float(f["finish_ns"][1])
    # while both run, they share the bottleneck at about eta of its capacity
    both = delivered_rates(r, 0.5 * (100_000 + t_end), t_end - 5_000)
    assert both.sum() / payload_capacity("hpcc") == pytest.approx(0.95, abs=0.03)
    # U halves when the competitor leaves: the rate doubles within a few RTTs
    # (each per-RTT update divides by U/eta), back to eta of line rate.
    alone = delivered_rates(r, t_end + 20_000, float(f["finish_ns"][0]) - 5_000)[0]
    assert alone / payload_capacity("hpcc") == pytest.approx(0.95, abs=0.03)
    s = r.rates[(r.rates["flow"] == 0) & (r.rates["time_ns"] >= t_end + 20_000)]
    assert s["rate_bps"].min() > 0.9 * LINE
