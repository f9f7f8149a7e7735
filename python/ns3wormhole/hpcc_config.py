"""HPCC/SimAI simulation configs (``mix/config.txt``: one ``KEY value`` per line).

HPCC's driver (``scratch/third.cc``) reads a config whose every line is a key and
its value(s), written by ``simulation/run.py`` from one template.  This module
reads such a file, maps every key of that template onto a scenario (the mapping
table is in the README, section "HPCC and SimAI config files"), and says where
HPCC's output files go:

* keys we model become scenario keys (``RP_TIMER 300`` -> ``fabric.rp_timer_us``);
* keys that switch on behaviour we do not model (``HAS_WIN 1``, ``CC_MODE 3`` while
  only DCQCN exists) are errors naming the line and the key;
* keys with no effect on our model (tracing, HPCC/PINT knobs under DCQCN) are
  collected and reported in ONE warning line, never silently dropped.

Relative paths resolve as HPCC's users lay them out: HPCC opens them relative to
the directory ``third`` runs in (``simulation/``, where ``run.py`` writes
``mix/config_*.txt`` naming ``mix/topo.txt``).  We try, in order, the current
directory, the config file's folder, and the folder above it; the first where
``TOPOLOGY_FILE`` exists is the base of every other path, outputs included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import InputError
from .topology import parse_rate

__all__ = ["HpccConfig", "HpccOutputs", "is_hpcc_config", "read_hpcc_config", "MODELLED", "IGNORED", "PENDING"]

# CC_MODE values of HPCC and what they name.
CC_MODES = {1: "DCQCN", 3: "HPCC", 7: "TIMELY", 8: "DCTCP", 10: "HPCC-PINT"}
# CC_MODE -> [fabric] cc; without a cc key the model has DCQCN only (None: leave cc unset).
CC_NAMES = {1: "dcqcn", 3: "hpcc", 7: "timely", 8: "dctcp"}
# Keys read by one algorithm only: key -> (algorithm, fabric key) for each that reads it.
DCQCN_ONLY = ("ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL", "RP_TIMER", "FAST_RECOVERY_TIMES", "CLAMP_TARGET_RATE")
CC_KEYS = {
    "hpcc": {"RATE_AI": "hpcc_rate_ai_mbps", "U_TARGET": "hpcc_u_target", "MI_THRESH": "hpcc_mi_thresh",
             "FAST_REACT": "hpcc_fast_react", "INT_MULTI": "hpcc_int_multi"},
    "timely": {"RATE_AI": "timely_rate_ai_mbps", "RATE_HAI": "timely_rate_hai_mbps"},
    "dctcp": {"DCTCP_RATE_AI": "dctcp_rate_ai_mbps", "EWMA_GAIN": "dctcp_ewma_gain"},
}
WINDOW_KEYS = {"HAS_WIN": "window", "VAR_WIN": "variable_window", "ACK_HIGH_PRIO": "ack_high_priority"}


def _fabric_fields() -> set[str]:
    import dataclasses

    from .fabric import FabricConfig

    return {f.name for f in dataclasses.fields(FabricConfig)}


def supported_cc() -> dict[int, str | None]:
    """CC_MODE values the model simulates, and the [fabric] cc value of each."""
    if "cc" in _fabric_fields():
        return dict(CC_NAMES)
    return {1: None}

# HPCC defaults used when the file does not give the key (third.cc's own values).
QLEN_MON_START_NS = 2_000_000_000
QLEN_MON_END_NS = 2_100_000_000
MIB = 2**20

# Keys that have no effect on our model; named in one warning line.
IGNORED = {
    "TRACE_FILE": "packet trace node list",
    "TRACE_OUTPUT_FILE": "binary packet trace",
    "ENABLE_TRACE": "binary packet trace",
    "L2_CHUNK_SIZE": "chunking for go-back-0",
    "GLOBAL_T": "window (HAS_WIN 0)",
    "VAR_WIN": "window (HAS_WIN 0)",
    "FAST_REACT": "HPCC",
    "U_TARGET": "HPCC",
    "MI_THRESH": "HPCC",
    "INT_MULTI": "HPCC",
    "MULTI_RATE": "HPCC",
    "SAMPLE_FEEDBACK": "HPCC",
    "PINT_LOG_BASE": "HPCC-PINT",
    "PINT_PROB": "HPCC-PINT",
    "DCTCP_RATE_AI": "DCTCP",
    "PAUSE_TIME": "PFC pause time (pauses hold until a resume, as in HPCC)",
    "DATA_RATE": "unused by third.cc",
    "LINK_DELAY": "unused by third.cc",
}

# Keys accepted only at the value our model implements; other values are errors.
# key -> (accepted value, what another value would need)
FIXED = {
    "USE_DYNAMIC_PFC_THRESHOLD": ("1", "a static PFC threshold is not modelled"),
    "L2_BACK_TO_ZERO": ("0", "go-back-0 is not modelled (the model does go-back-N)"),
    "ACK_HIGH_PRIO": ("1", "ACKs sharing the data queue are not modelled (switches send ACKs, CNPs and NACKs first)"),
    "RATE_BOUND": ("1", "sending above the congestion-control rate is not modelled"),
    "HAS_WIN": ("0", "a sending window is not modelled yet"),
}

# Keys whose non-trivial values wait for model features not there yet.
PENDING: dict[str, tuple[str, str]] = {}
# third.cc takes LINK_DOWN's link down at 2 s + the given microseconds.
LINK_DOWN_BASE_NS = 2_000_000_000


@dataclass
class HpccOutputs:
    """Where HPCC's output files go (absolute paths; None = not asked)."""

    fct: Path | None = None
    pfc: Path | None = None
    qlen: Path | None = None


