"""examples/rdma-incast.cc: a plain ns-3 C++ program using the RoCEv2 model,
built against the installed package with `ns3-wormhole config` flags (ns-3
core + network only).  Under ns3::WormholeSimulatorImpl without fast-forward
it must print exactly what it prints under ns-3's default kernel, and its
flows must match what the Python path (run_flows) computes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from conftest import EXAMPLES, run
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import incast
from ns3wormhole.run import run_flows
from ns3wormhole.topology import star

WORMHOLE = [
    "--SimulatorImplementationType=ns3::WormholeSimulatorImpl",
    "--ns3::WormholeSimulatorImpl::FastForward=false",
]

# Lossy variant: PFC off, 200 kB buffer, ECN thresholds below it.
LOSSY = [
    "--ns3::RdmaSwitchMmu::PfcEnabled=false",
    "--ns3::RdmaSwitchMmu::BufferSize=200000",
    "--ns3::RdmaSwitch::KminPer100G=20000",
    "--ns3::RdmaSwitch::KmaxPer100G=80000",
]
LOSSY_FABRIC = dict(pfc_enabled=False, buffer_bytes=200_000, kmin_bytes_per_100g=20_000, kmax_bytes_per_100g=80_000)


@pytest.fixture(scope="module")
def rdma_incast(compile_program):
    return compile_program(EXAMPLES / "rdma-incast.cc", modules=["core", "network"])


def parse(out: str) -> tuple[list[str], dict[str, int], list[tuple[int, ...]]]:
    """Output lines with the wall time removed, the counters, and the flow rows
    (id src dst bytes start_ns fct_ns ideal_fct_ns retransmitted)."""
    lines = [re.sub(r"\s*wall_s \S+", "", line) for line in out.splitlines()]
    assert any(line.startswith("events ") for line in lines), out
    counters = {}
    for line in lines:
        if line.startswith(("completed", "events")):
            for key, value in re.findall(r"(\w+) (\d+)", line):
                counters[key] = int(value)
    header = lines.index("flow src dst bytes start_ns fct_ns ideal_fct_ns retransmitted")
    rows = []
    for line in lines[header + 1 :]:
        if line.startswith("completed"):
            break
        rows.append(tuple(int(x) for x in line.split()))
    return lines, counters, rows


def test_help_lists_the_options(rdma_incast):
    out = run([str(rdma_incast), "--help"])
    for option in ("--senders", "--bytes", "--rate", "--delay"):
        assert option in out


@pytest.mark.parametrize(
    "args, fabric",
    [
        pytest.param(["--senders=8", "--bytes=4000000"], {}, id="default-fabric"),
        pytest.param(["--senders=16", "--bytes=1000000", *LOSSY], LOSSY_FABRIC, id="lossy"),
    ],
)
def test_same_output_under_both_kernels_and_as_run_flows(rdma_incast, args, fabric):
    base_out = run([str(rdma_incast), *args])
    worm_out = run([str(rdma_incast), *args, *WORMHOLE])
    base, counters, rows = parse(base_out)
    worm, _, _ = parse(worm_out)
    assert worm == base  # every FCT, counter and the event count
    senders = int(args[0].split("=")[1])
    size = int(args[1].split("=")[1])
    assert f"completed {senders}/{senders}" in base_out
    assert counters["events"] > 0
    if fabric:
        assert counters["drops"] > 0 and sum(r[7] for r in rows) > 0  # go-back-N exercised
    else:
        assert counters["ecn_marks"] > 0 and counters["drops"] == 0
    # The same scenario through the Python layer: identical flows and counters
    # (the program sets no attribute, so the model's TypeId defaults must equal
    # FabricConfig's defaults).  Event counts differ: run_flows adds a watchdog.
    r = run_flows(star(senders + 1), incast(range(senders), senders, size), FabricConfig(**fabric))
    got = sorted(
        (int(f["id"]), int(f["src"]), int(f["dst"]), int(f["bytes"]), int(f["start_ns"]), int(f["fct_ns"]),
         int(np.round(f["ideal_fct_ns"])), int(f["retransmitted_packets"]))
        for f in r.flows
    )
    assert got == sorted(rows)
    for key in ("pauses", "resumes", "drops", "ecn_marks", "cnps"):
        assert r.counters[key] == counters[key], key
