"""Isolation (DESIGN.md): a partition's results do not depend on whether an
unrelated one exists. Anything random is drawn per port, never from one
stream a whole switch shares, so an unrelated incast on other ports of the
same switch moves no ECN mark of another, under either kernel."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole import run
from ns3wormhole.flows import FlowSet, incast
from ns3wormhole.topology import star

MB = 1_000_000
# Default (probabilistic) marking: every mark between kmin and kmax is a draw.
TOPO = star(10, "100Gbps", "1us")  # hosts 0-9; host i on port i of switch 10
B = incast([0, 1, 2, 3], 4, 4 * MB)  # ports 0-4


def _unrelated_incast() -> FlowSet:
    """4-to-1 into host 9 from hosts 5-8 (ports 5-9), ids after B's, started
    a little later so its marks interleave with B's in time."""
    return FlowSet.from_lists([5, 6, 7, 8], [9] * 4, [4 * MB] * 4, [30_000] * 4, ids=[4, 5, 6, 7])


def _b_flows(result: run.RunResult) -> np.ndarray:
    f = result.flows
    return np.sort(f[f["dst"] == 4], order="id")[["id", "start_ns", "finish_ns"]]


@pytest.mark.parametrize(
    ("kernel", "wormhole"),
    [("baseline", None), ("wormhole", run.WormholeConfig(memo=False)), ("wormhole", None)],
    ids=["baseline", "wormhole-memo-off", "wormhole"],
)
def test_unrelated_incast_on_the_same_switch_moves_no_fct(kernel, wormhole):
    alone = run.run_flows(TOPO, B, kernel=kernel, wormhole=wormhole)
    both = run.run_flows(TOPO, FlowSet.concat([B, _unrelated_incast()], renumber=False), kernel=kernel, wormhole=wormhole)
    assert alone.completed.all() and both.completed.all()
    # the incast really marks (probabilistically), and the other one too
    assert alone.counters["ecn_marks"] > 0
    assert both.counters["ecn_marks"] > alone.counters["ecn_marks"]
    np.testing.assert_array_equal(_b_flows(both), _b_flows(alone))
