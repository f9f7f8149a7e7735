"""FabricConfig: HPCC run.py dcqcn defaults, ns-3 attribute strings, key validation."""

from __future__ import annotations

import dataclasses
import re

import pytest

from ns3wormhole.errors import InputError
from ns3wormhole.fabric import FabricConfig, attribute_name
from ns3wormhole.topology import star

# HPCC `run.py dcqcn` at bw=100 (docs/anchors.md 1.3, 1.4; docs/rdma-model-contract.md)
RUN_PY_DCQCN_100G = {
    "alpha_resume_interval_us": 1.0,
    "rate_decrease_interval_us": 4.0,
    "rp_timer_us": 300.0,
    "ewma_gain": 1 / 256,
    "fast_recovery_times": 1,
    "rate_ai_mbps": 20.0,  # 5 * 100 / 25
    "rate_hai_mbps": 200.0,  # 50 * 100 / 25
    "min_rate_mbps": 1000.0,
    "clamp_target_rate": False,
    "rate_on_first_cnp": 1.0,
    "mtu_bytes": 1000,
    "header_bytes": 48,
    "ack_interval": 1,
    "nack_interval_us": 500.0,
    "retransmit_timeout_us": 4000.0,
    "buffer_bytes": 32 * 1024 * 1024,  # BUFFER_SIZE 32 (MB, x 1024 x 1024 in third.cc)
    "reserve_per_queue_bytes": 4 * 1024,
    "resume_offset_bytes": 3 * 1024,
    "headroom_rtt_factor": 3.0,
    "pfc_alpha_shift": 3,
    "pfc_enabled": True,
    "ecn_enabled": True,
    "kmin_bytes_per_100g": 400 * 1000,  # KMIN 400 KB, x 1000 in ConfigEcn
    "kmax_bytes_per_100g": 1600 * 1000,
    "pmax": 0.2,
}

