"""Fabric model parameters: congestion control, NIC, switch MMU/PFC, ECN, seeds.

:class:`FabricConfig` has one typed field per model parameter, with the defaults of
HPCC ``run.py dcqcn`` at 100 Gbps (see ``docs/rdma-model-contract.md``).  A scenario's
``[fabric]`` table maps onto it with :meth:`FabricConfig.from_mapping`, which rejects
unknown keys and impossible values naming the key (``fabric.mtu_bytes: ...``).
:meth:`FabricConfig.to_ns3_attributes` gives the ns-3 attribute strings
(``"ns3::DcqcnRateControl::RpTimer" -> "300us"``); :meth:`FabricConfig.describe`
gives ``(key, default, unit, doc)`` rows for the README.

``cc`` picks the congestion control (``dcqcn``, ``hpcc``, ``timely``, ``dctcp``).  The keys
whose HPCC ``run.py`` default depends on it (:data:`CC_DEFAULTS`: window, ACK priority, ECN
thresholds) default to ``None`` and take the chosen algorithm's value unless set.

Units are in the field names: ``_us``/``_ns`` times, ``_mbps`` rates, ``_bytes`` sizes.
In a mapping, time, rate and size fields also accept strings with units
(``rp_timer_us = "0.3ms"``, ``min_rate_mbps = "1Gbps"``, ``buffer_bytes = "32MiB"``).
Times are rounded to whole nanoseconds, rates to whole bits/s.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import InitVar, dataclass, field
from typing import Any, Mapping

import numpy as np

from .errors import InputError
from .limits import MAX_LINK_RATE_BPS, check_time_ns
from .topology import Topology, format_rate, format_time, parse_rate, parse_size, parse_time

__all__ = ["FabricConfig", "attribute_name", "CC_NAMES", "CC_MODES", "CC_DEFAULTS"]

CC_NAMES = ("dcqcn", "hpcc", "timely", "dctcp")
"""Values of ``cc``: HPCC's CC_MODE 1, 3, 7 and 8."""
CC_MODES = {1: "dcqcn", 3: "hpcc", 7: "timely", 8: "dctcp"}
"""HPCC ``config.txt`` CC_MODE -> ``cc``."""

_ECN_DCQCN = {"kmin_bytes_per_100g": 400_000, "kmax_bytes_per_100g": 1_600_000, "pmax": 0.2}
CC_DEFAULTS: dict[str, dict[str, Any]] = {
    # HPCC run.py at 100G: has_win/var_win, ack_prio and the KMIN/KMAX/PMAX maps per algorithm.
    "dcqcn": {"window": False, "variable_window": False, "ack_high_priority": True, **_ECN_DCQCN},
    "hpcc": {"window": True, "variable_window": True, "ack_high_priority": False, **_ECN_DCQCN},
    "timely": {"window": False, "variable_window": False, "ack_high_priority": True, **_ECN_DCQCN},
    "dctcp": {
        "window": True, "variable_window": True, "ack_high_priority": False,
        "kmin_bytes_per_100g": 300_000, "kmax_bytes_per_100g": 300_000, "pmax": 1.0,
    },
}
"""Per-algorithm defaults of the keys that default to ``None``."""

_CC = "ns3::RdmaCongestionControl::"
_HPCC = "ns3::HpccRateControl::"
_TIMELY = "ns3::TimelyRateControl::"
_DCTCP = "ns3::DctcpRateControl::"
_DCQCN = "ns3::DcqcnRateControl::"
_NIC = "ns3::RdmaNic::"
_MMU = "ns3::RdmaSwitchMmu::"
_SW = "ns3::RdmaSwitch::"
_NET = "ns3::RdmaNetwork::"

_UINT32_MAX = 2**32 - 1
_MAX_RATE_MBPS = 1_600_000.0  # 1.6 Tbps, the fastest link anyone simulates today


