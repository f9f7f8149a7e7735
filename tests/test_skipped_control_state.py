"""What a skip does to congestion-control state slower than the flows'
rates: DCQCN's target rate, reset only by a decrease that follows an
increase stage (docs/fast-forward.md, "A skip freezes slow control state")."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole import run
from ns3wormhole.compare import PairedBias, signed_errors
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet
from ns3wormhole.topology import star

MB = 1_000_000


@pytest.mark.slow
def test_a_joiner_leaves_a_skip_without_the_target_rate_it_held_before_it():
    """B (128 MB) joins A (128 MB) at 2 ms on one receiver, default marking:
    a chaotic pair, so each seed's Wormhole run is one draw against the
    default kernel's run of the same seed. After the change both targets
    settle over several of the shares' 1.5 ms cycles; a skip that kept the
    target B held when it began let B, alone once A left, climb towards that
    stale target faster than the reference's B: over 30 seeds the makespan
    came out 0.83% +- 0.25 early (t = 3.3). Judged as the pooled incast is:
    the signed makespan errors must be consistent with no bias at all at a
    1% false-alarm rate, and Wormhole's makespans must spread over the seeds
    as the reference's do."""
    topo = star(4, "100Gbps", "1us")  # bench_contention's join128
    flows = FlowSet.from_lists(src=[0, 1], dst=[2, 2], bytes=[128 * MB, 128 * MB], start_ns=[0, 2_000_000])
    base, worm = [], []
    for seed in range(1, 31):
        fabric = FabricConfig(seed=seed)
        base.append(run.run_flows(topo, flows, fabric, "baseline"))
        worm.append(run.run_flows(topo, flows, fabric, "wormhole", run.WormholeConfig()))
    assert all(w.stats["fast_forwards"] > 0 for w in worm)  # the skips this is about happened
    span, _ = signed_errors(base, worm)
    bias = PairedBias(span, margin=0.0)
    assert bias.ok, bias
    spread_base = np.std([b.makespan_ns for b in base], ddof=1)
    spread_worm = np.std([w.makespan_ns for w in worm], ddof=1)
    # F test of equal variances at 1% two-sided, 29 and 29 degrees of freedom: 0.38 < ratio < 2.63.
    assert 0.38 < spread_worm**2 / spread_base**2 < 2.63, (spread_worm, spread_base)