@dataclass
class HpccConfig:
    """A parsed config: the scenario mapping it stands for, its outputs, and the
    keys reported as not modelled."""

    path: Path
    scenario: dict
    outputs: HpccOutputs
    base: Path
    ignored: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)

    def warning(self) -> str | None:
        """The one warning line naming every key that does not change the simulation."""
        parts = []
        if self.ignored:
            parts.append(f"keys not modelled, ignored: {', '.join(self.ignored)}")
        if self.unknown:
            parts.append(f"keys HPCC does not know either, ignored: {', '.join(self.unknown)}")
        return f"{self.path}: " + "; ".join(parts) if parts else None


_KEY = re.compile(r"^[A-Z][A-Z0-9_]*$")


def is_hpcc_config(path: str | Path) -> bool:
    """True when the file's first meaningful line is ``KEY value`` with an
    upper-case key and no ``=`` (TOML needs ``key = value`` or ``[table]``)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                text = line.split("#", 1)[0].strip()
                if not text:
                    continue
                return "=" not in text and bool(_KEY.match(text.split()[0]))
    except OSError:
        return False
    return False


class _Ctx:
    def __init__(self, path: Path, lines: dict[str, int]) -> None:
        self.path = path
        self.lines = lines

    def error(self, key: str, message: str) -> InputError:
        return InputError(str(self.path), self.lines.get(key), f"{key}: {message}")

    def number(self, key: str, value: str, positive: bool = False, integer: bool = False) -> float:
        try:
            x = float(value)
        except ValueError:
            raise self.error(key, f"expected a number, got {value!r}") from None
        if integer and x != int(x):
            raise self.error(key, f"expected an integer, got {value!r}")
        if x < 0 or (positive and x == 0):
            raise self.error(key, f"must be {'> 0' if positive else '>= 0'}, got {value!r}")
        return int(x) if integer else x

    def flag(self, key: str, value: str) -> bool:
        if value not in ("0", "1"):
            raise self.error(key, f"expected 0 or 1, got {value!r}")
        return value == "1"

    def rate_mbps(self, key: str, value: str) -> float:
        try:
            return parse_rate(value, source=key) / 1e6
        except InputError as exc:
            raise self.error(key, exc.message.split(": ", 1)[-1]) from None


def _parse_lines(path: Path) -> tuple[dict[str, str], dict[str, int]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), None, "config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(path), None, f"cannot read config file: {exc}") from None
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        body = raw.split("#", 1)[0].strip()
        if not body:
            continue
        toks = body.split()
        key = toks[0]
        if not _KEY.match(key):
            raise InputError(str(path), lineno, f"expected 'KEY value' with an upper-case KEY, got {body!r}")
        if len(toks) < 2:
            raise InputError(str(path), lineno, f"{key}: no value")
        if key in values:
            raise InputError(str(path), lineno, f"{key}: given twice (first on line {lines[key]}); keep one")
        values[key] = " ".join(toks[1:])
        lines[key] = lineno
    return values, lines


def _ecn_map(ctx: _Ctx, key: str, value: str, as_float: bool) -> dict[int, float]:
    toks = value.split()
    try:
        n = int(toks[0])
    except (ValueError, IndexError):
        raise ctx.error(key, f"expected '<n> <rate_bps> <value> ...', got {value!r}") from None
    if n < 1 or len(toks) != 1 + 2 * n:
        raise ctx.error(key, f"declares {n} entries but has {(len(toks) - 1) / 2:g} rate/value pairs")
    out: dict[int, float] = {}
    for i in range(n):
        rate = ctx.number(key, toks[1 + 2 * i], positive=True)
        out[int(rate)] = ctx.number(key, toks[2 + 2 * i], integer=not as_float)
    return out


_ECN = (("KMIN_MAP", "kmin_bytes_per_100g", "kmin_kb"), ("KMAX_MAP", "kmax_bytes_per_100g", "kmax_kb"),
        ("PMAX_MAP", "pmax", "pmax"))


def _ecn_fabric(ctx: _Ctx, values: dict[str, str], link_rates: set[int]) -> dict[str, Any]:
    """KMIN/KMAX/PMAX maps -> fabric keys. Thresholds proportional to the port rate
    with one pmax (run.py's maps) become the per-100G keys; any other map becomes
    ``fabric.ecn_map``, one entry per switch link rate."""
    maps: dict[str, dict[int, float]] = {}
    for key, _, entry in _ECN:
        if key not in values:
            continue
        m = _ecn_map(ctx, key, values[key], entry == "pmax")
        missing = sorted(r for r in link_rates if r not in m)
        if missing:  # third.cc asserts "must set kmin for each link speed"
            raise ctx.error(key, f"no entry for link rate {missing[0]} bps (HPCC needs one per link speed)")
        maps[key] = {r: m[r] for r in link_rates}
    out: dict[str, Any] = {}
    uniform = True
    for key, fkey, entry in _ECN:
        if key not in maps:
            continue
        if entry == "pmax":
            vals = set(maps[key].values())
            uniform &= len(vals) == 1
            out[fkey] = next(iter(vals)) if len(vals) == 1 else None
        else:
            per100 = {round(k * 1000 * 100e9 / r, 6) for r, k in maps[key].items()}  # KB = 1000 B
            ok = len(per100) == 1 and float(next(iter(per100))).is_integer()
            uniform &= ok
            out[fkey] = int(next(iter(per100))) if ok else None
    if uniform:
        return out
    # Per-rate entries; a map left out takes the scenario default at that rate.
    from .fabric import FabricConfig

    d = FabricConfig()
    table = {}
    for r in sorted(link_rates):
        table[f"{r}bps"] = {
            "kmin_kb": maps["KMIN_MAP"][r] if "KMIN_MAP" in maps else d.kmin_bytes_per_100g * r / 100e9 / 1000,
            "kmax_kb": maps["KMAX_MAP"][r] if "KMAX_MAP" in maps else d.kmax_bytes_per_100g * r / 100e9 / 1000,
            "pmax": maps["PMAX_MAP"][r] if "PMAX_MAP" in maps else d.pmax,
        }
    return {"ecn_map": table}


_ECN_KEYS = {"kmin_bytes_per_100g": "KMIN_MAP", "kmax_bytes_per_100g": "KMAX_MAP", "pmax": "PMAX_MAP"}


def _check_fabric(ctx: _Ctx, fabric: dict[str, Any], key_of: dict[str, str]) -> None:
    """Impossible values are reported at the config line that set them."""
    from .fabric import FabricConfig

    try:
        FabricConfig.from_mapping(fabric, source="fabric")
    except InputError as exc:
        fkey = exc.source.split(".", 1)[-1]
        if fkey not in key_of:
            raise
        raise ctx.error(key_of[fkey], exc.message) from None


def _base_dir(ctx: _Ctx, path: Path, topo: str) -> Path:
    if Path(topo).expanduser().is_absolute():
        return Path.cwd()
    for cand in (Path.cwd(), path.parent, path.parent.parent):
        if (cand / topo).is_file():
            return cand.resolve()
    raise ctx.error("TOPOLOGY_FILE", f"file not found: {topo} (tried relative to the current folder, "
                    f"{path.parent} and {path.parent.parent})")


def read_hpcc_config(path: str | Path) -> HpccConfig:
    """Parse an HPCC/SimAI config into a scenario mapping (see the module doc).
    Raises :class:`InputError` naming the file, line and key."""
    from .topology import read_hpcc as read_topology

    path = Path(path)
    values, lines = _parse_lines(path)
    ctx = _Ctx(path, lines)
    for req in ("TOPOLOGY_FILE", "FLOW_FILE"):
        if req not in values:
            raise InputError(str(path), None, f"{req}: missing (an HPCC config names its topology and flow files)")
    base = _base_dir(ctx, path, values["TOPOLOGY_FILE"])

    def resolve(key: str, must_exist: bool) -> Path:
        p = Path(values[key]).expanduser()
        p = p if p.is_absolute() else base / p
        if must_exist and not p.is_file():
            raise ctx.error(key, f"file not found: {p}")
        if not must_exist and not p.parent.is_dir():
            raise ctx.error(key, f"folder {p.parent} does not exist")
        return p

    topo_path = resolve("TOPOLOGY_FILE", True)
    topo = read_topology(topo_path)
    link_rates = {int(r) for r in topo.rate_bps[[topo.is_switch[a] or topo.is_switch[b]
                                                 for a, b in zip(topo.link_a, topo.link_b)]]}

    fabric: dict[str, Any] = {}
    scenario: dict[str, Any] = {
        "name": path.stem,
        "description": f"converted from the HPCC config {path.name}",
        "topology": {"kind": "hpcc", "file": str(topo_path)},
        "fabric": fabric,
        "workload": {"kind": "flows", "file": str(resolve("FLOW_FILE", True))},
    }

    cc = "dcqcn"
    supported = supported_cc()
    if "CC_MODE" in values:
        mode = int(ctx.number("CC_MODE", values["CC_MODE"], integer=True))
        if mode not in CC_MODES:
            raise ctx.error("CC_MODE", f"unknown mode {mode}; HPCC's are {', '.join(f'{k} {v}' for k, v in CC_MODES.items())}")
        if mode not in supported:
            raise ctx.error("CC_MODE", f"{mode} ({CC_MODES[mode]}) is not modelled yet; modelled: "
                            + ", ".join(f"{k} ({CC_MODES[k]})" for k in supported))
        if supported[mode] is not None:
            cc = supported[mode]
            fabric["cc"] = cc
    fields = _fabric_fields()
    per_cc = CC_KEYS.get(cc, {})
    windows = {k: f for k, f in WINDOW_KEYS.items() if f in fields}
    no_effect = [k for k in values if cc != "dcqcn" and k in DCQCN_ONLY + ("RATE_AI", "RATE_HAI", "EWMA_GAIN")
                 and k not in per_cc]

    direct: dict[str, tuple[str, Callable[[str, str], Any]]] = {
        "ALPHA_RESUME_INTERVAL": ("alpha_resume_interval_us", lambda k, v: ctx.number(k, v, positive=True)),
        "RATE_DECREASE_INTERVAL": ("rate_decrease_interval_us", lambda k, v: ctx.number(k, v, positive=True)),
        "RP_TIMER": ("rp_timer_us", lambda k, v: ctx.number(k, v, positive=True)),
        "EWMA_GAIN": ("ewma_gain", lambda k, v: ctx.number(k, v, positive=True)),
        "FAST_RECOVERY_TIMES": ("fast_recovery_times", lambda k, v: ctx.number(k, v, integer=True)),
        "RATE_AI": ("rate_ai_mbps", ctx.rate_mbps),
        "RATE_HAI": ("rate_hai_mbps", ctx.rate_mbps),
        "MIN_RATE": ("min_rate_mbps", ctx.rate_mbps),
        "CLAMP_TARGET_RATE": ("clamp_target_rate", ctx.flag),
        "PACKET_PAYLOAD_SIZE": ("mtu_bytes", lambda k, v: ctx.number(k, v, positive=True, integer=True)),
        "BUFFER_SIZE": ("buffer_bytes", lambda k, v: int(round(ctx.number(k, v, positive=True) * MIB))),
        "L2_ACK_INTERVAL": ("ack_interval", lambda k, v: ctx.number(k, v, positive=True, integer=True)),
        "ENABLE_QCN": ("ecn_enabled", ctx.flag),
    }
    if cc != "dcqcn":  # keys only DCQCN reads, or that this algorithm reads under its own name
        direct = {k: v for k, v in direct.items() if k not in no_effect and k not in per_cc}
    number = {"U_TARGET": lambda k, v: ctx.number(k, v, positive=True),
              "MI_THRESH": lambda k, v: ctx.number(k, v, integer=True),
              "INT_MULTI": lambda k, v: int(ctx.number(k, v, positive=True, integer=True)),
              "FAST_REACT": ctx.flag, "EWMA_GAIN": lambda k, v: ctx.number(k, v, positive=True)}
    for key, fkey in per_cc.items():
        if fkey in fields:
            direct[key] = (fkey, number.get(key, ctx.rate_mbps))
    for key, fkey in windows.items():
        direct[key] = (fkey, ctx.flag)
    for key, (fkey, conv) in direct.items():
        if key in values:
            fabric[fkey] = conv(key, values[key])
    fabric.update(_ecn_fabric(ctx, values, link_rates))

    for table in (FIXED, PENDING):
        for key, (accepted, why) in table.items():
            if key in values and key not in windows and " ".join(values[key].split()) != accepted:
                raise ctx.error(key, f"{values[key]!r}: {why} (accepted: {accepted})")

    if "ERROR_RATE_PER_LINK" in values:
        # third.cc gives links whose topology line says 0 this error rate
        rate = ctx.number("ERROR_RATE_PER_LINK", values["ERROR_RATE_PER_LINK"])
        if rate > 1:
            raise ctx.error("ERROR_RATE_PER_LINK", f"a probability must be <= 1, got {values['ERROR_RATE_PER_LINK']!r}")
        if rate > 0:
            scenario["topology"]["error_rate"] = rate

    if "LINK_DOWN" in values:
        toks = values["LINK_DOWN"].split()
        if len(toks) != 3:
            raise ctx.error("LINK_DOWN", f"expected '<time_us> <node_a> <node_b>', got {values['LINK_DOWN']!r}")
        t_us, a, b = (int(ctx.number("LINK_DOWN", t, integer=True)) for t in toks)
        if t_us > 0:  # third.cc schedules the event only for a time > 0
            joined = {(int(x), int(y)) for x, y in zip(topo.link_a, topo.link_b)}
            if (a, b) not in joined and (b, a) not in joined:
                raise ctx.error("LINK_DOWN", f"no link joins nodes {a} and {b} in {topo_path.name}")
            scenario["events"] = [{"time": LINK_DOWN_BASE_NS + t_us * 1000, "nodes": [a, b], "action": "down"}]

    if "SIMULATOR_STOP_TIME" in values:
        scenario["stop"] = int(round(ctx.number("SIMULATOR_STOP_TIME", values["SIMULATOR_STOP_TIME"], positive=True) * 1e9))

    outputs = HpccOutputs()
    if "FCT_OUTPUT_FILE" in values:
        outputs.fct = resolve("FCT_OUTPUT_FILE", False)
    if "PFC_OUTPUT_FILE" in values:
        outputs.pfc = resolve("PFC_OUTPUT_FILE", False)
    if "QLEN_MON_FILE" in values:
        outputs.qlen = resolve("QLEN_MON_FILE", False)
        start = int(ctx.number("QLEN_MON_START", values.get("QLEN_MON_START", str(QLEN_MON_START_NS)), integer=True))
        end = int(ctx.number("QLEN_MON_END", values.get("QLEN_MON_END", str(QLEN_MON_END_NS)), integer=True))
        if end < start:
            raise ctx.error("QLEN_MON_END", f"{end} is before QLEN_MON_START {start}")
        fabric["qlen_monitor_start_ns"] = start
        fabric["qlen_monitor_end_ns"] = end

    _check_fabric(ctx, fabric, {**{f: k for k, (f, _) in direct.items()}, **_ECN_KEYS, "ecn_map": "KMIN_MAP",
                                 "qlen_monitor_start_ns": "QLEN_MON_START", "qlen_monitor_end_ns": "QLEN_MON_END"})

    handled = set(direct) | set(FIXED) | set(PENDING) | {
        "TOPOLOGY_FILE", "FLOW_FILE", "CC_MODE", "ERROR_RATE_PER_LINK", "LINK_DOWN", "KMIN_MAP", "KMAX_MAP", "PMAX_MAP", "SIMULATOR_STOP_TIME",
        "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "QLEN_MON_FILE", "QLEN_MON_START", "QLEN_MON_END",
    }
    handled -= set(no_effect)
    ignored = [k for k in values if (k in IGNORED and k not in direct) or k in no_effect]
    unknown = [k for k in values if k not in IGNORED and k not in handled and k not in no_effect]
    return HpccConfig(path=path, scenario=scenario, outputs=outputs, base=base, ignored=ignored,
                      unknown=unknown, lines=lines)


MODELLED = (
    "TOPOLOGY_FILE", "FLOW_FILE", "CC_MODE", "ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL", "RP_TIMER",
    "EWMA_GAIN", "FAST_RECOVERY_TIMES", "RATE_AI", "RATE_HAI", "MIN_RATE", "CLAMP_TARGET_RATE",
    "PACKET_PAYLOAD_SIZE", "BUFFER_SIZE", "L2_ACK_INTERVAL", "ENABLE_QCN", "ERROR_RATE_PER_LINK", "LINK_DOWN", "KMIN_MAP", "KMAX_MAP", "PMAX_MAP",
    "SIMULATOR_STOP_TIME", "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "QLEN_MON_FILE", "QLEN_MON_START", "QLEN_MON_END",
)