CONTRACT_ATTRIBUTES = {
    "ns3::RdmaNetwork::CongestionControl": "dcqcn",
    "ns3::RdmaCongestionControl::MinRate": "1Gbps",
    "ns3::RdmaCongestionControl::Window": "false",  # run.py dcqcn: HAS_WIN 0
    "ns3::RdmaCongestionControl::VariableWindow": "false",
    "ns3::RdmaNic::AckHighPriority": "true",  # ACK_HIGH_PRIO 1
    # run.py hp at bw=100: RATE_AI 10*bw/25, U_TARGET 0.95, MI_THRESH 0, FAST_REACT 1, INT_MULTI bw/25
    "ns3::HpccRateControl::RateAi": "40Mbps",
    "ns3::HpccRateControl::UTarget": "0.95",
    "ns3::HpccRateControl::MiThresh": "0",
    "ns3::HpccRateControl::FastReact": "true",
    "ns3::HpccRateControl::IntMulti": "4",
    # run.py timely at bw=100: RATE_AI 10*bw/10, RATE_HAI 50*bw/10; the TIMELY paper's constants
    "ns3::TimelyRateControl::RateAi": "100Mbps",
    "ns3::TimelyRateControl::RateHai": "500Mbps",
    "ns3::TimelyRateControl::Alpha": "0.875",
    "ns3::TimelyRateControl::Beta": "0.8",
    "ns3::TimelyRateControl::TLow": "50us",
    "ns3::TimelyRateControl::THigh": "500us",
    "ns3::TimelyRateControl::MinRtt": "20us",
    "ns3::TimelyRateControl::HaiThresh": "5",
    # run.py dctcp: DCTCP_RATE_AI 615 Mb/s, EWMA_GAIN 0.0625
    "ns3::DctcpRateControl::RateAi": "615Mbps",
    "ns3::DctcpRateControl::EwmaGain": "0.0625",
    "ns3::DcqcnRateControl::AlphaResumeInterval": "1us",
    "ns3::DcqcnRateControl::RateDecreaseInterval": "4us",
    "ns3::DcqcnRateControl::RpTimer": "300us",
    "ns3::DcqcnRateControl::EwmaGain": "0.00390625",
    "ns3::DcqcnRateControl::FastRecoveryTimes": "1",
    "ns3::DcqcnRateControl::RateAi": "20Mbps",
    "ns3::DcqcnRateControl::RateHai": "200Mbps",
    "ns3::DcqcnRateControl::ClampTargetRate": "false",
    "ns3::DcqcnRateControl::RateOnFirstCnp": "1",
    "ns3::RdmaNic::Mtu": "1000",
    "ns3::RdmaNic::HeaderBytes": "48",
    "ns3::RdmaNic::AckInterval": "1",
    "ns3::RdmaNic::NackInterval": "500us",
    "ns3::RdmaNic::RetransmitTimeout": "4ms",
    "ns3::RdmaNic::Ifg": "0ns",
    "ns3::RdmaSwitchMmu::BufferSize": "33554432",
    "ns3::RdmaSwitchMmu::ReservePerQueue": "4096",
    "ns3::RdmaSwitchMmu::ResumeOffset": "3072",
    "ns3::RdmaSwitchMmu::HeadroomRttFactor": "3",
    "ns3::RdmaSwitchMmu::PfcAlphaShift": "3",
    "ns3::RdmaSwitchMmu::PfcEnabled": "true",
    "ns3::RdmaSwitch::EcnEnabled": "true",
    "ns3::RdmaSwitch::KminPer100G": "400000",
    "ns3::RdmaSwitch::KmaxPer100G": "1600000",
    "ns3::RdmaSwitch::Pmax": "0.2",
    "ns3::RdmaSwitch::EcnMap": "",
    "ns3::RdmaNetwork::Seed": "1",
    "ns3::RdmaNetwork::IntCounterSeed": "0",
    "ns3::RdmaNetwork::QueueSampleInterval": "0ns",
    "ns3::RdmaNetwork::RateSampleInterval": "0ns",
    "ns3::RdmaNetwork::QlenMonitorStart": "0ns",
    "ns3::RdmaNetwork::QlenMonitorEnd": "0ns",
    "ns3::RdmaSwitch::EcmpSeed": "0",
}


def test_defaults_match_run_py_dcqcn():
    cfg = FabricConfig()
    for key, value in RUN_PY_DCQCN_100G.items():
        assert getattr(cfg, key) == value, key
        assert type(getattr(cfg, key)) is type(value), key


def test_default_attributes_exact():
    assert FabricConfig().to_ns3_attributes() == CONTRACT_ATTRIBUTES


def test_ecmp_seed_sent_set_or_not():
    attrs = FabricConfig(ecmp_seed=42).to_ns3_attributes()
    assert attrs["ns3::RdmaSwitch::EcmpSeed"] == "42"
    assert FabricConfig().to_ns3_attributes()["ns3::RdmaSwitch::EcmpSeed"] == "0"
    assert attribute_name("rp_timer_us") == "ns3::DcqcnRateControl::RpTimer"


def test_ecn_map_from_a_fabric_table():
    cfg = FabricConfig.from_mapping({"ecn_map": {
        "200Gbps": {"kmin_kb": 300, "kmax_kb": 1200, "pmax": 0.8},
        "100Gbps": {"kmin_kb": 100, "kmax_kb": 400, "pmax": 0.2},
    }})
    # KB = 1000 B (HPCC's KMIN_MAP units), sorted by rate.
    assert cfg.ecn_map == ((100_000_000_000, 100_000, 400_000, 0.2), (200_000_000_000, 300_000, 1_200_000, 0.8))
    assert cfg.to_ns3_attributes()["ns3::RdmaSwitch::EcnMap"] == \
        "100000000000:100000:400000:0.2,200000000000:300000:1200000:0.8"
    assert FabricConfig.from_mapping(cfg.as_dict()) == cfg


