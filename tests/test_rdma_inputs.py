"""HPCC topology and flow files driven end to end through run_flows: good
files give the physically expected result, bad ones an InputError naming the
file and line before anything runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ns3wormhole import flows as flowsmod
from ns3wormhole import topology as topomod
from ns3wormhole.errors import InputError
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.run import run_flows

from test_rdma_physics import check_complete, path_hops, tandem_fct_ns

# A chain with a slow middle link and unequal delays, in HPCC's own units:
#   host 0 --100G/1us-- switch 2 --25G/0.5us-- switch 3 --100G/2000ns-- host 1
# plus host 4 on switch 3, and an island (host 5 -- switch 6) reachable from no one.
TOPOLOGY = """\
7 3 5
2 3 6
0 2 100Gbps 1us 0
2 3 25Gbps 0.0005ms 0
3 1 100Gbps 2000ns 0
4 3 100Gbps 1us 0
5 6 100Gbps 1us 0
"""

# Two flows that never overlap: 0 -> 1 at 1 us, and 1 -> 0 at 1 ms (the first
# ends after ~70 us).
FLOWS = """\
2
0 1 3 100 200000 0.000001
1 0 3 100 1500 0.001
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def run_files(topo_path: Path, flow_path: Path, fabric: FabricConfig | None = None):
    topo = topomod.read_hpcc(topo_path)
    flows = flowsmod.read_hpcc(flow_path)
    return topo, flows, run_flows(topo, flows, fabric)


def test_hpcc_files_run_and_match_the_analytic_fct(tmp_path):
    topo, flows, r = run_files(write(tmp_path, "topo.txt", TOPOLOGY), write(tmp_path, "flow.txt", FLOWS))
    check_complete(r, flows)
    assert r.flows["start_ns"].tolist() == [1000, 1_000_000]
    # Paths are the chain, in order, whatever the link numbering.
    assert r.paths == [[0, 1, 2], [2, 1, 0]]
    for k in range(2):
        hops = path_hops(topo, r.paths[k])
        assert [h[0] for h in hops] == ([100e9, 25e9, 100e9])
        assert sorted(h[1] for h in hops) == [500.0, 1000.0, 2000.0]
        expected = tandem_fct_ns(int(r.flows["bytes"][k]), 1000, hops)
        fct = int(r.flows["fct_ns"][k])
        # 1 ns time steps: < 1 ns off per transmission on the critical path
        assert abs(fct - expected) < 2 * len(hops), (k, fct, expected)
        assert r.flows["ideal_fct_ns"][k] == pytest.approx(expected, rel=1e-9)
    # The 25G link is the bottleneck: the 200 kB flow takes > 4x its 100G time.
    assert r.flows["fct_ns"][0] > 4 * 200_000 * 8 / 100e9 * 1e9


def test_round_trip_through_files_gives_identical_results(tmp_path):
    topo = topomod.leaf_spine(2, 2, 2, "100Gbps", "400Gbps", "1us")
    flows = flowsmod.permutation(topo.hosts(), "1MB", seed=3, start_ns="5us")
    direct = run_flows(topo, flows)
    topo.to_hpcc(tmp_path / "t.txt")
    flows.to_hpcc(tmp_path / "f.txt")
    _, flows2, via_files = run_files(tmp_path / "t.txt", tmp_path / "f.txt")
    # HPCC flow files carry no ids: ids are positions in start-time order,
    # which here is the original order (all start at 5 us, stable sort).
    for name in direct.flows.dtype.names:
        assert np.array_equal(direct.flows[name], via_files.flows[name]), name
    assert direct.counters == via_files.counters


BAD_FLOWS = [
    # (file text, line, message fragment)
    pytest.param("2\n0 1 3 100 1000 0\n0 1 3 100 1000\n", 3, "flow line has 5 fields", id="malformed-line"),
    pytest.param("2\n0 1 3 100 1000 0\n0 1 3 100 1000 soon\n", 3, "start time", id="malformed-start"),
    pytest.param("1\n0 1 3 100 -5 0\n", 2, "flow size", id="negative-size"),
    pytest.param("3\n0 1 3 100 1000 0\n", 1, "declares 3 flows", id="short-file"),
    pytest.param("2\n0 1 3 100 1000 0\n1 1 3 100 1000 0\n", 3, "same node", id="src-equals-dst"),
    pytest.param("2\n0 1 3 100 1000 0\n0 1 3 100 0 0\n", 3, "size must be positive", id="zero-size"),
    pytest.param("2\n0 1 3 100 1000 0\n0 1 9 100 1000 0\n", 3, "priority group", id="bad-pg"),
    pytest.param("2\n0 1 3 100 1000 0\n0 9 3 100 1000 0\n", 3, "unknown node id 9", id="unknown-node"),
    pytest.param("2\n0 1 3 100 1000 0\n0 2 3 100 1000 0\n", 3, "is a switch", id="switch-endpoint"),
    pytest.param("2\n0 1 3 100 1000 0\n\n# comment\n4 5 3 100 1000 0\n", 5, "no path from 4 to 5", id="unreachable"),
    # Priority group 0 is accepted by FlowSet (0..7) but the C++ model reserves
    # it for control frames; the user must still get a located InputError.
    pytest.param("2\n0 1 3 100 1000 0\n0 1 0 100 1000 0\n", 3, "priority group", id="pg0-control-queue"),
]


@pytest.mark.parametrize("text, line, fragment", BAD_FLOWS)
def test_bad_flow_file_is_named_by_file_and_line(tmp_path, text, line, fragment):
    topo_path = write(tmp_path, "topo.txt", TOPOLOGY)
    flow_path = write(tmp_path, "flow.txt", text)
    with pytest.raises(InputError) as err:
        run_files(topo_path, flow_path)
    e = err.value
    assert e.source == str(flow_path)
    assert e.line == line
    assert str(e).startswith(f"{flow_path}:{line}: ")
    assert fragment in e.message


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        pytest.param(TOPOLOGY.replace("4 3 100Gbps 1us 0", "4 8 100Gbps 1us 0"), 6, "unknown node id 8", id="unknown-node"),
        pytest.param(TOPOLOGY.replace("25Gbps", "25Gbit"), 4, "unit", id="bad-rate-unit"),
        pytest.param(TOPOLOGY.replace("2000ns 0", "2000ns"), 5, "link line has 4 fields", id="missing-field"),
    ],
)
def test_bad_topology_file_is_named_by_file_and_line(tmp_path, text, line, fragment):
    topo_path = write(tmp_path, "topo.txt", text)
    flow_path = write(tmp_path, "flow.txt", FLOWS)
    with pytest.raises(InputError) as err:
        run_files(topo_path, flow_path)
    assert err.value.source == str(topo_path)
    assert err.value.line == line
    assert fragment in err.value.message


def test_inline_flows_are_named_by_index():
    topo = topomod.star(3)
    flows = flowsmod.FlowSet.from_lists([0, 1, 0], [1, 2, 7], 1000)
    with pytest.raises(InputError) as err:
        run_flows(topo, flows)
    assert err.value.source == "flows[2]"
    assert "unknown node id 7" in err.value.message
