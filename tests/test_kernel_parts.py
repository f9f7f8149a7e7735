"""The kernel's building blocks against brute-force references: incremental
partitions (Alg. 2) against connected components recomputed from scratch,
and the sliding rate window against numpy over the last samples."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole import _core


def components(flows: dict[int, list[int]]) -> set[frozenset[int]]:
    """Connected components of flows sharing links, from scratch (Alg. 1)."""
    parent = {f: f for f in flows}

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    owner: dict[int, int] = {}
    for f, links in flows.items():
        for link in links:
            if link in owner:
                parent[find(f)] = find(owner[link])
            else:
                owner[link] = f
    groups: dict[int, set[int]] = {}
    for f in flows:
        groups.setdefault(find(f), set()).add(f)
    return {frozenset(g) for g in groups.values()}


def tracker_components(t, flows) -> set[frozenset[int]]:
    return {frozenset(t.flows(t.partition_of_flow(f))) for f in flows}


def test_merge_and_split_by_hand():
    t = _core.PartitionTracker()
    a = t.add_flow(0, [1, 2])
    b = t.add_flow(1, [3, 4])
    assert a != b and t.alive_count == 2
    merged = t.add_flow(2, [2, 3])  # bridges both
    assert t.alive_count == 1 and not t.alive(a) and not t.alive(b)
    assert sorted(t.flows(merged)) == [0, 1, 2]
    assert sorted(t.links(merged)) == [1, 2, 3, 4]
    parts = t.remove_flow(2)  # the bridge leaves: split again
    assert len(parts) == 2 and t.alive_count == 2
    assert {frozenset(t.flows(p)) for p in parts} == {frozenset([0]), frozenset([1])}
    assert t.partition_of_link(2) == parts[0] and t.partition_of_link(3) == parts[1]
    assert t.counters == {"formed": 2, "merged": 1, "split": 1}
    assert t.remove_flow(0) == []  # last flow of its partition
    assert t.partition_of_link(1) == 0xFFFFFFFF


@pytest.mark.parametrize("seed", range(5))
def test_random_arrivals_and_departures_match_from_scratch(seed):
    rng = np.random.default_rng(seed)
    t = _core.PartitionTracker()
    active: dict[int, list[int]] = {}
    next_id = 0
    for _ in range(400):
        if active and rng.random() < 0.45:
            f = int(rng.choice(list(active)))
            t.remove_flow(f)
            del active[f]
        else:
            links = sorted(set(int(x) for x in rng.integers(0, 60, size=rng.integers(1, 5))))
            t.add_flow(next_id, links)
            active[next_id] = links
            next_id += 1
        assert tracker_components(t, active) == components(active)
        assert t.alive_count == len(components(active))
        for f, links in active.items():
            for link in links:
                assert t.partition_of_link(link) == t.partition_of_flow(f)


def test_rate_window_matches_numpy():
    rng = np.random.default_rng(1)
    w = _core.RateWindow(50)
    samples = rng.uniform(90, 110, size=500)
    for i, r in enumerate(samples):
        w.push(i, float(r))
        last = samples[max(0, i - 49) : i + 1]
        assert w.size == len(last)
        assert w.mean == pytest.approx(last.mean())
        assert w.spread == pytest.approx((last.max() - last.min()) / last.mean())
    assert w.full
    w.clear()
    assert w.size == 0 and not w.full


def test_rate_window_extremes_over_long_monotone_runs():
    # Falling and rising runs longer than the window keep one of its
    # monotonic queues as long as the window, expiring from the front:
    # the path where the queue drops its consumed prefix.
    w = _core.RateWindow(50)
    t = np.arange(3000)
    samples = 100 + 10 * np.abs(((t % 240) - 120) / 120) + np.sin(t) * 0.01
    for i, r in enumerate(samples):
        w.push(int(i), float(r))
        last = samples[max(0, i - 49) : i + 1]
        assert w.spread == pytest.approx((last.max() - last.min()) / last.mean()), i