@pytest.mark.parametrize(
    "table, where, message",
    [
        ({"200Gbps": {"kmin_kb": 300, "kmax_kb": 100, "pmax": 0.8}}, "ecn_map.200Gbps", "kmin <= kmax"),
        ({"200Gbps": {"kmin_kb": 1, "kmax_kb": 2, "pmax": 1.5}}, "ecn_map.200Gbps", "pmax 1.5 is out of range"),
        ({"200Gbps": {"kmin_kb": 1, "kmax_kb": 2}}, "ecn_map.200Gbps", "missing key 'pmax'"),
        ({"200Gbps": {"kmin_kb": 1, "kmax_kb": 2, "pmax": 0.1, "k": 1}}, "ecn_map.200Gbps", "unknown key 'k'"),
        ({"fast": {"kmin_kb": 1, "kmax_kb": 2, "pmax": 0.1}}, "ecn_map.fast", ""),
        ({"200Gbps": {"kmin_kb": "x", "kmax_kb": 2, "pmax": 0.1}}, "ecn_map.200Gbps.kmin_kb", "expected a number"),
        ({"200Gbps": {"kmin_kb": 1, "kmax_kb": 2, "pmax": 0.1}, "200000Mbps": {"kmin_kb": 1, "kmax_kb": 2, "pmax": 0.1}},
         "ecn_map.200000Mbps", "200Gbps appears twice"),
        ([1, 2], "ecn_map[0]", "expected (rate_bps"),
        ("200G", "ecn_map", "expected a table"),
    ],
)
def test_bad_ecn_map_names_the_entry(table, where, message):
    with pytest.raises(InputError, match="^" + re.escape(f"fabric.{where}") + r"[: ].*" + re.escape(message)):
        FabricConfig.from_mapping({"ecn_map": table})


def test_from_mapping_units_and_values():
    cfg = FabricConfig.from_mapping(
        {
            "rp_timer_us": "0.9ms",
            "rate_ai_mbps": 50,
            "min_rate_mbps": "100Mbps",
            "mtu_bytes": 9000,
            "buffer_bytes": "32MB",
            "pfc_enabled": False,
            "pmax": 0.8,
            "queue_sample_interval_ns": "100ns",
            "ewma_gain": 0.0625,
        }
    )
    attrs = cfg.to_ns3_attributes()
    assert attrs["ns3::DcqcnRateControl::RpTimer"] == "900us"
    assert attrs["ns3::DcqcnRateControl::RateAi"] == "50Mbps"
    assert attrs["ns3::RdmaCongestionControl::MinRate"] == "100Mbps"
    assert attrs["ns3::RdmaNic::Mtu"] == "9000"
    assert attrs["ns3::RdmaSwitchMmu::BufferSize"] == "32000000"
    assert attrs["ns3::RdmaSwitchMmu::PfcEnabled"] == "false"
    assert attrs["ns3::RdmaSwitch::Pmax"] == "0.8"
    assert attrs["ns3::RdmaNetwork::QueueSampleInterval"] == "100ns"
    assert attrs["ns3::DcqcnRateControl::EwmaGain"] == "0.0625"
    assert cfg.rate_ai_mbps == 50.0 and isinstance(cfg.rate_ai_mbps, float)
    # untouched keys keep their defaults
    assert cfg.rate_decrease_interval_us == 4.0


def test_round_trip_as_dict():
    cfg = FabricConfig(mtu_bytes=4000, seed=9, ecmp_seed=3)
    assert FabricConfig.from_mapping(cfg.as_dict()) == cfg


