"""The accuracy matrix (issue 11): every cell against the default kernel on
the same scenario and seed, link delays x patterns x marking x memo state.
Bounds: mean <= 1%, max <= 3%, makespan <= 1% where the reference is
deterministic. Where it is not, its perturbed reruns (other seeds, flows
1 ns late) are a sample of the pattern's outcomes: Wormhole's run must fall
within their 99% prediction bound, and its makespan and mean FCT over the
same perturbations must show no bias beyond 1% (docs/fast-forward.md,
"Judging a run against a chaotic reference").

The CI subset runs every pattern and memo state at 1 us and 20 us; the
other delays are marked ``slow`` (``pytest -m slow tests/test_accuracy_matrix.py``).
The full matrix at larger sizes: ``benchmarks/bench_matrix.py``."""

from __future__ import annotations

import functools

import pytest

from ns3wormhole import accuracy_matrix as am

MB = 1_000_000
# Large enough that a flow alone reaches its steady window and is skipped
# at every delay (a 50 us star has a 2.5 MB bandwidth-delay product), small
# enough that a cell's runs take well under a second.
SIZE = 12 * MB
CI_DELAYS = (1, 20)

# Patterns with a stretch where a flow runs alone at line rate long enough
# to be skipped, whatever the marking: Wormhole must really skip there.
MUST_SKIP = {"lone", "join-known", "join-unforeseen", "staggered", "permutation"}


@functools.lru_cache(maxsize=None)
def _reference(pattern: str, delay_us: int, marking: str) -> am.Reference:
    case = am.PATTERNS[pattern](delay_us, SIZE)
    return am.reference(case, am.fabric_of(marking))


def _cells():
    for delay in am.DELAYS_US:
        for pattern in am.PATTERNS:
            for marking in am.MARKINGS:
                for memo in am.MEMOS:
                    marks = [] if delay in CI_DELAYS else [pytest.mark.slow]
                    yield pytest.param(pattern, delay, marking, memo, marks=marks,
                                       id=f"{pattern}-{delay}us-{marking}-memo-{memo}")


@functools.lru_cache(maxsize=None)
def _cell(pattern: str, delay_us: int, marking: str, memo: str) -> am.CellResult:
    return am.run_cell(pattern, delay_us, marking, memo, SIZE, ref=_reference(pattern, delay_us, marking))


@pytest.mark.parametrize(("pattern", "delay_us", "marking", "memo"), list(_cells()))
def test_cell_within_bounds(pattern, delay_us, marking, memo):
    cell = _cell(pattern, delay_us, marking, memo)
    if pattern == "waves" and marking == "step" and memo != "off":
        # Issue 11: repeated step-marked incasts are replayed from the memo,
        # with a real gain over memo off (each wave drains before the next,
        # so a later wave forms the first one's pattern).
        assert cell.memo_hits >= 1, cell
        assert cell.event_ratio > _cell(pattern, delay_us, marking, "off").event_ratio, cell
    if memo == "other-delay":
        # A record is never used across link delays (docs/memo.md: the delays
        # are in its key): the store filled on another delay gives no hit a
        # cold store would not.
        assert cell.memo_hits == _cell(pattern, delay_us, marking, "cold").memo_hits, cell
    if pattern in MUST_SKIP:
        assert cell.time_skipped_ns > 0, "nothing was fast-forwarded"
    mean, mx, span = cell.bounds
    assert cell.fct.mean <= mean, cell
    assert cell.fct.max <= mx, cell
    assert cell.makespan <= am.BOUND_MAKESPAN or cell.makespan_off <= span, cell
    if not cell.deterministic:
        assert cell.bias_makespan.ok and cell.bias_fct.ok, cell