def _f(
    default: Any,
    attr: str,
    kind: str,
    unit: str,
    doc: str,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
) -> Any:
    """A field with its ns-3 attribute, kind (value conversion), unit, doc and range.
    Kind ``choice``: one of :data:`CC_NAMES`."""
    return field(
        default=default,
        metadata={"attr": attr, "kind": kind, "unit": unit, "doc": doc, "lo": lo, "hi": hi, "lo_open": lo_open},
    )


@dataclass(frozen=True)
class FabricConfig:
    """Every parameter of the RDMA fabric model; defaults = HPCC ``run.py`` at 100G for
    the chosen ``cc`` (``dcqcn`` by default)."""

    # --- congestion control, shared (ns3::RdmaNetwork, ns3::RdmaCongestionControl) ---
    cc: str = _f(
        "dcqcn", _NET + "CongestionControl", "choice", "",
        "Congestion control: dcqcn, hpcc, timely or dctcp (HPCC CC_MODE 1, 3, 7, 8; docs/congestion-control.md).")
    min_rate_mbps: float = _f(
        1000.0, _CC + "MinRate", "rate_mbps", "Mbps",
        "Floor of the sending rate, every algorithm (MIN_RATE).",
        lo=0, hi=_MAX_RATE_MBPS, lo_open=True)
    window: bool | None = _f(
        None, _CC + "Window", "bool", "",
        "Limit bytes in flight to the flow's bandwidth-delay product (HAS_WIN); default per cc: "
        "on for hpcc and dctcp.")
    variable_window: bool | None = _f(
        None, _CC + "VariableWindow", "bool", "",
        "With window: window = sending rate x base RTT instead of line rate x base RTT (VAR_WIN); "
        "default per cc: on for hpcc and dctcp.")
    ack_high_priority: bool | None = _f(
        None, _NIC + "AckHighPriority", "bool", "",
        "ACK/NACK/CNP frames use the switches' strict-priority control queue (ACK_HIGH_PRIO); off: "
        "the data queue of their flow's priority group. Default per cc: on for dcqcn and timely.")

    # --- HPCC (ns3::HpccRateControl) -------------------------------------------------
    hpcc_rate_ai_mbps: float = _f(
        40.0, _HPCC + "RateAi", "rate_mbps", "Mbps",
        "HPCC additive increase per update, W_AI/T (RATE_AI; run.py hp: 10*bw/25 Mbps).",
        lo=0, hi=_MAX_RATE_MBPS, lo_open=True)
    hpcc_u_target: float = _f(
        0.95, _HPCC + "UTarget", "float", "fraction",
        "HPCC target utilisation eta of the most loaded hop (U_TARGET).", lo=0.01, hi=1)
    hpcc_mi_thresh: int = _f(
        0, _HPCC + "MiThresh", "int", "updates",
        "HPCC additive-only per-RTT updates allowed in a row below eta, maxStage (MI_THRESH).",
        lo=0, hi=_UINT32_MAX)
    hpcc_fast_react: bool = _f(
        True, _HPCC + "FastReact", "bool", "",
        "HPCC applies the rate computed on every ACK, not only once per RTT (FAST_REACT).")
    hpcc_int_multi: int = _f(
        4, _HPCC + "IntMulti", "int", "",
        "INT field units: queue length in 80 x this bytes, byte counter in 128 x this bytes "
        "(INT_MULTI; run.py hp: bw/25).", lo=1, hi=_UINT32_MAX)

    # --- TIMELY (ns3::TimelyRateControl) ---------------------------------------------
    timely_rate_ai_mbps: float = _f(
        100.0, _TIMELY + "RateAi", "rate_mbps", "Mbps",
        "TIMELY additive increase per update, delta (RATE_AI; run.py timely: 10*bw/10 Mbps).",
        lo=0, hi=_MAX_RATE_MBPS, lo_open=True)
    timely_rate_hai_mbps: float = _f(
        500.0, _TIMELY + "RateHai", "rate_mbps", "Mbps",
        "TIMELY hyper-active increase after timely_hai_thresh falling-RTT updates (RATE_HAI; 50*bw/10 Mbps).",
        lo=0, hi=_MAX_RATE_MBPS, lo_open=True)
    timely_alpha: float = _f(
        0.875, _TIMELY + "Alpha", "float", "",
        "TIMELY EWMA weight of a new RTT difference.", lo=0, hi=1)
    timely_beta: float = _f(
        0.8, _TIMELY + "Beta", "float", "",
        "TIMELY multiplicative-decrease factor.", lo=0, hi=1)
    timely_t_low_us: float = _f(
        50.0, _TIMELY + "TLow", "time_us", "us",
        "TIMELY: below this RTT the rate only increases.", lo=0)
    timely_t_high_us: float = _f(
        500.0, _TIMELY + "THigh", "time_us", "us",
        "TIMELY: above this RTT the rate falls in proportion to the excess.", lo=0)
    timely_min_rtt_us: float = _f(
        20.0, _TIMELY + "MinRtt", "time_us", "us",
        "TIMELY: the RTT that normalises the gradient.", lo=0, lo_open=True)
    timely_hai_thresh: int = _f(
        5, _TIMELY + "HaiThresh", "int", "updates",
        "TIMELY: non-positive gradients in a row before hyper-active increase.", lo=1, hi=_UINT32_MAX)

    # --- DCTCP (ns3::DctcpRateControl) -----------------------------------------------
    dctcp_rate_ai_mbps: float = _f(
        615.0, _DCTCP + "RateAi", "rate_mbps", "Mbps",
        "DCTCP rate added per window without a cut, one MTU per RTT (DCTCP_RATE_AI).",
        lo=0, hi=_MAX_RATE_MBPS, lo_open=True)
    dctcp_ewma_gain: float = _f(
        1 / 16, _DCTCP + "EwmaGain", "float", "",
        "DCTCP gain g: alpha <- (1-g)*alpha + g*(marked fraction of the window) (EWMA_GAIN).",
        lo=0, hi=1, lo_open=True)

    # --- DCQCN reaction point (ns3::DcqcnRateControl), Mellanox flavour -------------
    alpha_resume_interval_us: float = _f(
        1.0, _DCQCN + "AlphaResumeInterval", "time_us", "us",
        "Period of the alpha (congestion estimate) update once a QP has seen a CNP (HPCC ALPHA_RESUME_INTERVAL).",
        lo=0, lo_open=True)
    rate_decrease_interval_us: float = _f(
        4.0, _DCQCN + "RateDecreaseInterval", "time_us", "us",
        "Period of the rate-decrease check; cuts the rate if a CNP arrived since the last check (RATE_DECREASE_INTERVAL).",
        lo=0, lo_open=True)
    rp_timer_us: float = _f(
        300.0, _DCQCN + "RpTimer", "time_us", "us",
        "Rate-increase timer period: fast recovery, then additive, then hyper increase (RP_TIMER).",
        lo=0, lo_open=True)
    ewma_gain: float = _f(
        1 / 256, _DCQCN + "EwmaGain", "float", "",
        "Alpha EWMA gain g: alpha <- (1-g)*alpha (+ g if a CNP arrived) (EWMA_GAIN).",
        lo=0, hi=1, lo_open=True)
    fast_recovery_times: int = _f(
        1, _DCQCN + "FastRecoveryTimes", "int", "timer periods",
        "Increase-timer stages spent in fast recovery before additive increase (FAST_RECOVERY_TIMES).",
        lo=0, hi=_UINT32_MAX)
    rate_ai_mbps: float = _f(
        20.0, _DCQCN + "RateAi", "rate_mbps", "Mbps",
        "Additive-increase step of the target rate (RATE_AI; run.py: 5*bw/25 Mbps).",
        lo=0, hi=_MAX_RATE_MBPS, lo_open=True)
    rate_hai_mbps: float = _f(
        200.0, _DCQCN + "RateHai", "rate_mbps", "Mbps",
        "Hyper-increase step of the target rate (RATE_HAI; run.py: 50*bw/25 Mbps).",
        lo=0, hi=_MAX_RATE_MBPS, lo_open=True)
    clamp_target_rate: bool = _f(
        False, _DCQCN + "ClampTargetRate", "bool", "",
        "On every decrease also set target rate = current rate (CLAMP_TARGET_RATE).")
    rate_on_first_cnp: float = _f(
        1.0, _DCQCN + "RateOnFirstCnp", "float", "fraction",
        "On a QP's first CNP, rate = target = this fraction of the current rate.",
        lo=0, hi=1, lo_open=True)

    # --- NIC / queue pair (ns3::RdmaNic) ---------------------------------------------
    mtu_bytes: int = _f(
        1000, _NIC + "Mtu", "int", "bytes",
        "Payload bytes per data packet (HPCC 1000; SimAI 9000).", lo=64, hi=9000)
    header_bytes: int = _f(
        48, _NIC + "HeaderBytes", "int", "bytes",
        "Header bytes added to every data packet on the wire.", lo=0, hi=256)
    ack_interval: int = _f(
        1, _NIC + "AckInterval", "int", "packets",
        "Receiver sends an ACK every this many data packets (L2_ACK_INTERVAL).", lo=1, hi=_UINT32_MAX)
    nack_interval_us: float = _f(
        500.0, _NIC + "NackInterval", "time_us", "us",
        "Receiver suppresses repeat NACKs for the same expected sequence number within this time.", lo=0)
    retransmit_timeout_us: float = _f(
        4000.0, _NIC + "RetransmitTimeout", "time_us", "us",
        "Go-back-N from the first unacknowledged byte when nothing is acknowledged for this long.",
        lo=0, lo_open=True)
    ifg_ns: int = _f(
        0, _NIC + "Ifg", "time_ns", "ns",
        "Inter-frame gap added after each packet when pacing.", lo=0)

    # --- switch shared buffer and PFC (ns3::RdmaSwitchMmu) ---------------------------
    buffer_bytes: int = _f(
        32 * 2**20, _MMU + "BufferSize", "bytes", "bytes",
        "Shared buffer per switch (BUFFER_SIZE 32 MB; HPCC counts MB as 2^20 bytes).", lo=1, hi=2**63 - 1)
    reserve_per_queue_bytes: int = _f(
        4096, _MMU + "ReservePerQueue", "bytes", "bytes",
        "Guaranteed (reserved) buffer per ingress (port, queue).", lo=0, hi=2**63 - 1)
    resume_offset_bytes: int = _f(
        3072, _MMU + "ResumeOffset", "bytes", "bytes",
        "PFC resume is sent once shared use is this far below the pause threshold.", lo=0, hi=2**63 - 1)
    headroom_rtt_factor: float = _f(
        3.0, _MMU + "HeadroomRttFactor", "float", "x BDP",
        "PFC headroom per port = factor x link rate x link delay / 8.", lo=0, hi=1000)
    pfc_alpha_shift: int = _f(
        3, _MMU + "PfcAlphaShift", "int", "",
        "Dynamic PFC threshold = free shared buffer >> shift (alpha = 1/8); "
        "one less per doubling of port rate above the NIC rate.",
        lo=0, hi=31)
    pfc_enabled: bool = _f(
        True, _MMU + "PfcEnabled", "bool", "",
        "Send PFC pause/resume frames (off: packets are dropped when the buffer is full).")

    # --- ECN marking (ns3::RdmaSwitch) -----------------------------------------------
    ecn_enabled: bool = _f(True, _SW + "EcnEnabled", "bool", "", "Mark ECN CE at egress dequeue.")
    kmin_bytes_per_100g: int | None = _f(
        None, _SW + "KminPer100G", "bytes", "bytes",
        "Egress queue length where marking starts, at 100 Gbps; scales linearly with link rate "
        "(KMIN, KB = 1000 B). Default per cc: 400000; dctcp 300000.",
        lo=0, hi=2**63 - 1)
    kmax_bytes_per_100g: int | None = _f(
        None, _SW + "KmaxPer100G", "bytes", "bytes",
        "Egress queue length above which every packet is marked, at 100 Gbps; scales with link rate "
        "(KMAX). Default per cc: 1600000; dctcp 300000.",
        lo=0, hi=2**63 - 1)
    pmax: float | None = _f(
        None, _SW + "Pmax", "float", "probability",
        "Marking probability at kmax; linear from 0 at kmin (PMAX). Default per cc: 0.2; dctcp 1.",
        lo=0, hi=1)
    ecn_map: tuple[tuple[int, int, int, float], ...] = _f(
        (), _SW + "EcnMap", "ecn_map", "table",
        "Per link rate ECN thresholds (KMIN_MAP/KMAX_MAP/PMAX_MAP): "
        '`{ "200Gbps" = {kmin_kb = 300, kmax_kb = 1200, pmax = 0.8} }`, KB = 1000 B; '
        "ports of a rate not in the table use the three keys above.")
    ecmp_seed: int | None = _f(
        None, _SW + "EcmpSeed", "opt_int", "",
        "ECMP hash seed (per-switch seed derived from it and the node id); unset: derived from seed.",
        lo=0, hi=_UINT32_MAX)

    # --- whole network (ns3::RdmaNetwork) --------------------------------------------
    seed: int = _f(
        1, _NET + "Seed", "int", "",
        "Seed of the ECN-marking draws (counter-based, per switch port and frame) and the ECMP hashes.", lo=0, hi=_UINT32_MAX)
    int_counter_seed: int = _f(
        0, _NET + "IntCounterSeed", "int", "",
        "0: every switch port's transmitted-byte counter (HPCC's INT) starts at 0, as in HPCC's code; "
        "else at a value drawn from this seed. HPCC reads it in 128 x hpcc_int_multi byte units, so "
        "where it starts moves how flows split a port: a draw of the reference's own spread.",
        lo=0, hi=_UINT32_MAX)
    queue_sample_interval_ns: int = _f(
        0, _NET + "QueueSampleInterval", "time_ns", "ns",
        "Egress queue-length sampling period (0 = off).", lo=0)
    rate_sample_interval_ns: int = _f(
        0, _NET + "RateSampleInterval", "time_ns", "ns",
        "Per-flow sending-rate sampling period (0 = off).", lo=0)
    qlen_monitor_start_ns: int = _f(
        0, _NET + "QlenMonitorStart", "time_ns", "ns",
        "Start of the switch queue-length histograms (HPCC QLEN_MON_START; 1 KB bins, sampled every 100 ns).", lo=0)
    qlen_monitor_end_ns: int = _f(
        0, _NET + "QlenMonitorEnd", "time_ns", "ns",
        "End of the queue-length histograms (HPCC QLEN_MON_END; 0 = off); kept every 100 ms of simulated time.", lo=0)
    # Not a parameter: the per-cc keys this config took from CC_DEFAULTS, with
    # their values. dataclasses.replace passes it on, so that a key still at
    # the old algorithm's default when ``cc`` changes takes the new one's.
    _cc_defaulted: InitVar[tuple] = ()

    # ------------------------------------------------------------------ checks

    def __post_init__(self, _cc_defaulted: tuple = ()) -> None:
        self._validate("fabric", _cc_defaulted)

    def _validate(self, source: str, carried: tuple = ()) -> None:
        if self.cc not in CC_NAMES:
            raise InputError(f"{source}.cc", None, f"unknown congestion control {self.cc!r}; known: {', '.join(CC_NAMES)}")
        for key, value in carried:
            if getattr(self, key) == value:  # not set since it was defaulted
                object.__setattr__(self, key, None)
        defaulted = [key for key in CC_DEFAULTS[self.cc] if getattr(self, key) is None]
        for key in defaulted:
            object.__setattr__(self, key, CC_DEFAULTS[self.cc][key])
        for f in dataclasses.fields(self):
            value = _normalise(f, getattr(self, f.name), f"{source}.{f.name}")
            object.__setattr__(self, f.name, value)
            _check_range(f, value, f"{source}.{f.name}")
        object.__setattr__(self, "_cc_defaulted", tuple((key, getattr(self, key)) for key in defaulted))
        if self.kmin_bytes_per_100g > self.kmax_bytes_per_100g:
            raise InputError(
                f"{source}.kmin_bytes_per_100g", None,
                f"kmin ({self.kmin_bytes_per_100g}) must not exceed kmax_bytes_per_100g ({self.kmax_bytes_per_100g})")
        for key in ("reserve_per_queue_bytes", "resume_offset_bytes"):
            if getattr(self, key) > self.buffer_bytes:
                raise InputError(f"{source}.{key}", None, f"{getattr(self, key)} exceeds buffer_bytes ({self.buffer_bytes})")

    def check_topology(self, topology: Topology, source: str = "fabric") -> None:
        """Checks that need the topology: ``min_rate_mbps`` must not exceed the slowest
        host link (a flow could never run at its own floor)."""
        hosts = ~topology.is_switch
        host_link = hosts[topology.link_a] | hosts[topology.link_b]
        if host_link.any():
            slowest = int(topology.rate_bps[host_link].min())
            if self.min_rate_mbps * 1e6 > slowest:
                raise InputError(
                    f"{source}.min_rate_mbps", None,
                    f"{self.min_rate_mbps:g} Mbps exceeds the slowest host link ({format_rate(slowest)})")

    # ------------------------------------------------------------------ conversion

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], source: str = "fabric") -> FabricConfig:
        """Build from a ``[fabric]`` table: unknown keys and bad values raise
        :class:`InputError` naming ``source.key``; absent keys keep their defaults."""
        if not isinstance(mapping, Mapping):
            raise InputError(source, None, f"expected a table of fabric parameters, got {type(mapping).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for key, raw in mapping.items():
            f = fields.get(str(key))
            if f is None:
                close = [n for n in fields if n.startswith(f"{key}_")] or difflib.get_close_matches(str(key), fields, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(fields)}"
                raise InputError(f"{source}.{key}", None, f"unknown fabric parameter{hint}")
            values[f.name] = _convert(f, raw, f"{source}.{key}")
        defaults = {name: f.default for name, f in fields.items()}
        cfg = cls.__new__(cls)
        for name, value in {**defaults, **values}.items():
            object.__setattr__(cfg, name, value)
        cfg._validate(source)
        return cfg

    def with_step_marking(self) -> "FabricConfig":
        """The same fabric with ECN marking every data frame above kmax (kmin =
        kmax) instead of with a probability rising from kmin: DCQCN incasts
        then stop being chaotic (see benchmarks/README.md)."""
        return dataclasses.replace(self, kmin_bytes_per_100g=self.kmax_bytes_per_100g)

    def as_dict(self) -> dict[str, Any]:
        """Field values keyed by field name (``from_mapping(cfg.as_dict()) == cfg``)."""
        return dataclasses.asdict(self)

    def to_ns3_attributes(self) -> dict[str, str]:
        """``{"ns3::DcqcnRateControl::RpTimer": "300us", ...}``: every attribute of the
        contract, as strings ns-3's attribute system parses (``Config::SetDefault``).
        ns-3 defaults outlive a run, so every attribute is sent, unset ones
        included: ``EcmpSeed`` as 0 when ``ecmp_seed`` is unset (the switch then
        mixes only the network seed and its index), ``EcnMap`` empty for none.
        Otherwise an earlier run's value would stay in force."""
        out: dict[str, str] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None:
                if f.metadata["kind"] != "opt_int":
                    continue
                value = 0
            out[f.metadata["attr"]] = _ns3_string(f.metadata["kind"], value)
        return out

    @classmethod
    def describe(cls) -> list[tuple[str, str, str, str]]:
        """``(key, default, unit, doc)`` rows, in field order, for README tables."""
        rows = []
        for f in dataclasses.fields(cls):
            if f.name in CC_DEFAULTS["dcqcn"]:
                default = "per cc"
            else:
                default = "unset" if f.default is None else _display(f.metadata["kind"], f.default)
            rows.append((f.name, default, f.metadata["unit"], f.metadata["doc"]))
        return rows


def attribute_name(key: str) -> str:
    """The ns-3 attribute a :class:`FabricConfig` field maps to."""
    for f in dataclasses.fields(FabricConfig):
        if f.name == key:
            return str(f.metadata["attr"])
    raise KeyError(key)


# ---------------------------------------------------------------------- helpers


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_number(value: Any) -> bool:
    return _is_int(value) or isinstance(value, (float, np.floating))


def _convert(f: dataclasses.Field, raw: Any, key: str) -> Any:
    """Mapping value -> field value (strings with units allowed for times/rates/sizes)."""
    kind = f.metadata["kind"]
    if isinstance(raw, str):
        if kind == "time_us":
            return parse_time(raw, source=key) / 1000.0
        if kind == "time_ns":
            return parse_time(raw, source=key)
        if kind == "rate_mbps":
            return parse_rate(raw, source=key) / 1e6
        if kind == "bytes":
            return parse_size(raw, source=key)
    return raw


def _normalise(f: dataclasses.Field, value: Any, key: str) -> Any:
    """Type check; ints become floats for float fields, numpy scalars become Python."""
    kind = f.metadata["kind"]
    if kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise InputError(key, None, f"expected true or false, got {value!r}")
        return bool(value)
    if kind in ("int", "bytes", "time_ns") or (kind == "opt_int" and value is not None):
        if not _is_int(value):
            raise InputError(key, None, f"expected an integer, got {value!r}")
        return int(value)
    if kind == "opt_int":
        return None
    if kind == "ecn_map":
        return _normalise_ecn_map(value, key)
    if kind == "choice":
        if not isinstance(value, str):
            raise InputError(key, None, f"expected a string, got {value!r}")
        return value
    if not _is_number(value):
        raise InputError(key, None, f"expected a number, got {value!r}")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise InputError(key, None, f"expected a finite number, got {value!r}")
    return value


def _check_range(f: dataclasses.Field, value: Any, key: str) -> None:
    if value is None or isinstance(value, (bool, tuple)):
        return
    lo, hi, lo_open = f.metadata["lo"], f.metadata["hi"], f.metadata["lo_open"]
    unit = f" {f.metadata['unit']}" if f.metadata["unit"] in ("us", "ns", "Mbps", "bytes") else ""
    if lo is not None and (value <= lo if lo_open else value < lo):
        bound = f"must be {'>' if lo_open else '>='} {lo:g}" + (f" and <= {hi:g}" if hi is not None else "")
        raise InputError(key, None, f"{value:g}{unit} is out of range: {bound}")
    if hi is not None and value > hi:
        raise InputError(key, None, f"{value:g}{unit} is out of range: must be <= {hi:g}")
    kind = f.metadata["kind"]
    if kind == "time_us":
        check_time_ns(round(value * 1000), key)
    if kind == "time_ns":
        check_time_ns(value, key)
    if kind == "time_us" and lo_open and round(value * 1000) == 0:
        raise InputError(key, None, f"{value:g} us rounds to 0 ns")
    if kind == "rate_mbps" and round(value * 1e6) == 0:
        raise InputError(key, None, f"{value:g} Mbps rounds to 0 bps")


def _format_float(x: float) -> str:
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


_ECN_ENTRY_KEYS = ("kmin_kb", "kmax_kb", "pmax")


def _normalise_ecn_map(value: Any, key: str) -> tuple[tuple[int, int, int, float], ...]:
    """``{rate: {kmin_kb, kmax_kb, pmax}}`` (a [fabric] table) or the normalised form
    ``((rate_bps, kmin_bytes, kmax_bytes, pmax), ...)`` -> the normalised form, by rate."""
    entries: dict[int, tuple[int, int, int, float]] = {}
    if isinstance(value, Mapping):
        items = []
        for rate_key, entry in value.items():
            where = f"{key}.{rate_key}"
            rate = parse_rate(rate_key, source=where) if isinstance(rate_key, str) else rate_key
            if not isinstance(entry, Mapping):
                raise InputError(where, None, f"expected a table {{kmin_kb, kmax_kb, pmax}}, got {entry!r}")
            unknown = sorted(set(map(str, entry)) - set(_ECN_ENTRY_KEYS))
            missing = [k for k in _ECN_ENTRY_KEYS if k not in entry]
            if unknown or missing:
                what = f"unknown key {unknown[0]!r}" if unknown else f"missing key {missing[0]!r}"
                raise InputError(where, None, f"{what}; an entry has exactly {', '.join(_ECN_ENTRY_KEYS)}")
            for k in _ECN_ENTRY_KEYS:
                if not _is_number(entry[k]) or isinstance(entry[k], bool) or not np.isfinite(entry[k]):
                    raise InputError(f"{where}.{k}", None, f"expected a number, got {entry[k]!r}")
            items.append((where, rate, round(entry["kmin_kb"] * 1000), round(entry["kmax_kb"] * 1000),
                          float(entry["pmax"])))
    elif isinstance(value, (tuple, list)):
        items = []
        for i, entry in enumerate(value):
            if not isinstance(entry, (tuple, list)) or len(entry) != 4:
                raise InputError(f"{key}[{i}]", None, f"expected (rate_bps, kmin_bytes, kmax_bytes, pmax), got {entry!r}")
            items.append((f"{key}[{i}]", *entry))
    else:
        raise InputError(key, None, f"expected a table of link rate -> {{kmin_kb, kmax_kb, pmax}}, got {value!r}")
    for where, rate, kmin, kmax, pmax in items:
        if not _is_int(rate) or rate <= 0:
            raise InputError(where, None, f"link rate must be a positive rate, got {rate!r}")
        if rate > MAX_LINK_RATE_BPS:
            raise InputError(where, None, f"link rate {rate:g} bps is above {MAX_LINK_RATE_BPS // 10**12} Tbps")
        if not (_is_int(kmin) and _is_int(kmax)) or kmin < 0 or kmin > kmax:
            raise InputError(where, None, f"need 0 <= kmin <= kmax, got kmin {kmin!r} B, kmax {kmax!r} B")
        if kmax > 2**63 - 1:
            raise InputError(where, None, f"kmax {kmax:g} B is too large (the model counts bytes in 64 bits)")
        if not 0 <= pmax <= 1:
            raise InputError(where, None, f"pmax {pmax!r} is out of range: must be in [0, 1]")
        if int(rate) in entries:
            raise InputError(where, None, f"{format_rate(int(rate))} appears twice")
        entries[int(rate)] = (int(rate), int(kmin), int(kmax), float(pmax))
    return tuple(entries[r] for r in sorted(entries))


def _ns3_string(kind: str, value: Any) -> str:
    if kind == "ecn_map":
        # ns3::RdmaSwitch::EcnMap: "rate_bps:kmin_bytes:kmax_bytes:pmax" entries, comma-separated.
        return ",".join(f"{r}:{lo}:{hi}:{_format_float(p)}" for r, lo, hi, p in value)
    if kind == "choice":
        return str(value)
    if kind == "time_us":
        return format_time(round(value * 1000))
    if kind == "time_ns":
        return format_time(value)
    if kind == "rate_mbps":
        return format_rate(round(value * 1e6))
    if kind == "bool":
        return "true" if value else "false"
    if kind == "float":
        return _format_float(value)
    return str(int(value))


def _display(kind: str, value: Any) -> str:
    if kind == "ecn_map":
        return "{}" if not value else "; ".join(
            f"{format_rate(r)}: {lo / 1000:g}/{hi / 1000:g} KB, {p:g}" for r, lo, hi, p in value)
    if kind == "choice":
        return str(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("float", "time_us", "rate_mbps"):
        return _format_float(value)
    return str(value)