def test_unknown_key_named():
    with pytest.raises(InputError) as info:
        FabricConfig.from_mapping({"mtu": 1500}, source="scenario.toml[fabric]")
    msg = str(info.value)
    assert msg.startswith("scenario.toml[fabric].mtu: unknown fabric parameter")
    assert "mtu_bytes" in msg
    with pytest.raises(InputError, match=r"^fabric\.rp_timer: .*rp_timer_us"):
        FabricConfig.from_mapping({"rp_timer": 300})


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("mtu_bytes", 63, "out of range"),
        ("mtu_bytes", 9001, "out of range"),
        ("mtu_bytes", 1500.5, "expected an integer"),
        ("mtu_bytes", "big", "expected an integer"),
        ("buffer_bytes", "big", "bad size"),
        ("rp_timer_us", -1, "out of range"),
        ("rp_timer_us", 0, "out of range"),
        ("rp_timer_us", "-5us", "negative time"),
        ("rp_timer_us", "300", "has no unit"),
        ("alpha_resume_interval_us", 0.0001, "rounds to 0 ns"),
        ("nack_interval_us", -0.5, "out of range"),
        ("pmax", 1.01, "out of range"),
        ("pmax", -0.1, "out of range"),
        ("ewma_gain", 0, "out of range"),
        ("ewma_gain", 1.5, "out of range"),
        ("rate_on_first_cnp", 0, "out of range"),
        ("min_rate_mbps", 0, "out of range"),
        ("min_rate_mbps", "2Tbps", "out of range"),
        ("rate_ai_mbps", "fast", "bad rate"),
        ("ack_interval", 0, "out of range"),
        ("pfc_alpha_shift", 40, "out of range"),
        ("pfc_enabled", "yes", "expected true or false"),
        ("ecn_enabled", 1, "expected true or false"),
        ("seed", -1, "out of range"),
        ("seed", 2**32, "out of range"),
        ("seed", True, "expected an integer"),
        ("kmin_bytes_per_100g", 2_000_000, "must not exceed kmax"),
        ("reserve_per_queue_bytes", 2**40, "exceeds buffer_bytes"),
        ("buffer_bytes", 0, "out of range"),
        ("headroom_rtt_factor", "three", "expected a number"),
        ("headroom_rtt_factor", float("nan"), "finite"),
    ],
)
def test_bad_values_named_by_key(key, value, message):
    with pytest.raises(InputError, match=message) as info:
        FabricConfig.from_mapping({key: value})
    assert str(info.value).startswith(f"fabric.{key}: "), str(info.value)


def test_not_a_table():
    with pytest.raises(InputError, match="^fabric: expected a table"):
        FabricConfig.from_mapping([("mtu_bytes", 1000)])  # type: ignore[arg-type]


def test_direct_construction_validates():
    with pytest.raises(InputError, match=r"^fabric\.pmax: "):
        FabricConfig(pmax=2.0)
    with pytest.raises(InputError, match=r"^fabric\.kmin_bytes_per_100g: "):
        dataclasses.replace(FabricConfig(), kmin_bytes_per_100g=10, kmax_bytes_per_100g=5)


def test_check_topology_min_rate():
    FabricConfig().check_topology(star(2, "25Gbps"))
    with pytest.raises(InputError, match=r"^fabric\.min_rate_mbps: 1000 Mbps exceeds the slowest host link \(100Mbps\)"):
        FabricConfig().check_topology(star(2, "100Mbps"))


def test_describe_rows():
    rows = FabricConfig.describe()
    names = [f.name for f in dataclasses.fields(FabricConfig)]
    assert [r[0] for r in rows] == names
    table = {r[0]: r for r in rows}
    assert table["rp_timer_us"][1:3] == ("300", "us")
    assert table["ewma_gain"][1] == "0.00390625"
    assert table["pfc_enabled"][1] == "true"
    assert table["ecmp_seed"][1] == "unset"
    assert all(r[3] for r in rows)  # every parameter documented
    # every contract attribute is reachable from a field
    assert {attribute_name(n) for n in names} >= set(CONTRACT_ATTRIBUTES)


