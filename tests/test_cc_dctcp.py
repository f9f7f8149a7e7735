"""DCTCP (cc = "dctcp") against its published behaviour (SIGCOMM'10): long flows into
one port converge to equal shares with the queue held around the marking threshold K,
and a flow whose competitors leave grows back by one step (dctcp_rate_ai_mbps) per
RTT until line rate. Expectations come from the topology and the parameters."""

from __future__ import annotations

import numpy as np
import pytest

from cc_helpers import LINE, base_rtt_s, delivered_rates, fabric, jain, payload_capacity, queue_between, run_incast
from ns3wormhole.flows import FlowSet
from ns3wormhole.run import run_flows
from ns3wormhole.topology import star

K = 300_000  # run.py dctcp at 100G: KMIN = KMAX = 300 KB, PMAX 1


def test_incast_fair_shares_with_the_queue_near_k():
    # 8 windows of a bandwidth-delay product (8 x ~52 KB) exceed K: marking, not
    # the windows alone, bounds the queue.
    r, link = run_incast("dctcp", 8, "2MB")
    assert r.counters["ecn_marks"] > 0 and r.counters["pauses"] == 0
    end = float(r.flows["finish_ns"].min())
    t1, t2 = 0.25 * end, 0.75 * end
    rates = delivered_rates(r, t1, t2)
    assert jain(rates) > 0.999
    assert rates.sum() / payload_capacity("dctcp") == pytest.approx(1.0, abs=0.01)  # no idle link
    q = queue_between(r, link, t1, t2)
    assert 0.5 * K < q.mean() < 1.2 * K
    assert q.max() < 2 * K


def test_recovers_one_step_per_rtt():
    """Flow 0 of an 8-to-1 incast outlives the others (1 MB each): from its cut
    rate it grows by RateAi once per window of data, i.e. per base RTT on the
    now idle path, until line rate."""
    n = 8
    topo = star(n + 1, "100Gbps", "1us")
    flows = FlowSet.from_lists(list(range(n)), [n] * n, [8_000_000] + [1_000_000] * (n - 1), 0)
    r = run_flows(topo, flows, fabric("dctcp"))
    t_end = float(r.flows["finish_ns"][1:].max())
    s = r.rates[(r.rates["flow"] == 0) & (r.rates["time_ns"] >= t_end)]
    assert s["rate_bps"][0] < 0.8 * LINE  # it had been cut
    climbing = s[s["rate_bps"] < 0.95 * LINE]
    slope = np.polyfit(climbing["time_ns"] * 1e-9, climbing["rate_bps"], 1)[0]
    expected = 615e6 / base_rtt_s("dctcp", [(LINE, 1e-6)] * 2)
    assert slope == pytest.approx(expected, rel=0.1)
    assert s["rate_bps"][-1] == LINE
    t_final = float(r.flows["finish_ns"][0])
    alone = delivered_rates(r, t_final - 200_000, t_final - 10_000)[0]
    assert alone / payload_capacity("dctcp") == pytest.approx(1.0, abs=0.01)
