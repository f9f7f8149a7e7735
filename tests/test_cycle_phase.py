"""A skip leaves a controller's once-per-round-trip cycle at the phase the
reference's reaches, so what meets the flow after the skip meets it as in
the reference: across join phases spread over a round trip, Wormhole's
results spread as the reference's do and show no bias."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole import run
from ns3wormhole.compare import PairedBias, signed_errors
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet
from ns3wormhole.topology import star

MB = 1 << 20
PHASES = 16


@pytest.mark.parametrize("delay_us", [5, 20])
def test_a_flow_skipped_alone_meets_a_joiner_at_the_phase_of_its_update_cycle(delay_us: int) -> None:
    """HPCC: A (64 MB) alone is skipped, B (64 MB) joins at 2 ms. Where in
    A's per-RTT update cycle the join falls decides how the pair splits the
    port, and the split holds for milliseconds: the reference's A ends up to
    8% apart between joins a few microseconds apart. A skip froze the cycle
    (sequence numbers do not move over a credit) and the switches' stamps
    on frames in flight, so every join met A at one phase: over 16 joins
    spread across a round trip A came out 2.7% late on 5 us links and 4.6%
    on 20 us, with a spread over the phases a twentieth of the reference's.
    The join is deterministic but chaotic in its phase, so it is judged as a
    chaotic pattern: no bias in the makespan or the mean FCT beyond the
    soundness bounds (0.5%, 1%; 1% false alarm), and the mean FCTs spread
    over the phases as the reference's (the frozen cycle fails that first)."""
    topo = star(4, "100Gbps", f"{delay_us}us")
    fabric = FabricConfig(cc="hpcc")
    round_trip_ns = 4 * delay_us * 1000  # two links each way
    base, worm = [], []
    for k in range(PHASES):
        join = 2_000_000 + k * round_trip_ns // PHASES
        flows = FlowSet.from_lists(src=[0, 1], dst=[2, 2], bytes=[64 * MB, 64 * MB], start_ns=[0, join])
        base.append(run.run_flows(topo, flows, fabric, "baseline"))
        worm.append(run.run_flows(topo, flows, fabric, "wormhole"))
    assert all(w.stats["fast_forwards"] > 0 for w in worm)  # A's skip before the join happened
    span, fct = signed_errors(base, worm)
    for errors, bound in ((span, 0.005), (fct, 0.01)):  # the soundness bounds
        bias = PairedBias(errors, margin=bound)
        assert bias.ok, bias

    def mean_fcts(runs: list[run.RunResult]) -> np.ndarray:
        return np.array([r.flows["fct_ns"].mean() for r in runs])

    ratio = np.var(mean_fcts(worm), ddof=1) / np.var(mean_fcts(base), ddof=1)
    # F test of equal variances at 1% two-sided, 15 and 15 degrees of freedom: 1/4.07 < ratio < 4.07.
    assert 1 / 4.07 < ratio < 4.07, ratio