# HPCC run.py at bw=100, per algorithm: has_win, var_win, ack_prio, KMIN/KMAX/PMAX maps.
RUN_PY_PER_CC = {
    "dcqcn": (False, False, True, 400_000, 1_600_000, 0.2),
    "hpcc": (True, True, False, 400_000, 1_600_000, 0.2),
    "timely": (False, False, True, 400_000, 1_600_000, 0.2),
    "dctcp": (True, True, False, 300_000, 300_000, 1.0),  # kmin = kmax = 30*bw/10 KB
}


@pytest.mark.parametrize("cc", sorted(RUN_PY_PER_CC))
def test_per_cc_defaults_follow_run_py(cc):
    keys = ("window", "variable_window", "ack_high_priority", "kmin_bytes_per_100g", "kmax_bytes_per_100g", "pmax")
    for make in (lambda: FabricConfig(cc=cc), lambda: FabricConfig.from_mapping({"cc": cc})):
        cfg = make()
        assert tuple(getattr(cfg, k) for k in keys) == RUN_PY_PER_CC[cc]
        assert cfg.to_ns3_attributes()["ns3::RdmaNetwork::CongestionControl"] == cc


def test_per_cc_defaults_yield_to_user_values():
    cfg = FabricConfig.from_mapping({"cc": "dctcp", "kmin_bytes_per_100g": 100_000, "window": False})
    assert (cfg.kmin_bytes_per_100g, cfg.kmax_bytes_per_100g, cfg.window) == (100_000, 300_000, False)
    assert cfg.variable_window is True
    # a resolved configuration round-trips
    assert FabricConfig.from_mapping(cfg.as_dict()) == cfg


@pytest.mark.parametrize("old", sorted(RUN_PY_PER_CC))
@pytest.mark.parametrize("new", sorted(RUN_PY_PER_CC))
def test_replacing_cc_takes_the_new_algorithms_defaults(old, new):
    """dataclasses.replace passes every resolved field on: the keys still at
    the old algorithm's defaults must take the new one's, and a value the
    user set must stay."""
    keys = ("window", "variable_window", "ack_high_priority", "kmin_bytes_per_100g", "kmax_bytes_per_100g", "pmax")
    for start in (FabricConfig(cc=old), FabricConfig.from_mapping({"cc": old})):
        moved = dataclasses.replace(start, cc=new)
        assert tuple(getattr(moved, k) for k in keys) == RUN_PY_PER_CC[new]
        assert moved == FabricConfig(cc=new)
    kept = dataclasses.replace(FabricConfig(cc=old, pmax=0.5, window=old == "dcqcn"), cc=new)
    assert (kept.pmax, kept.window) == (0.5, old == "dcqcn")


def test_unknown_cc_named():
    with pytest.raises(InputError, match=r"^scenario\.toml\[fabric\]\.cc: unknown congestion control 'hpc'"):
        FabricConfig.from_mapping({"cc": "hpc"}, source="scenario.toml[fabric]")
    with pytest.raises(InputError, match=r"^fabric\.cc: "):
        FabricConfig.from_mapping({"cc": 3})


def test_an_unset_ecmp_seed_does_not_inherit_an_earlier_runs():
    """ns-3 attribute defaults outlive a run: a run with ``ecmp_seed = 42``
    used to leave 42 behind for every later run that left it unset, which
    then took other ECMP paths than the same scenario in a fresh process."""
    from ns3wormhole import run, topology
    from ns3wormhole.flows import permutation

    topo = topology.leaf_spine(2, 4, 4, "100Gbps", "100Gbps", "1us")
    flows = permutation(topo.hosts(), 2_000_000, seed=1)

    def fcts(fabric: FabricConfig) -> list[int]:
        result = run.run_flows(topo, flows, fabric)
        return sorted(result.fct_by_id().items())

    unset = fcts(FabricConfig())
    other = fcts(FabricConfig(ecmp_seed=42))
    assert other != unset, "ecmp_seed=42 should pick other paths on this fabric"
    assert fcts(FabricConfig()) == unset
