"""Flow sets, HPCC flow files, validation against a topology, generators."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ns3wormhole.errors import InputError
from ns3wormhole.flows import FlowSet, incast, permutation, read_hpcc, staggered
from ns3wormhole.topology import Topology, leaf_spine, star


def write(tmp_path: Path, text: str, name: str = "flow.txt") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# --------------------------------------------------------------------------- reading


def test_read_hpcc_sample(tmp_path: Path):
    p = write(tmp_path, "2\n0 2 3 100 200000000 2\n1 2 3 100 200000000 2.000000001\n")
    f = read_hpcc(p)
    assert len(f) == 2
    assert f.id.tolist() == [0, 1]
    assert f.src.tolist() == [0, 1] and f.dst.tolist() == [2, 2]
    assert f.pg.tolist() == [3, 3] and f.dport.tolist() == [100, 100]
    assert f.bytes.tolist() == [200_000_000] * 2
    assert f.start_ns.tolist() == [2_000_000_000, 2_000_000_001]  # exact, no float truncation
    assert f.line.tolist() == [2, 3]
    assert f.bytes.dtype == np.uint64 and f.start_ns.dtype == np.uint64


@pytest.mark.parametrize(
    "start, ns",
    [("0", 0), ("1e-6", 1000), ("0.0000000014", 1), ("0.0000000016", 2), ("0.1", 100_000_000), ("3.0000000049", 3_000_000_005)],
)
def test_start_rounding(tmp_path: Path, start, ns):
    f = read_hpcc(write(tmp_path, f"1\n0 1 3 100 10 {start}\n"))
    assert int(f.start_ns[0]) == ns


def test_round_trip(tmp_path: Path):
    f = FlowSet.from_lists([0, 1, 2, 3], [4, 4, 5, 0], [10, "1MB", 12345, 7], [0, 1_500, 2_000_000_001, 10**10], pg=[3, 3, 1, 7])
    p = tmp_path / "out.txt"
    f.to_hpcc(p)
    r = read_hpcc(p)
    for col in ("id", "src", "dst", "pg", "bytes", "start_ns", "dport"):
        assert np.array_equal(getattr(r, col), getattr(f, col)), col


def test_to_hpcc_sorts_by_start(tmp_path: Path):
    f = FlowSet.from_lists([0, 1], [2, 2], 10, [500, 100])
    p = tmp_path / "out.txt"
    f.to_hpcc(p)
    assert p.read_text().splitlines() == ["2", "1 2 3 100 10 0.000000100", "0 2 3 100 10 0.000000500"]


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("", None, "empty flow file"),
        ("2 3\n", 1, "first line has 2 fields"),
        ("two\n", 1, "bad flow count 'two'"),
        ("2\n0 1 3 100 10 0\n1 0 3 100 10\n", 3, "flow line has 5 fields"),
        ("1\n0 1 3 100 10 0 7\n", 2, "flow line has 7 fields"),
        ("1\nx 1 3 100 10 0\n", 2, "bad source node id 'x'"),
        ("1\n0 -1 3 100 10 0\n", 2, "bad destination node id '-1'"),
        ("1\n0 1 3 100 1.5 0\n", 2, "bad flow size '1.5'"),
        ("1\n0 1 3 100 10 soon\n", 2, "bad start time 'soon'"),
        ("1\n0 1 3 100 10 nan\n", 2, "bad start time 'nan'"),
        ("1\n0 1 3 100 10 -0.5\n", 2, "negative start time"),
        ("1\n0 1 3 100 99999999999999999999999 0\n", 2, "flow size .* is too large"),
        ("3\n0 1 3 100 10 0\n1 0 3 100 10 0\n", 1, "declares 3 flows but the file has 2"),
        ("1\n0 1 3 100 10 0\n1 0 3 100 10 0\n", 3, "more flow lines than the 1"),
        ("2\n0 1 3 100 10 0\n\n# c\n1 0 3 100 0 0\n", 5, "flow size must be positive"),
        ("2\n0 1 3 100 10 0\n1 1 3 100 10 0\n", 3, "source and destination are the same node"),
        ("1\n0 1 8 100 10 0\n", 2, "priority group 8 outside 1..7"),
        ("1\n0 1 0 100 10 0\n", 2, "priority group 0 outside 1..7"),
    ],
)
def test_read_hpcc_malformed(tmp_path: Path, text, line, message):
    p = write(tmp_path, text, "bad_flows.txt")
    with pytest.raises(InputError, match=message) as info:
        read_hpcc(p)
    err = info.value
    assert err.source == str(p) and err.line == line
    assert str(err).startswith(f"{p}:{line}: " if line is not None else f"{p}: "), str(err)


@pytest.fixture
def islands() -> Topology:
    # hosts 0,1 on switch 4; hosts 2,3 on switch 5; the switches are not linked
    is_sw = np.array([False] * 4 + [True, True])
    return Topology(6, is_sw, [0, 1, 2, 3], [4, 4, 5, 5], [10**11] * 4, [1000] * 4)


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("0 9 3 100 10 0", "unknown node id 9"),
        ("4 1 3 100 10 0", "source 4 is a switch"),
        ("0 5 3 100 10 0", "destination 5 is a switch"),
        ("0 2 3 100 10 0", "no path from 0 to 2"),
    ],
)
def test_read_hpcc_against_topology(tmp_path: Path, islands: Topology, bad_line, message):
    p = write(tmp_path, f"3\n0 1 3 100 10 0\n\n{bad_line}\n1 0 3 100 10 0\n")
    with pytest.raises(InputError, match=message) as info:
        read_hpcc(p, islands)
    assert str(info.value).startswith(f"{p}:4: "), str(info.value)


def test_validate_reports_first_bad_flow_and_count(islands: Topology):
    f = FlowSet.from_lists([0, 0, 2, 1], [1, 3, 0, 0], 10)
    with pytest.raises(InputError) as info:
        f.validate(islands)
    assert str(info.value) == "flows[1]: no path from 0 to 3 through switches (and 1 more flow with problems)"


def test_validate_inline_names_index(islands: Topology):
    f = FlowSet.from_lists([0, 1, 5], [1, 0, 0], 10)
    with pytest.raises(InputError) as info:
        f.validate(islands, source="workload.flows")
    assert str(info.value) == "workload.flows[2]: source 5 is a switch, not a host"


def test_valid_flows_pass(islands: Topology):
    FlowSet.from_lists([0, 1, 2, 3], [1, 0, 3, 2], "1MB").validate(islands)


# --------------------------------------------------------------------------- inline construction


def test_from_lists_checks():
    with pytest.raises(InputError, match=r"^flows\[1\]: start_ns is negative \(-5\)$"):
        FlowSet.from_lists([0, 1], [1, 0], 10, [0, -5])
    with pytest.raises(InputError, match=r"^flows\[0\]: flow size must be positive$"):
        FlowSet.from_lists([0], [1], 0)
    with pytest.raises(InputError, match=r"flows\[1\]: duplicate flow id 7"):
        FlowSet.from_lists([0, 1], [1, 0], 10, ids=[7, 7])
    with pytest.raises(InputError, match="dst has 1 entries for 2 flows"):
        FlowSet.from_lists([0, 1], [1], 10)


def test_concat_renumbers():
    f = FlowSet.concat([incast([0, 1], 2, 10), incast([3], 2, 20, start_ns="1us")])
    assert f.id.tolist() == [0, 1, 2] and f.start_ns.tolist() == [0, 0, 1000]


# --------------------------------------------------------------------------- generators


def test_incast():
    f = incast(range(8), 8, "64MB")
    assert len(f) == 8
    assert f.src.tolist() == list(range(8)) and np.all(f.dst == 8)
    assert np.all(f.bytes == 64_000_000) and np.all(f.start_ns == 0) and np.all(f.pg == 3)
    f.validate(star(9))


def test_staggered():
    f = staggered([3, 1, 2], 0, 1000, gap_ns="10us", start_ns=5)
    assert f.start_ns.tolist() == [5, 10_005, 20_005]
    assert f.src.tolist() == [3, 1, 2]


@pytest.mark.parametrize("seed", [0, 1, 7, 123])
def test_permutation_is_deterministic_derangement(seed):
    hosts = np.arange(10, 42)
    f = permutation(hosts, 1000, seed)
    assert sorted(f.src.tolist()) == hosts.tolist()
    assert sorted(f.dst.tolist()) == hosts.tolist()  # each host receives exactly once
    assert np.all(f.src != f.dst)
    g = permutation(hosts, 1000, seed)
    assert np.array_equal(f.dst, g.dst)


def test_permutation_depends_on_seed():
    hosts = np.arange(64)
    assert not np.array_equal(permutation(hosts, 1, 1).dst, permutation(hosts, 1, 2).dst)


def test_permutation_validates_on_fabric():
    t = leaf_spine(4, 2, 8)
    permutation(t.hosts(), "1MB", seed=5).validate(t)


def test_permutation_rejects_bad_hosts():
    with pytest.raises(InputError, match="at least 2 hosts"):
        permutation([3], 10)
    with pytest.raises(InputError, match="distinct"):
        permutation([3, 3], 10)
