"""How the accuracy matrix bounds a run from the reference's own reruns
(``accuracy_matrix.Reference.bounds``), on draws made up for the purpose: the
bounds of a chaotic reference follow the reruns that redraw it, and a kind of
rerun that barely moves it cannot stretch them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ns3wormhole import accuracy_matrix as am

MAKESPAN = 1_000_000


def _run(makespan: float = MAKESPAN) -> SimpleNamespace:
    return SimpleNamespace(network=SimpleNamespace(makespan_ns=makespan))


def _draws(kind: str, means, maxes, makespan_moves=None) -> list[am.Draw]:
    moves = makespan_moves if makespan_moves is not None else [0.0] * len(means)
    return [am.Draw(kind, None, None, _run(MAKESPAN * (1 + m)), (a, b, abs(m)))
            for a, b, m in zip(means, maxes, moves)]


COUNTERS = _draws("counters", [0.0327, 0.0355, 0.0109, 0.0221, 0.0219, 0.0223, 0.0224, 0.0326],
                  [0.0659, 0.0656, 0.0599, 0.0625, 0.0659, 0.0601, 0.0626, 0.0658])


def test_a_rerun_that_barely_moves_the_flows_does_not_stretch_the_bounds():
    """HPCC's 20 us incast waves: a flow 1 ns late moves the flows by 0.01%,
    phases move whole waves (the makespan, not the flows), other counter
    starts move each flow by 1-3.5%. One log-normal over all of them gave a
    bound of 15,000%; the bounds follow the counter draws."""
    late = _draws("late", [1e-4], [8e-4])
    phases = _draws("phase", [0.0] * 7, [0.0] * 7, [0.0011 * k for k in range(1, 8)])
    alone = am.Reference(_run(), COUNTERS).bounds()
    mixed = am.Reference(_run(), late + phases + COUNTERS).bounds()
    assert mixed[0] == alone[0] and mixed[1] == alone[1]
    assert 0.0355 < mixed[0] < 0.15 and 0.0659 < mixed[1] < 0.15, mixed


def test_the_widest_kind_of_rerun_sets_the_bounds():
    phases = _draws("phase", [0.0164, 0.0799, 0.0607, 0.0368, 0.0335, 0.0307, 0.0117],
                    [0.0329, 0.1491, 0.1081, 0.063, 0.0546, 0.0514, 0.0278])
    both = am.Reference(_run(), phases + COUNTERS).bounds()
    assert both[:2] == tuple(np.maximum(am.Reference(_run(), phases).bounds()[:2],
                                        am.Reference(_run(), COUNTERS).bounds()[:2]))
    assert both[0] > am.Reference(_run(), COUNTERS).bounds()[0]


def test_a_deterministic_reference_is_held_to_the_targets():
    still = _draws("late", [0.0, 0.0], [0.0, 0.0])
    assert am.Reference(_run(), still).bounds() == am.BOUNDS
