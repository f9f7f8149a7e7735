"""What a skip credits, as the kernel books it and as the model took it
(issue 11): the NIC never takes more than a flow has unsent, and the kernel
books only what it took, so its R-hat, its completion horizon and what a
skip-back takes back all agree with the flow's real progress. A credit that
completes a flow does so once the skip is in place, not inside it."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole import run, scenarios
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet, incast
from ns3wormhole.topology import star

MB = 1_000_000


def _cases():
    # a 4-to-1 incast twice, step marking (the second wave a memo hit: credit
    # and restored backlog)
    waves = FlowSet.concat([incast([0, 1, 2, 3], 4, 4 * MB, start_ns=k * 3_000_000) for k in range(2)])
    yield pytest.param(star(5, "100Gbps", "1us"), waves, FabricConfig().with_step_marking(), run.WormholeConfig(), id="waves-step")
    # a lone flow, then a shorter one on the same path: it reuses a prefix
    # of the first one's flat transient
    lone = FlowSet.from_lists([0, 0], [1, 1], [16 * MB, 3 * MB], [0, 3_000_000])
    yield pytest.param(star(2, "100Gbps", "1us"), lone, FabricConfig(), run.WormholeConfig(), id="lone-prefix")
    # no completion margin: a skip runs up to the last unsent byte
    topo, flows = scenarios.lone(16 * MB)
    yield pytest.param(topo, flows, FabricConfig(), run.WormholeConfig(completion_margin_us=0, memo=False), id="no-margin")


@pytest.mark.parametrize(("topo", "flows", "fabric", "cfg"), list(_cases()))
def test_kernel_books_what_the_model_took(topo, flows, fabric, cfg):
    r = run.run_flows(topo, flows, fabric, kernel="wormhole", wormhole=cfg)
    assert r.completed.all()
    assert r.stats["time_skipped_ns"] > 0
    nic = {int(i): int(c) for i, c in zip(r.flows["id"], r.flows["credited_bytes"])}
    kernel = {f: r.kernel_credited_bytes.get(f, 0) for f in nic}
    assert kernel == nic


@pytest.mark.parametrize(("topo", "flows", "fabric", "cfg"), [c for c in _cases() if c.id != "no-margin"])
def test_a_credit_is_whole_frames(topo, flows, fabric, cfg):
    """The NIC takes whole frames (docs/fast-forward.md): the frames left keep
    the packetization of a packet-level run, and the ports the credited
    frames are booked on keep their serialization phase. Only a credit that
    completes a flow (none here: the completion margin) may end in a part."""
    r = run.run_flows(topo, flows, fabric, kernel="wormhole", wormhole=cfg)
    credited = r.flows["credited_bytes"].astype(np.int64)
    assert credited.any()
    np.testing.assert_array_equal(credited % fabric.mtu_bytes, 0)
