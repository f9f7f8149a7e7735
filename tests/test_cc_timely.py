"""TIMELY (cc = "timely") against its published behaviour (SIGCOMM'15): the rate follows
the RTT gradient, falling while queueing delay grows past T_low and rising while it
shrinks, and below T_low it grows by delta (timely_rate_ai_mbps) once per RTT.
Expectations come from the topology and the parameters."""

from __future__ import annotations

import numpy as np
import pytest

from cc_helpers import LINE, base_rtt_s, delivered_rates, fabric, long_and_short, payload_capacity, queue_between
from ns3wormhole.flows import FlowSet
from ns3wormhole.run import run_flows
from ns3wormhole.topology import star

T_LOW = 50e-6


@pytest.fixture(scope="module")
def joined():
    """Flow 0 alone at line rate; flow 1 joins at 100 us (4 MB): the bottleneck
    queue, and with it the RTT, rises and falls again."""
    return long_and_short("timely", 40_000_000, 4_000_000)


def test_rate_follows_the_rtt_gradient(joined):
    r = joined
    q = queue_between(r, 2, 100_000, float(r.flows["finish_ns"][1]))
    t = np.arange(len(q)) * 1000.0 + 100_000
    rate0 = r.rates[r.rates["flow"] == 0]
    rate_at = lambda when: np.interp(when, rate0["time_ns"], rate0["rate_bps"])  # noqa: E731
    # Below T_low of queueing delay TIMELY only increases: still at line rate.
    low = T_LOW * LINE / 8
    t_low = t[np.argmax(q > low)]
    assert rate_at(t_low - 5_000) == LINE
    # RTT rising past T_low: each flow's rate falls, after the crossing and no
    # later than an RTT after the queue's peak (the feedback delay).
    peak = int(np.argmax(q))
    rtt_peak = q[peak] * 8 / LINE + base_rtt_s("timely", [(LINE, 1e-6)] * 2)
    assert t_low < t[peak]
    for flow in (0, 1):
        s = r.rates[r.rates["flow"] == flow]
        first_cut = s["time_ns"][np.argmax(s["rate_bps"] < LINE)]
        assert t_low < first_cut <= t[peak] + rtt_peak * 1e9
    assert rate_at(t[peak] + rtt_peak * 1e9) < 0.5 * LINE
    # From then on the queue drains and the RTT falls, then stays below T_low:
    # the rate never falls again while flow 1 runs, and climbs.
    after = rate0[(rate0["time_ns"] > t[peak] + rtt_peak * 1e9) & (rate0["time_ns"] < r.flows["finish_ns"][1])]
    assert len(after) > 100
    assert (np.diff(after["rate_bps"]) >= 0).all()
    assert after["rate_bps"][-1] > 10 * after["rate_bps"][0]


def test_recovers_delta_per_rtt_to_line_rate(joined):
    r = joined
    t_end = float(r.flows["finish_ns"][1])
    s = r.rates[(r.rates["flow"] == 0) & (r.rates["time_ns"] > t_end)]
    q = queue_between(r, 2, t_end, float(r.flows["finish_ns"][0]))
    assert q.max() < T_LOW * LINE / 8  # RTT below T_low: additive increase only
    # One update per RTT: the ACK of the first frame sent after an update comes
    # back a base RTT (plus up to one pacing gap) later. Fit where the gap is small.
    climbing = s[(s["rate_bps"] > 0.3 * LINE) & (s["rate_bps"] < 0.95 * LINE)]
    slope = np.polyfit(climbing["time_ns"] * 1e-9, climbing["rate_bps"], 1)[0]
    rtt = base_rtt_s("timely", [(LINE, 1e-6)] * 2)
    assert 100e6 / (rtt + 1064 * 8 / (0.3 * LINE)) < slope <= 100e6 / rtt * 1.001
    assert s["rate_bps"][-1] == LINE
    t_final = float(r.flows["finish_ns"][0])
    alone = delivered_rates(r, t_final - 200_000, t_final - 10_000)[0]
    assert alone / payload_capacity("timely") == pytest.approx(1.0, abs=0.01)
