"""Links with an error rate (the HPCC topology file's last column): frames are
lost on the wire with that probability, go-back-N recovers, bytes are conserved.

Expected values come from the binomial law of the loss draws and from the
model contract (every frame put on a lossy link is one Bernoulli trial; PFC
frames are exempt), never from an earlier run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet, incast
from ns3wormhole.run import run_flows
from ns3wormhole.topology import read_hpcc, star


def _check_complete(r, flows: FlowSet, mtu: int = 1000) -> None:
    f = r.flows
    assert np.all(f["finish_ns"] >= 0), f"unfinished flows: {f['id'][f['finish_ns'] < 0]}"
    assert f["bytes"].tolist() == flows.bytes.tolist()
    # Each byte went out as new data exactly once; the rest were resends.
    new = f["data_packets"] - f["retransmitted_packets"]
    assert np.array_equal(new, -(-f["bytes"].astype(np.int64) // mtu))


@pytest.mark.parametrize("p", [0.002, 0.02])
def test_loss_rate_is_binomial_and_go_back_n_recovers(p):
    # Host 0 -> switch -> host 1; only link 0 (host 0 <-> switch) is lossy, both
    # ways. Frames put on it: every DATA frame host 0 sends, and every ACK/NACK
    # host 1 sends (the switch forwards each onto link 0; link 1 is lossless).
    topo = star(2, "100Gbps", "1us")
    topo.error_rate[0] = p
    flows = FlowSet.from_lists([0], [1], ["4MB"], [0])
    r = run_flows(topo, flows, FabricConfig())
    _check_complete(r, flows)
    c = r.counters
    assert c["drops"] == 0 and c["pauses"] == 0
    trials = c["data_packets"] + c["acks"] + c["nacks"]
    lost = c["link_losses"]
    sd = np.sqrt(trials * p * (1 - p))
    assert abs(lost - p * trials) <= 5 * sd + 1, (lost, p * trials, sd)
    assert c["retransmitted_packets"] > 0
    # A lone flow at line rate, nothing else to wait for: a loss costs a NACK
    # round trip or a timeout, so the flow is slower than alone on a clean link.
    clean = run_flows(star(2, "100Gbps", "1us"), flows, FabricConfig())
    assert clean.counters["link_losses"] == 0 and clean.counters["retransmitted_packets"] == 0
    assert r.flows["fct_ns"][0] > clean.flows["fct_ns"][0]


def test_losses_are_deterministic_and_seeded():
    topo = star(5, "100Gbps", "1us")
    topo.error_rate[:] = 0.01
    flows = incast(range(4), 4, "1MB")
    a = run_flows(topo, flows, FabricConfig(seed=3))
    b = run_flows(topo, flows, FabricConfig(seed=3))
    c = run_flows(topo, flows, FabricConfig(seed=4))
    for x in (a, b, c):
        _check_complete(x, flows)
    assert a.counters == b.counters and np.array_equal(a.flows, b.flows)
    assert a.counters["link_losses"] != c.counters["link_losses"] or not np.array_equal(a.flows, c.flows)


def test_a_lossy_link_on_one_side_of_a_switch_does_not_move_draws_elsewhere():
    # Draws are per link direction and counter-based: a flow's losses on its own
    # lossy link do not depend on traffic on other links of the same switch.
    topo = star(4, "100Gbps", "1us")
    topo.error_rate[0] = 0.01  # only host 0's link
    alone = FlowSet.from_lists([0], [1], ["2MB"], [0])
    with_other = FlowSet.from_lists([0, 2], [1, 3], ["2MB", "2MB"], [0, 0])
    r1 = run_flows(topo, alone, FabricConfig())
    r2 = run_flows(topo, with_other, FabricConfig())
    assert r1.counters["link_losses"] == r2.counters["link_losses"] > 0
    assert r1.flows["fct_ns"][0] == r2.flows["fct_ns"][0]


def test_hpcc_topology_error_column_takes_effect(tmp_path: Path):
    # 3 nodes (switch 2), two 100G links; the second has error rate 0.01.
    path = tmp_path / "topology.txt"
    path.write_text("3 1 2\n2\n0 2 100Gbps 0.001ms 0\n1 2 100Gbps 0.001ms 0.01\n")
    topo = read_hpcc(path)
    assert topo.error_rate.tolist() == [0.0, 0.01]
    flows = FlowSet.from_lists([0], [1], ["2MB"], [0])
    r = run_flows(topo, flows, FabricConfig())
    _check_complete(r, flows)
    assert r.counters["link_losses"] > 0


def test_scenario_keys_error_rate_and_ecn_map(tmp_path: Path):
    from ns3wormhole.errors import InputError
    from ns3wormhole.scenario import load_scenario

    text = """
[topology]
kind = "star"
n_hosts = 3
rate = "200Gbps"
error_rate = 0.001
[fabric]
min_rate_mbps = "1Gbps"
ecn_map = { "200Gbps" = {kmin_kb = 300, kmax_kb = 1200, pmax = 0.8} }
[workload]
kind = "flows"
pattern = "incast"
bytes = "1MB"
"""
    path = tmp_path / "s.toml"
    path.write_text(text)
    sc = load_scenario(path)
    assert sc.topology.error_rate.tolist() == [0.001] * 3
    assert sc.fabric.ecn_map == ((200_000_000_000, 300_000, 1_200_000, 0.8),)
    path.write_text(text.replace("error_rate = 0.001", "error_rate = 2"))
    with pytest.raises(InputError, match=r"topology\.error_rate: expected a probability in \[0, 1\], got 2"):
        load_scenario(path)
    path.write_text(text.replace("kmax_kb = 1200", "kmax_kb = 100"))
    with pytest.raises(InputError, match=r"fabric\.ecn_map\.200Gbps: need 0 <= kmin <= kmax"):
        load_scenario(path)
