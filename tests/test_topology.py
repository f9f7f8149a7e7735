"""Topology builders, reachability, validation and HPCC topology files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ns3wormhole.errors import InputError
from ns3wormhole.topology import (
    Topology,
    fat_tree,
    format_rate,
    format_time,
    leaf_spine,
    parse_rate,
    parse_size,
    parse_time,
    rail_optimized,
    read_hpcc,
    star,
)

# --------------------------------------------------------------------------- units


@pytest.mark.parametrize(
    "text, ns",
    [
        ("1us", 1000), ("0.001ms", 1000), ("1000ns", 1000), ("1s", 10**9), ("2.5us", 2500),
        (" 7 ns ", 7), ("1500ps", 2), ("2500ps", 2), (300, 300),
    ],
)
def test_parse_time(text, ns):
    assert parse_time(text) == ns


@pytest.mark.parametrize(
    "text, bps",
    [
        ("100Gbps", 100 * 10**9), ("400Gbps", 4 * 10**11), ("2880Gbps", 2880 * 10**9), ("20Mbps", 2 * 10**7),
        ("1Kbps", 1000), ("1GBps", 8 * 10**9), ("100Gb/s", 100 * 10**9), (10**9, 10**9),
    ],
)
def test_parse_rate(text, bps):
    assert parse_rate(text) == bps


def test_parse_size():
    assert parse_size("64MB") == 64_000_000
    assert parse_size("32MiB") == 32 * 2**20
    assert parse_size(4096) == 4096
    assert parse_size("4096") == 4096


@pytest.mark.parametrize("bad", ["100", "100Gbs", "fast", "-1Gbps", "", "1e3xbps"])
def test_parse_rate_rejects(bad):
    with pytest.raises(InputError):
        parse_rate(bad)


@pytest.mark.parametrize("bad", ["1000", "1 parsec", "-1us", "us", True])
def test_parse_time_rejects(bad):
    with pytest.raises(InputError):
        parse_time(bad)


def test_format_round_trips():
    for bps in (100 * 10**9, 25 * 10**9, 2880 * 10**9, 1_500_000, 7):
        assert parse_rate(format_rate(bps)) == bps
    assert format_rate(400 * 10**9) == "400Gbps"
    for ns in (0, 1, 1000, 1500, 300_000, 4_000_000, 10**9):
        assert parse_time(format_time(ns)) == ns
    assert format_time(300_000) == "300us"


# --------------------------------------------------------------------------- builders


def test_star():
    t = star(8, "100Gbps", "1us")
    assert (t.num_nodes, t.num_links) == (9, 8)
    assert t.hosts().tolist() == list(range(8))
    assert t.switches().tolist() == [8]
    assert np.all(t.link_b == 8) and t.link_a.tolist() == list(range(8))
    assert np.all(t.rate_bps == 100 * 10**9) and np.all(t.delay_ns == 1000)
    assert t.link_a.dtype == np.uint32 and t.rate_bps.dtype == np.uint64 and t.delay_ns.dtype == np.uint64


@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_fat_tree_counts(k):
    t = fat_tree(k)
    assert t.hosts().size == k**3 // 4
    assert t.switches().size == 5 * k * k // 4
    assert t.num_links == 3 * k**3 // 4
    deg = t.degree()
    assert np.all(deg[t.hosts()] == 1)
    assert np.all(deg[t.switches()] == k)  # every fat-tree switch has k ports used
    assert t.unreachable_pairs(np.stack([t.hosts(), np.roll(t.hosts(), 1)], axis=1)).size == 0


def test_fat_tree_4_exact():
    t = fat_tree(4, "100Gbps", "1us")
    assert (t.hosts().size, t.switches().size, t.num_links) == (16, 20, 48)
    # hosts 0,1 share edge switch 16; edge 16 links to aggregation 24 and 25 of pod 0
    assert sorted(t.neighbours(16).tolist()) == [0, 1, 24, 25]
    # aggregation (pod 0, a=1) = node 25 links to cores (1, 0..1) = nodes 34, 35
    assert sorted(n for n in t.neighbours(25).tolist() if n >= 32) == [34, 35]


def test_fat_tree_rejects_odd_k():
    with pytest.raises(InputError, match="topology.k"):
        fat_tree(3)


def test_leaf_spine_counts():
    t = leaf_spine(4, 2, 8, "100Gbps", "400Gbps", "1us")
    assert t.hosts().size == 32 and t.switches().size == 6
    assert t.num_links == 32 + 4 * 2
    assert np.all(t.rate_bps[:32] == 100 * 10**9) and np.all(t.rate_bps[32:] == 400 * 10**9)
    assert t.neighbours(0).tolist() == [32]
    assert sorted(t.neighbours(36).tolist()) == [32, 33, 34, 35]  # spine 0


def test_rail_optimized():
    t = rail_optimized(4, 8, "100Gbps", "400Gbps", "1us", n_spines=2)
    H = 32
    assert t.hosts().size == H and t.switches().size == 8 + 2
    assert t.num_links == H + 8 * 2
    assert t.gpus_per_server == 8
    for s in range(4):
        for g in range(8):
            h = s * 8 + g
            assert t.gpu_index[h] == g
            assert t.neighbours(h).tolist() == [H + g]  # rail switch g
    assert np.all(t.gpu_index[H:] == -1)
    # cross-rail traffic reachable only via spines
    assert t.path_exists(0, 1) and t.path_exists(0, 31)


def test_rail_optimized_default_spines_non_blocking():
    t = rail_optimized(16, 8, "100Gbps", "400Gbps")
    assert t.switches().size == 8 + 4  # 16 x 100G down per rail = 4 x 400G up


# --------------------------------------------------------------------------- reachability


def _topo(n, switches, links, **kw):
    is_sw = np.zeros(n, dtype=bool)
    is_sw[list(switches)] = True
    a, b = zip(*links)
    return Topology(n, is_sw, a, b, [10**9] * len(links), [1000] * len(links), **kw)


def test_hosts_do_not_forward():
    # 0 - S3 - 1 - S4 - 2 : host 1 is the only bridge, so 0 cannot reach 2
    t = _topo(5, [3, 4], [(0, 3), (1, 3), (1, 4), (2, 4)])
    assert t.path_exists(0, 1) and t.path_exists(1, 2)
    assert not t.path_exists(0, 2)
    assert t.unreachable_pairs([(0, 1), (0, 2), (2, 0), (1, 2)]).tolist() == [1, 2]


def test_switch_chain_and_direct_host_link():
    # 0 - S3 - S4 - S5 - 1 ; host 2 linked directly to host 1 only
    t = _topo(6, [3, 4, 5], [(0, 3), (3, 4), (4, 5), (5, 1), (1, 2)])
    assert t.path_exists(0, 1)
    assert t.path_exists(1, 2)  # direct link
    assert not t.path_exists(0, 2)  # would need host 1 to forward


def test_disconnected_switch_islands():
    t = _topo(6, [4, 5], [(0, 4), (1, 4), (2, 5), (3, 5)])
    assert t.unreachable_pairs([(0, 1), (0, 2), (3, 2), (1, 3)]).tolist() == [1, 3]


def test_multi_homed_host():
    # host 0 attached to two separate islands reaches both; hosts 1 and 2 still can't meet
    t = _topo(5, [3, 4], [(0, 3), (0, 4), (1, 3), (2, 4)])
    assert t.unreachable_pairs([(0, 1), (0, 2), (1, 2), (2, 0)]).tolist() == [2]


def test_path_exists_unknown_node():
    with pytest.raises(InputError, match="unknown node id 99"):
        star(2).path_exists(0, 99)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "links, rates, message",
    [
        ([(0, 2), (1, 1)], [1, 1], "self-loop on node 1"),
        ([(0, 2), (1, 7)], [1, 1], "unknown node id 7"),
        ([(0, 2), (1, 2)], [1, 0], "rate must be positive"),
        ([(0, 2)], [1], "host 1 has no link"),
    ],
)
def test_validate(links, rates, message):
    a, b = zip(*links)
    with pytest.raises(InputError, match=message):
        Topology(3, [False, False, True], a, b, rates, [0] * len(links))


def test_validate_rejects_negative_delay():
    with pytest.raises(InputError, match="negative"):
        Topology(2, [False, True], [0], [1], [1], [-5])


def test_parallel_links_allowed():
    t = Topology(2, [False, True], [0, 0], [1, 1], [1, 1], [0, 0])
    assert t.neighbours(0).tolist() == [1, 1]


# --------------------------------------------------------------------------- HPCC files


def test_round_trip(tmp_path: Path):
    t = leaf_spine(3, 2, 4, "100Gbps", "400Gbps", "0.001ms")
    t.error_rate[:] = 0.0
    t.error_rate[2] = 0.001
    p = tmp_path / "topo.txt"
    t.to_hpcc(p)
    r = read_hpcc(p)
    assert r.num_nodes == t.num_nodes
    assert np.array_equal(r.is_switch, t.is_switch)
    for col in ("link_a", "link_b", "rate_bps", "delay_ns", "error_rate"):
        assert np.array_equal(getattr(r, col), getattr(t, col)), col
    assert r.link_line.tolist() == list(range(3, 3 + t.num_links))


def test_read_hpcc_sample(tmp_path: Path):
    p = tmp_path / "topology.txt"
    p.write_text(
        "# one switch, three hosts\n"
        "4 1 3\n"
        "3\n"
        "\n"
        "0 3 100Gbps 0.001ms 0\n"
        "1 3 100Gbps 1000ns 0   # comment\n"
        "2 3 25Gbps 1us 0.0\n"
    )
    t = read_hpcc(p)
    assert t.switches().tolist() == [3]
    assert t.rate_bps.tolist() == [10**11, 10**11, 25 * 10**9]
    assert t.delay_ns.tolist() == [1000, 1000, 1000]
    assert t.link_line.tolist() == [5, 6, 7]
    assert t.gpus_per_server is None and np.all(t.gpu_index == -1)


def test_read_simai_header(tmp_path: Path):
    # 4 GPUs (2 per server), 2 NVSwitches (4, 5), 1 ToR (6); switch ids on two lines
    p = tmp_path / "simai.topo"
    p.write_text(
        "7 2 2 1 8 H100\n"
        "4 5\n"
        "6\n"
        "0 4 2880Gbps 0.000025ms 0\n"
        "1 4 2880Gbps 0.000025ms 0\n"
        "2 5 2880Gbps 0.000025ms 0\n"
        "3 5 2880Gbps 0.000025ms 0\n"
        "0 6 400Gbps 0.0005ms 0\n"
        "1 6 400Gbps 0.0005ms 0\n"
        "2 6 400Gbps 0.0005ms 0\n"
        "3 6 400Gbps 0.0005ms 0\n"
    )
    t = read_hpcc(p)
    assert t.switches().tolist() == [4, 5, 6]
    assert t.gpus_per_server == 2
    assert t.gpu_index.tolist() == [0, 1, 0, 1, -1, -1, -1]
    assert t.delay_ns[0] == 25 and t.rate_bps[0] == 2880 * 10**9
    assert t.path_exists(0, 3)


GOOD_HEADER = "3 1 2\n2\n"


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("", None, "empty topology file"),
        ("3 1\n2\n0 2 1Gbps 1us 0\n", 1, "header has 2 fields"),
        ("3 x 2\n2\n", 1, "bad switch count 'x'"),
        ("3 4 2\n0 1 2 3\n", 1, "4 switches declared but only 3 nodes"),
        ("3 1 2\n5\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n", 2, "switch id 5 out of range"),
        ("3 2 2\n2 2\n", 2, "switch id 2 listed twice"),
        ("3 2 2\n2 1 0\n", 2, "too many switch ids"),
        ("3 2 2\n2\n0 2 1Gbps 1us 0\n", 3, "expected 2 switch ids"),
        ("3 1 2\n", 1, "file ends after 0 of 1 switch ids"),
        (GOOD_HEADER + "0 2 1Gbps 1us\n1 2 1Gbps 1us 0\n", 3, "link line has 4 fields"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0 9\n", 4, "link line has 6 fields"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\nx 2 1Gbps 1us 0\n", 4, "bad node id 'x'"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n-1 2 1Gbps 1us 0\n", 4, "bad node id '-1'"),
        (GOOD_HEADER + "0 2 1Gbs 1us 0\n1 2 1Gbps 1us 0\n", 3, "unknown unit 'Gbs'"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n1 2 1Gbps 1 0\n", 4, "has no unit"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n1 2 1Gbps 1yr 0\n", 4, "unknown unit 'yr'"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n1 2 1Gbps 1us zero\n", 4, "bad error rate 'zero'"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n1 9 1Gbps 1us 0\n", 4, "unknown node id 9"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n", 1, "header declares 2 links but the file has 1"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n0 2 1Gbps 1us 0\n", 5, "more link lines than the 2"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n1 1 1Gbps 1us 0\n", 4, "self-loop on node 1"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n1 2 0Gbps 1us 0\n", 4, "rate must be positive"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n1 2 1Gbps 1us 2\n", 4, "outside \\[0, 1\\]"),
        (GOOD_HEADER + "0 2 1Gbps 1us 0\n0 2 1Gbps 1us 0\n", None, "host 1 has no link"),
        ("# header next\n\n3 1 2\n2\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0 0\n", 6, "link line has 6 fields"),
    ],
)
def test_read_hpcc_malformed(tmp_path: Path, text, line, message):
    p = tmp_path / "bad_topo.txt"
    p.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_hpcc(p)
    err = info.value
    assert err.source == str(p)
    assert err.line == line
    prefix = f"{p}:{line}: " if line is not None else f"{p}: "
    assert str(err).startswith(prefix), str(err)


def test_read_hpcc_missing_file(tmp_path: Path):
    with pytest.raises(InputError, match="cannot read file") as info:
        read_hpcc(tmp_path / "nope.txt")
    assert str(info.value).startswith(str(tmp_path / "nope.txt"))


def test_input_error_format():
    assert str(InputError("a.txt", 3, "boom")) == "a.txt:3: boom"
    assert str(InputError("fabric.mtu_bytes", None, "boom")) == "fabric.mtu_bytes: boom"
    assert isinstance(InputError("x", None, "y"), ValueError)
