"""Max-min fair rates (cpp/wormhole/model/bottleneck.cc), which decide which
links couple flows into one partition (docs/coupling.md, "Transit links") and
which links a memo key counts as contended. Checked against hand-solved cases
and against the definition on random instances: every rate is feasible, and
every flow is at its line rate or crosses a full link on which no flow gets
more than it (the bottleneck property that characterises max-min fairness)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ns3wormhole import _core


def test_a_flow_held_back_elsewhere_leaves_its_share_to_the_others():
    # Two 2-to-1 incasts (50 G each, held at their receivers) and two free
    # line-rate flows share a 400G uplink: 50 + 50 + 50 + 50 + 100 + 100.
    # An equal share of the uplink (66.7 G each) would call it a third empty.
    capacity = [400.0, 100.0, 100.0]
    flows_on = [[0, 1, 2, 3, 4, 5], [0, 1], [2, 3]]
    rates = _core.fair_rates(capacity, flows_on, [100.0] * 6)
    assert np.allclose(rates, [50, 50, 50, 50, 100, 100])
    assert _core.can_be_bottleneck(capacity, flows_on, [100.0] * 6) == [True, True, True]


def test_the_parking_lot():
    # A long flow across two links, one short flow on each: 5 each.
    rates = _core.fair_rates([10.0, 10.0], [[0, 1], [0, 2]], [100.0] * 3)
    assert np.allclose(rates, [5, 5, 5])
    # One link twice as wide: the long flow is held at the narrow one, and
    # the short flow on the wide one takes the rest.
    rates = _core.fair_rates([10.0, 20.0], [[0, 1], [0, 2]], [100.0] * 3)
    assert np.allclose(rates, [5, 5, 15])


def test_a_link_its_flows_cannot_fill_is_no_bottleneck():
    # Three 100G flows on a 400G spine port, each alone on its 100G host link.
    capacity = [400.0, 100.0, 100.0, 100.0]
    flows_on = [[0, 1, 2], [0], [1], [2]]
    assert _core.can_be_bottleneck(capacity, flows_on, [100.0] * 3) == [False, True, True, True]
    assert _core.can_be_bottleneck([400.0], [[]], []) == [False]


def test_bad_input_is_refused():
    import pytest

    with pytest.raises(ValueError, match="one entry per link"):
        _core.fair_rates([1.0], [[0], [0]], [1.0])
    with pytest.raises(ValueError, match="no line rate"):
        _core.fair_rates([1.0], [[3]], [1.0])


@st.composite
def instances(draw):
    n_links = draw(st.integers(1, 6))
    n_flows = draw(st.integers(1, 8))
    capacity = [float(draw(st.sampled_from([10, 25, 40, 100, 400]))) for _ in range(n_links)]
    line = [float(draw(st.sampled_from([10, 25, 100]))) for _ in range(n_flows)]
    paths = [draw(st.sets(st.integers(0, n_links - 1), min_size=1, max_size=n_links)) for _ in range(n_flows)]
    flows_on = [[f for f in range(n_flows) if l in paths[f]] for l in range(n_links)]
    return capacity, flows_on, line, paths


@settings(max_examples=300, deadline=None)
@given(instances())
def test_rates_are_max_min_fair(instance):
    capacity, flows_on, line, paths = instance
    rates = np.array(_core.fair_rates(capacity, flows_on, line))
    tol = 1e-6
    assert (rates >= -tol).all() and (rates <= np.array(line) + tol).all()
    load = [sum(rates[f] for f in on) for on in flows_on]
    assert all(load[l] <= capacity[l] + tol for l in range(len(capacity)))
    full = [load[l] >= capacity[l] - tol for l in range(len(capacity))]
    for f, path in enumerate(paths):
        at_line = rates[f] >= line[f] - tol
        held = any(full[l] and all(rates[f] >= rates[g] - tol for g in flows_on[l]) for l in path)
        assert at_line or held, (f, rates, load)
    can = _core.can_be_bottleneck(capacity, flows_on, line)
    assert can == [load[l] >= 0.99 * capacity[l] and capacity[l] > 0 for l in range(len(capacity))]
