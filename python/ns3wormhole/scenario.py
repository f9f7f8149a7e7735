"""Scenario files: one TOML file says what to simulate and how.

A scenario has four tables and a few top-level keys (every key and default is
documented in the README, section "Scenario files")::

    name = "incast8"            # optional: a label for reports
    description = "..."         # optional
    seed = 1                    # -> fabric.seed (ECN marking, ECMP hashes)
    stop = "50ms"               # optional: stop simulated time here (default: run to the end)

    [topology]                  # kind = star | leaf_spine | fat_tree | rail_optimized | hpcc
    kind = "star"
    n_hosts = 9
    rate = "100Gbps"
    delay = "1us"

    [fabric]                    # FabricConfig keys (ns3wormhole.fabric)
    rp_timer_us = 300

    [workload]                  # kind = flows | llm
    kind = "flows"
    pattern = "incast"
    receiver = 8
    bytes = "64MB"

    [wormhole]                  # WormholeConfig keys (ns3wormhole.run)
    theta = 0.05

:func:`load_scenario` reads a file into a :class:`Scenario`; :meth:`Scenario.run`
and :meth:`Scenario.compare` run it.  Every problem is an
:class:`~ns3wormhole.errors.InputError` naming the file, the line where it can
be found, and the key path (``incast.toml:12: fabric.mtu_bytes: ...``).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import limits
from . import topology as topo_mod
from .compare import Comparison, ErrorSummary, by_dag_node, fct_errors, node_of_flow
from .errors import InputError
from .fabric import FabricConfig
from .flows import DEFAULT_PG, FlowSet, incast, permutation, staggered
from .flows import read_hpcc as read_hpcc_flows
from .link_events import LinkEvent, parse_link_events
from .run import KERNELS, ProgressFn, RunResult, WorkloadResult, WormholeConfig, run_flows, run_workload
from .topology import Topology, parse_rate, parse_size, parse_time

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    try:
        import tomli as tomllib  # type: ignore[no-redef]
    except ModuleNotFoundError:
        tomllib = None  # type: ignore[assignment]  # load_scenario says what to install

__all__ = [
    "Scenario",
    "ScenarioComparison",
    "load_scenario",
    "scenario_from_mapping",
    "set_key",
    "run_as_dict",
    "TOPOLOGY_KINDS",
    "WORKLOAD_KINDS",
    "FLOW_PATTERNS",
    "MEMO_NOTE",
]

TABLES = ("topology", "fabric", "workload", "wormhole")
TOP_KEYS = ("name", "description", "seed", "stop", "events")
TOPOLOGY_BUILDERS: dict[str, Callable[..., Topology]] = {
    "star": topo_mod.star,
    "leaf_spine": topo_mod.leaf_spine,
    "fat_tree": topo_mod.fat_tree,
    "rail_optimized": topo_mod.rail_optimized,
}
TOPOLOGY_KINDS = (*TOPOLOGY_BUILDERS, "hpcc")
WORKLOAD_KINDS = ("flows", "llm")
FLOW_PATTERNS = ("incast", "permutation", "staggered")
MEMO_NOTE = "memoization (issue 5) not yet implemented: accepted and ignored"
MEMO_DB_NOTE = "a persistent memo database is not implemented yet: accepted and ignored"

# keys of [workload] per kind (besides "kind")
_FLOW_SOURCES = ("file", "flows", "pattern")
_PATTERN_KEYS = {
    "incast": ("senders", "receiver", "bytes", "start", "pg"),
    "staggered": ("senders", "receiver", "bytes", "gap", "start", "pg"),
    "permutation": ("hosts", "bytes", "seed", "start", "pg"),
}
_INLINE_FLOW_KEYS = ("src", "dst", "bytes", "start", "pg")
_LLM_KEYS = (
    "preset", "model", "parallel", "precision", "aicb", "iterations", "micro_batch", "global_batch",
    "schedule", "a2a_per_layer", "gpus_per_server",
)


# --------------------------------------------------------------------------- error location


class _Ctx:
    """Where the scenario came from: names the file and finds key lines in it."""

    def __init__(self, path: Path | None, text: str | None) -> None:
        self.path = path
        self.file = str(path) if path is not None else "<scenario>"
        self.base = path.parent if path is not None else Path.cwd()
        self._keys = _key_lines(text) if text else {}

    def line_of(self, keypath: str) -> int | None:
        parts = [p for p in re.sub(r"\[\d+\]", "", keypath).split(".") if p]
        while parts:
            line = self._keys.get(tuple(parts))
            if line is not None:
                return line
            parts.pop()
        return None

    def where(self, keypath: str) -> str:
        line = self.line_of(keypath)
        return self.file if line is None else f"{self.file}:{line}"

    def error(self, keypath: str, message: str) -> InputError:
        return InputError(self.file, self.line_of(keypath), f"{keypath}: {message}")

    def rewrap(self, exc: InputError, prefix: str = "") -> InputError:
        """An InputError raised with a key path as its source (``fabric.mtu_bytes``)
        gets the file and line; one that already names a file and line is kept."""
        if exc.line is not None or Path(exc.source).is_file():
            return exc
        key = exc.source
        if prefix and not (key == prefix or key.startswith(prefix + ".") or key.startswith(prefix + "[")):
            key = f"{prefix}.{key}"
        return self.error(key, exc.message)

    def resolve(self, value: Any, keypath: str) -> Path:
        if not isinstance(value, str) or not value:
            raise self.error(keypath, f"expected a file path (string), got {value!r}")
        p = Path(value).expanduser()
        if not p.is_absolute():
            p = self.base / p
        if not p.is_file():
            raise self.error(keypath, f"file not found: {p}")
        return p


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEYLINE = re.compile(r"""^\s*((?:"[^"]*"|'[^']*'|[A-Za-z0-9_\-]+)(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[A-Za-z0-9_\-]+))*)\s*=""")


def _split_key(key: str) -> list[str]:
    return [p.strip().strip("\"'") for p in re.findall(r"""(?:"[^"]*"|'[^']*'|[^.]+)""", key)]


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Best effort: the line of every ``[table]`` header and ``key =`` in a TOML text
    (first occurrence wins), keyed by the full key path."""
    out: dict[tuple[str, ...], int] = {}
    table: list[str] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _HEADER.match(line)
        if m:
            table = _split_key(m.group(1))
            out.setdefault(tuple(table), lineno)
            continue
        m = _KEYLINE.match(line)
        if m:
            out.setdefault(tuple(table + _split_key(m.group(1))), lineno)
    return out


# --------------------------------------------------------------------------- value checks


def _check_table(ctx: _Ctx, value: Any, keypath: str) -> dict:
    if not isinstance(value, Mapping):
        raise ctx.error(keypath, f"expected a table, got {type(value).__name__} {value!r}")
    return dict(value)


def _reject_unknown(ctx: _Ctx, table: Mapping, known: tuple[str, ...] | list[str], prefix: str, what: str = "key") -> None:
    for key in table:
        if key not in known:
            raise ctx.error(f"{prefix}.{key}", f"unknown {what}; known: {', '.join(known)}")


def _int(ctx: _Ctx, value: Any, keypath: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ctx.error(keypath, f"expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ctx.error(keypath, f"must be >= {minimum}, got {value}")
    return value


def _float(ctx: _Ctx, value: Any, keypath: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ctx.error(keypath, f"expected a number, got {value!r}")
    return float(value)


def _bool(ctx: _Ctx, value: Any, keypath: str) -> bool:
    if not isinstance(value, bool):
        raise ctx.error(keypath, f"expected true or false, got {value!r}")
    return value


def _str(ctx: _Ctx, value: Any, keypath: str) -> str:
    if not isinstance(value, str):
        raise ctx.error(keypath, f"expected a string, got {value!r}")
    return value


def _choice(ctx: _Ctx, value: Any, keypath: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ctx.error(keypath, f"must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def _time(ctx: _Ctx, value: Any, keypath: str) -> int:
    try:
        return limits.check_time_ns(parse_time(value, source=keypath), keypath)
    except InputError as exc:
        raise ctx.rewrap(exc) from None


def _size(ctx: _Ctx, value: Any, keypath: str) -> int:
    try:
        n = parse_size(value, source=keypath)
    except InputError as exc:
        raise ctx.rewrap(exc) from None
    if n <= 0:
        raise ctx.error(keypath, f"must be positive, got {value!r}")
    return n


def _host_list(ctx: _Ctx, value: Any, keypath: str) -> list[int]:
    if not isinstance(value, list) or not value:
        raise ctx.error(keypath, f"expected a non-empty list of host ids, got {value!r}")
    for i, v in enumerate(value):
        _int(ctx, v, f"{keypath}[{i}]", minimum=0)
    return list(value)


def _typed_fields(ctx: _Ctx, cls: type, table: Mapping, prefix: str, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Values for dataclass ``cls`` from ``table``, type-checked from the field
    annotations; ``*_ns`` fields also take time strings, ``nvlink_gbps`` rates."""
    known = [f.name for f in dataclasses.fields(cls) if f.name not in skip]
    _reject_unknown(ctx, table, known, prefix)
    types = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    out: dict[str, Any] = {}
    for key, value in table.items():
        kp = f"{prefix}.{key}"
        t = types[key]
        if key.endswith("_ns") and isinstance(value, str):
            out[key] = _time(ctx, value, kp)
        elif key == "nvlink_gbps" and isinstance(value, str):
            try:
                out[key] = parse_rate(value, source=kp) / 1e9
            except InputError as exc:
                raise ctx.rewrap(exc) from None
        elif t.startswith("bool"):
            out[key] = _bool(ctx, value, kp)
        elif t.startswith("int") and key.endswith("_ns"):
            out[key] = _time(ctx, _int(ctx, value, kp), kp)
        elif t.startswith("int"):
            out[key] = _int(ctx, value, kp)
            if abs(out[key]) > limits.MAX_COUNT:
                raise ctx.error(kp, f"{value} is too large (at most {limits.MAX_COUNT})")
        elif t.startswith("float"):
            try:
                out[key] = limits.check_finite(_float(ctx, value, kp), kp, hi=limits.MAX_FACTOR)
            except InputError as exc:
                raise ctx.rewrap(exc) from None
        elif t.startswith("str"):
            out[key] = _str(ctx, value, kp)
        else:  # pragma: no cover - no such fields today
            out[key] = value
    return out


# --------------------------------------------------------------------------- the scenario


@dataclass
class Scenario:
    """A loaded scenario: topology, fabric, workload and kernel knobs, ready to run.

    ``workload_kind`` is ``"flows"`` (``flows`` is set) or ``"llm"`` (``dag`` is set;
    ``llm`` is the :class:`~ns3wormhole.workload.Workload` unless it came from an AICB
    file).  ``data`` is the scenario's mapping (file paths made absolute), which
    :func:`scenario_from_mapping` turns back into a ``Scenario`` (sweeps change keys in it).
    """

    topology: Topology
    fabric: FabricConfig
    wormhole: WormholeConfig
    workload_kind: str
    flows: FlowSet | None = None
    dag: Any = None
    llm: Any = None
    iterations: int = 1
    stop_ns: int = 0
    name: str = ""
    description: str = ""
    path: Path | None = None
    memo: bool = True
    memo_db: str | None = None
    link_events: tuple[LinkEvent, ...] = ()  # [[events]]: link failures and recoveries
    warnings: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- facts

    @property
    def label(self) -> str:
        return self.name or (self.path.stem if self.path else "scenario")

    @property
    def num_flows(self) -> int:
        """Flows in the scenario (for LLM workloads: network flows of the DAG)."""
        if self.flows is not None:
            return len(self.flows)
        return int(self.dag.num_flows) if self.dag is not None else 0

    def summary(self) -> str:
        """One line: what runs on what."""
        if self.workload_kind == "flows":
            assert self.flows is not None
            what = f"{len(self.flows)} flows ({_fmt_bytes(self.flows.total_bytes)})"
        else:
            if self.llm is not None:
                m, par = self.llm.model, self.llm.parallel
                desc = f"{m.name} ({m.num_params / 1e9:.2g}B params), {par.label()} on {par.world} GPUs"
            else:
                desc = f"AICB workload {Path(str(self.dag.meta.get('workload', ''))).name}, {self.dag.meta.get('parallel', '')}"
            what = f"{desc}, {self.iterations} iteration{'s' if self.iterations != 1 else ''}, {self.num_flows} flows"
        return f"{self.label}: {what} on {self.topology.name or 'topology'}"

    def with_fabric(self, **changes: Any) -> "Scenario":
        """A copy with some fabric parameters changed (``rate_sample_interval_ns=10_000``)."""
        mapping = {**self.fabric.as_dict(), **changes}
        return dataclasses.replace(self, fabric=FabricConfig.from_mapping(mapping))

    # ---------------------------------------------------------------- running

    def run(self, kernel: str = "wormhole", progress: ProgressFn | None = None) -> RunResult | WorkloadResult:
        """Run under ``kernel`` ("baseline" or "wormhole"): a :class:`RunResult` for
        flow workloads, a :class:`WorkloadResult` for LLM workloads. Ctrl-C stops the
        simulation at the next watchdog tick; the result then has ``interrupted``."""
        if kernel not in KERNELS:
            raise InputError("kernel", None, f"must be one of {', '.join(KERNELS)}, got {kernel!r}")
        if self.workload_kind == "flows":
            return run_flows(self.topology, self.flows, self.fabric, kernel, self.wormhole, self.stop_ns, progress,
                             link_events=self.link_events)
        return run_workload(self.topology, self.dag, self.fabric, kernel, self.wormhole, self.stop_ns, progress,
                            link_events=self.link_events)

    def compare(
        self,
        progress: ProgressFn | None = None,
        on_start: Callable[[str], None] | None = None,
    ) -> "ScenarioComparison":
        """Run under the baseline kernel, then under Wormhole (same fabric and seed).
        ``on_start(kernel)`` is called before each run. If the baseline run is
        interrupted (Ctrl-C), the Wormhole run is skipped (``wormhole is None``)."""
        results: dict[str, Any] = {}
        for kernel in KERNELS:
            if on_start:
                on_start(kernel)
            results[kernel] = self.run(kernel, progress)
            if _network(results[kernel]).interrupted:
                break
        return ScenarioComparison.of(self, results.get("baseline"), results.get("wormhole"))


def _network(result: RunResult | WorkloadResult) -> RunResult:
    return result.network if isinstance(result, WorkloadResult) else result


def _fmt_bytes(n: float) -> str:
    for unit, mult in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= mult:
            return f"{n / mult:.4g} {unit}"
    return f"{int(n)} B"


# --------------------------------------------------------------------------- results as dicts


def _flow_records(run: RunResult, node_of: dict[int, int] | None = None) -> list[dict]:
    f = run.flows
    out = []
    for i in range(len(f)):
        done = int(f["finish_ns"][i]) >= 0
        rec = {
            "id": int(f["id"][i]),
            "src": int(f["src"][i]),
            "dst": int(f["dst"][i]),
            "bytes": int(f["bytes"][i]),
            "start_ns": int(f["start_ns"][i]),
            "finish_ns": int(f["finish_ns"][i]) if done else None,
            "fct_ns": int(f["fct_ns"][i]) if done else None,
            "ideal_fct_ns": float(f["ideal_fct_ns"][i]) if f["ideal_fct_ns"][i] > 0 else None,
        }
        if node_of is not None:
            rec["dag_node"] = node_of.get(rec["id"])
        out.append(rec)
    return out


def run_as_dict(result: RunResult | WorkloadResult, scenario: Scenario | None = None) -> dict:
    """The JSON of ``ns3-wormhole run`` (field names fixed, only ever extended)."""
    net = _network(result)
    is_wl = isinstance(result, WorkloadResult)
    done = net.completed
    out: dict[str, Any] = {}
    if scenario is not None:
        out["scenario"] = str(scenario.path) if scenario.path else scenario.label
        out["name"] = scenario.label
    out.update(
        kernel=net.kernel,
        wall_s=net.wall_s,
        setup_s=net.setup_s,
        events=net.events,
        sim_time_s=net.sim_time_ns / 1e9,
        interrupted=net.interrupted,
        flows_total=scenario.num_flows if (is_wl and scenario is not None) else len(net.flows),
        flows_completed=int(done.sum()),
        makespan_ns=net.makespan_ns,
        iteration_times_ns=[int(x) for x in result.iteration_times_ns] if is_wl else [],
        finished=bool(result.finished) if is_wl else bool(done.all()),
        stats=plain_stats(net.stats),
        counters={k: int(v) for k, v in net.counters.items()},
        stalled_flows=[int(x) for x in net.stalled],
        flows=_flow_records(net, node_of_flow(result) if is_wl else None),
    )
    return out


# --------------------------------------------------------------------------- comparison


@dataclass
class ScenarioComparison(Comparison):
    """:class:`~ns3wormhole.compare.Comparison` of a scenario's two runs; for LLM
    workloads also the per-iteration times and flows matched by DAG node."""

    baseline_workload: WorkloadResult | None = None
    wormhole_workload: WorkloadResult | None = None
    scenario: Scenario | None = None

    @classmethod
    def of(cls, scenario: Scenario, base: Any, worm: Any) -> "ScenarioComparison":
        if isinstance(base, WorkloadResult):
            return cls(
                baseline=by_dag_node(base), wormhole=by_dag_node(worm) if worm is not None else None,
                baseline_workload=base, wormhole_workload=worm, scenario=scenario,
            )
        return cls(baseline=base, wormhole=worm, scenario=scenario)

    @property
    def interrupted(self) -> bool:
        return self.wormhole is None or self.baseline.interrupted or self.wormhole.interrupted

    @property
    def complete(self) -> bool:
        return self.wormhole is not None

    def errors(self) -> np.ndarray:
        """Per-flow |FCT_w - FCT_b| / FCT_b (flows completed under both kernels)."""
        return fct_errors(self.baseline, self.wormhole) if self.wormhole is not None else np.zeros(0)

    @property
    def fct_error(self) -> ErrorSummary:
        return ErrorSummary.of(self.errors())

    @property
    def iteration_time_error(self) -> float | None:
        """Max over iterations of |T_w - T_b| / T_b (None for flow workloads)."""
        if self.baseline_workload is None:
            return None
        if self.wormhole_workload is None:
            return None
        b = self.baseline_workload.iteration_times_ns.astype(float)
        w = self.wormhole_workload.iteration_times_ns.astype(float)
        n = min(b.size, w.size)
        ok = (b[:n] > 0) & (w[:n] >= 0)
        if not ok.any():
            return None
        return float(np.max(np.abs(w[:n][ok] - b[:n][ok]) / b[:n][ok]))

    def matched_flows(self) -> list[dict]:
        """Per flow: id (DAG node for LLM workloads), src, dst, bytes and both FCTs."""
        b = self.baseline.flows
        w = {} if self.wormhole is None else {
            int(i): int(f) for i, f in zip(self.wormhole.flows["id"], self.wormhole.flows["fct_ns"])
        }
        out = []
        for i in range(len(b)):
            fid = int(b["id"][i])
            fb = int(b["fct_ns"][i]) if int(b["finish_ns"][i]) >= 0 else None
            fw = w.get(fid)
            fw = fw if fw is not None and fw > 0 else None
            err = abs(fw - fb) / fb if fb and fw else None
            ideal = float(b["ideal_fct_ns"][i])
            out.append({"id": fid, "src": int(b["src"][i]), "dst": int(b["dst"][i]), "bytes": int(b["bytes"][i]),
                        "start_ns": int(b["start_ns"][i]), "ideal_fct_ns": ideal if ideal > 0 else None,
                        "fct_baseline_ns": fb, "fct_wormhole_ns": fw, "error": err})
        return out

    def as_dict(self) -> dict:
        """The JSON of ``ns3-wormhole compare`` (field names fixed, only ever extended)."""
        b, w = self.baseline, self.wormhole
        sc = self.scenario
        out: dict[str, Any] = {}
        if sc is not None:
            out["scenario"] = str(sc.path) if sc.path else sc.label
            out["name"] = sc.label
        whole = w is not None and not self.interrupted  # ratios of partial runs mean nothing
        out.update(
            speedup=self.speedup if whole else None,
            event_ratio=self.event_ratio if whole else None,
            fct_error=self.fct_error.as_dict() if self.errors().size else dict.fromkeys(("mean", "p50", "p99", "max")),
            makespan_error=self.makespan_error if whole and b.makespan_ns > 0 else None,
            iteration_time_error=self.iteration_time_error,
            flows=sc.num_flows if sc is not None else len(b.flows),
            flows_compared=int(self.errors().size),
            unfinished=self.unfinished if w is not None else None,
            interrupted=self.interrupted,
            baseline=_kernel_dict(b, self.baseline_workload, stats=False),
            wormhole=_kernel_dict(w, self.wormhole_workload, stats=True) if w is not None else None,
            per_flow=self.matched_flows(),
        )
        return out


def plain_stats(stats: dict) -> dict:
    """Kernel statistics as JSON values: counters as ints, nested tables
    (``no_skip``, ``memo_miss_reasons``, ...) kept as dicts and lists."""

    def plain(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, float) or (hasattr(v, "dtype") and v.dtype.kind == "f"):
            return float(v)
        return int(v)

    return {k: plain(v) for k, v in stats.items()}


def _kernel_dict(r: RunResult, wl: WorkloadResult | None, stats: bool) -> dict:
    d: dict[str, Any] = {
        "wall_s": r.wall_s,
        "events": r.events,
        "sim_time_s": r.sim_time_ns / 1e9,
        "makespan_ns": r.makespan_ns,
        "flows_completed": int(r.completed.sum()),
        "interrupted": r.interrupted,
        "iteration_times_ns": [int(x) for x in wl.iteration_times_ns] if wl is not None else [],
    }
    if stats:
        d["stats"] = plain_stats(r.stats)
    d["counters"] = {k: int(v) for k, v in r.counters.items()}
    return d


# --------------------------------------------------------------------------- loading


def load_scenario(path: str | Path, overrides: Mapping[str, Any] | None = None) -> Scenario:
    """Read a TOML scenario file. ``overrides`` maps key paths to values
    (``{"wormhole.theta": 0.03, "fabric.rp_timer_us": 900}``), applied before
    checking, as a sweep does. Raises :class:`InputError` (file, line, key) on
    any problem, including TOML syntax errors."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(p), None, "scenario file not found") from None
    except IsADirectoryError:
        raise InputError(str(p), None, "is a directory, not a scenario file") from None
    except OSError as exc:
        raise InputError(str(p), None, f"cannot read scenario file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(p), None, f"not a UTF-8 text file ({exc.reason})") from None
    data = parse_toml(text, str(p))
    ctx = _Ctx(p, text)
    if overrides is not None and not isinstance(overrides, Mapping):
        raise TypeError(f"overrides must be a mapping of key paths to values, got {type(overrides).__name__} {overrides!r}")
    for key, value in (overrides or {}).items():
        if not isinstance(key, str):
            raise TypeError(f"overrides: key paths are strings like 'fabric.mtu_bytes', got {key!r}")
        set_key(data, key, value, ctx)
    return _guarded_build(data, ctx)


def _guarded_build(data: dict, ctx: _Ctx) -> Scenario:
    """What the checks missed still ends as a refusal naming the file, never as an
    internal error: a value Python or numpy cannot hold is bad input."""
    try:
        return _build(data, ctx)
    except (OverflowError, MemoryError, RecursionError) as exc:
        kind = {OverflowError: "a number too large", MemoryError: "more memory than there is",
                RecursionError: "values nested too deeply"}[type(exc)]
        raise InputError(ctx.file, None, f"cannot be represented: {kind} ({type(exc).__name__}: {exc})") from None


def scenario_from_mapping(data: Mapping[str, Any], base_dir: str | Path | None = None, source: str = "<scenario>") -> Scenario:
    """Build a :class:`Scenario` from an already-parsed mapping (relative file paths
    resolve against ``base_dir``; errors name ``source``)."""
    ctx = _Ctx(None, None)
    ctx.file = source
    ctx.base = Path(base_dir) if base_dir is not None else Path.cwd()
    try:
        copied = _deepcopy(data)
    except RecursionError:
        raise InputError(source, None, "values nested too deeply") from None
    return _guarded_build(copied, ctx)


def parse_toml(text: str, source: str) -> dict:
    """TOML text -> mapping; syntax errors become InputError with the line."""
    if tomllib is None:  # pragma: no cover - Python 3.10 without tomli
        raise InputError(source, None, "reading TOML on Python 3.10 needs the tomli package: pip install tomli")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(source, exc) from None
    except RecursionError:
        raise InputError(source, None, "TOML nested too deeply (arrays or tables inside one another)") from None


def _toml_error(source: str, exc: Exception) -> InputError:
    msg = str(exc)
    m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
    if m:
        return InputError(source, int(m.group(1)), f"TOML syntax error: {msg[: m.start()].strip()} (column {m.group(2)})")
    return InputError(source, None, f"TOML syntax error: {msg}")


def _deepcopy(data: Any) -> Any:
    if isinstance(data, Mapping):
        return {k: _deepcopy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_deepcopy(v) for v in data]
    return data


def set_key(data: dict, keypath: str, value: Any, ctx: _Ctx | None = None) -> None:
    """Set ``data[a][b][c] = value`` for ``keypath = "a.b.c"``, creating tables.
    The first part must be a scenario table or top-level key."""
    parts = keypath.split(".")
    if not all(parts) or (parts[0] not in TABLES and parts[0] not in TOP_KEYS) or (
        parts[0] in TOP_KEYS and len(parts) > 1
    ):
        where = ctx.file if ctx else "override"
        raise InputError(where, None, f"{keypath}: not a scenario key path (starts with one of "
                         f"{', '.join(TABLES + TOP_KEYS)})")
    cur = data
    for i, part in enumerate(parts[:-1]):
        nxt = cur.setdefault(part, {})
        if not isinstance(nxt, dict):
            where = ctx.file if ctx else "override"
            raise InputError(where, None, f"{keypath}: {'.'.join(parts[: i + 1])} is not a table")
        cur = nxt
    cur[parts[-1]] = value


def _build(data: dict, ctx: _Ctx) -> Scenario:
    for key in data:
        if key not in TOP_KEYS and key not in TABLES:
            raise InputError(ctx.file, ctx.line_of(key),
                             f"{key}: unknown top-level key; known: {', '.join(TOP_KEYS + TABLES)}")
    warns: list[str] = []
    name = _str(ctx, data.get("name", ""), "name")
    description = _str(ctx, data.get("description", ""), "description")
    stop_ns = _time(ctx, data["stop"], "stop") if "stop" in data else 0

    # [topology]
    if "topology" not in data:
        raise InputError(ctx.file, None, "topology: missing [topology] table")
    topo = _build_topology(ctx, _check_table(ctx, data["topology"], "topology"), data)
    try:
        link_events = parse_link_events(data["events"], topo) if "events" in data else ()
    except InputError as exc:
        raise ctx.rewrap(exc) from None

    # [fabric] (+ top-level seed)
    fab_tbl = _check_table(ctx, data.get("fabric", {}), "fabric")
    seed = None
    if "seed" in data:
        seed = _int(ctx, data["seed"], "seed", minimum=0)
        if seed > 2**32 - 1:
            raise ctx.error("seed", f"{seed} is out of range: must be <= {2**32 - 1}")
        if "seed" in fab_tbl:
            raise ctx.error("seed", "given twice: as top-level seed and as fabric.seed; keep one")
        fab_tbl["seed"] = seed
    try:
        fabric = FabricConfig.from_mapping(fab_tbl, source="fabric")
        fabric.check_topology(topo, source="fabric")
    except InputError as exc:
        raise ctx.rewrap(exc, "fabric") from None

    # [wormhole]
    wh_tbl = _check_table(ctx, data.get("wormhole", {}), "wormhole")
    wh_fields = {f.name for f in dataclasses.fields(WormholeConfig)}
    memo, memo_db = True, None
    if "memo" not in wh_fields and "memo" in wh_tbl:
        memo = _bool(ctx, wh_tbl.pop("memo"), "wormhole.memo")
        if memo:
            warns.append(f"{ctx.where('wormhole.memo')}: wormhole.memo: {MEMO_NOTE}")
    if "memo_db" not in wh_fields and "memo_db" in wh_tbl:
        memo_db = _str(ctx, wh_tbl.pop("memo_db"), "wormhole.memo_db")
        note = MEMO_NOTE if "memo" not in wh_fields else MEMO_DB_NOTE
        warns.append(f"{ctx.where('wormhole.memo_db')}: wormhole.memo_db: {note}")
    if "memo_db" in wh_fields and isinstance(wh_tbl.get("memo_db"), str) and wh_tbl["memo_db"]:
        db = Path(wh_tbl["memo_db"]).expanduser()
        wh_tbl["memo_db"] = str(db if db.is_absolute() else ctx.base / db)  # relative to the scenario file
        data["wormhole"]["memo_db"] = wh_tbl["memo_db"]
    try:
        wormhole = WormholeConfig.from_mapping(wh_tbl, source="wormhole")
    except InputError as exc:
        raise ctx.rewrap(exc, "wormhole") from None
    if "memo" in wh_fields:
        memo = bool(getattr(wormhole, "memo"))
    if "memo_db" in wh_fields:
        memo_db = getattr(wormhole, "memo_db")
    if memo and memo_db:
        from .memo import MemoError, check_memo_path

        try:
            check_memo_path(memo_db)  # before anything runs, not after the baseline run of a compare
        except MemoError as exc:
            raise ctx.error("wormhole.memo_db", str(exc)) from None

    # [workload]
    if "workload" not in data:
        raise InputError(ctx.file, None, "workload: missing [workload] table")
    wl = _check_table(ctx, data["workload"], "workload")
    kind = _choice(ctx, wl.pop("kind", None), "workload.kind", WORKLOAD_KINDS)
    sc = Scenario(
        topology=topo, fabric=fabric, wormhole=wormhole, workload_kind=kind, stop_ns=stop_ns, name=name,
        description=description, path=ctx.path, memo=memo, memo_db=memo_db, warnings=warns,
        link_events=link_events,
    )
    if kind == "flows":
        sc.flows = _build_flows(ctx, wl, topo, fabric.seed)
    else:
        sc.dag, sc.llm, sc.iterations = _build_llm(ctx, wl, topo)
    _check_round_trip(ctx, sc)
    sc.data = _deepcopy(data)
    for w in warns:
        warnings.warn(w, UserWarning, stacklevel=3)
    return sc


def _check_round_trip(ctx: _Ctx, sc: Scenario) -> None:
    """A retransmission timeout below a flow's base round trip is physically meaningless."""
    if sc.flows is not None:
        src, dst = sc.flows.src, sc.flows.dst
    else:
        flow = sc.dag.op == 1
        src, dst = sc.dag.src[flow], sc.dag.dst[flow]
    fab = sc.fabric
    try:
        limits.check_retransmit_timeout(round(fab.retransmit_timeout_us * 1000), fab.mtu_bytes + fab.header_bytes,
                                        src, dst, sc.topology, "fabric.retransmit_timeout_us")
    except InputError as exc:
        raise ctx.rewrap(exc) from None


def _build_topology(ctx: _Ctx, tbl: dict, data: dict) -> Topology:
    kind = tbl.pop("kind", None)
    if kind is None:
        raise ctx.error("topology.kind", f"missing; one of {', '.join(TOPOLOGY_KINDS)}")
    _choice(ctx, kind, "topology.kind", TOPOLOGY_KINDS)
    # Builders: one loss probability for every link; an HPCC file carries it per link,
    # and error_rate then fills the links whose file says 0 (HPCC ERROR_RATE_PER_LINK).
    error_rate = tbl.pop("error_rate", 0.0)
    if isinstance(error_rate, bool) or not isinstance(error_rate, (int, float)) or not 0 <= error_rate <= 1:
        raise ctx.error("topology.error_rate", f"expected a probability in [0, 1], got {error_rate!r}")
    if kind == "hpcc":
        _reject_unknown(ctx, tbl, ("file", "error_rate"), "topology", "key for kind 'hpcc'")
        if "file" not in tbl:
            raise ctx.error("topology.file", "missing: kind 'hpcc' needs file = path of an HPCC topology file")
        path = ctx.resolve(tbl["file"], "topology.file")
        data["topology"]["file"] = str(path)
        topo = topo_mod.read_hpcc(path)
        topo.error_rate[topo.error_rate == 0] = float(error_rate)
        return topo
    builder = TOPOLOGY_BUILDERS[kind]
    params = inspect.signature(builder).parameters
    _reject_unknown(ctx, tbl, [*params, "error_rate"], "topology", f"parameter for kind {kind!r}")
    for pname, param in params.items():
        if param.default is inspect.Parameter.empty and pname not in tbl:
            raise ctx.error(f"topology.{pname}", f"missing: kind {kind!r} needs {pname}")
    try:
        topo = builder(**tbl)
    except InputError as exc:
        raise ctx.rewrap(exc, "topology") from None
    topo.error_rate[:] = float(error_rate)
    return topo


def _build_flows(ctx: _Ctx, wl: dict, topo: Topology, seed: int) -> FlowSet:
    given = [k for k in _FLOW_SOURCES if k in wl]
    if len(given) != 1:
        what = "none" if not given else " and ".join(given)
        raise ctx.error("workload", f"kind 'flows' needs exactly one of file, flows or pattern (got {what})")
    src = given[0]
    try:
        if src == "file":
            _reject_unknown(ctx, wl, ("file",), "workload", "key with file")
            path = ctx.resolve(wl["file"], "workload.file")
            flows = read_hpcc_flows(path)
        elif src == "flows":
            flows = _inline_flows(ctx, wl)
        else:
            flows = _pattern_flows(ctx, wl, topo, seed)
        flows.validate(topo)
    except InputError as exc:
        raise ctx.rewrap(exc, "workload") from None
    if len(flows) == 0:
        raise ctx.error(f"workload.{src}", "no flows")

    def where(i: int, message: str) -> InputError:
        if src == "file":
            return flows.error(i, message)
        if src == "flows":
            return ctx.error(f"workload.flows[{i}]", message)
        return ctx.error("workload.bytes", f"flow {i}: {message}")

    limits.check_flows(flows.src, flows.dst, flows.bytes, flows.start_ns, topo, where)
    return flows


def _inline_flows(ctx: _Ctx, wl: dict) -> FlowSet:
    _reject_unknown(ctx, wl, ("flows",), "workload", "key with inline flows")
    items = wl["flows"]
    if not isinstance(items, list) or not items:
        raise ctx.error("workload.flows", "expected a non-empty list of tables {src=, dst=, bytes=, start=}")
    src, dst, size, start, pg = [], [], [], [], []
    for i, f in enumerate(items):
        kp = f"workload.flows[{i}]"
        if not isinstance(f, Mapping):
            raise ctx.error(kp, f"expected a table {{src=, dst=, bytes=, start=}}, got {f!r}")
        _reject_unknown(ctx, f, _INLINE_FLOW_KEYS, kp)
        for req in ("src", "dst", "bytes"):
            if req not in f:
                raise ctx.error(f"{kp}.{req}", "missing")
        src.append(_int(ctx, f["src"], f"{kp}.src", 0))
        dst.append(_int(ctx, f["dst"], f"{kp}.dst", 0))
        size.append(_size(ctx, f["bytes"], f"{kp}.bytes"))
        start.append(_time(ctx, f.get("start", 0), f"{kp}.start"))
        pg.append(_int(ctx, f.get("pg", DEFAULT_PG), f"{kp}.pg", 0))
    return FlowSet.from_lists(src, dst, size, start, pg, source="workload.flows")


def _pattern_flows(ctx: _Ctx, wl: dict, topo: Topology, seed: int) -> FlowSet:
    pattern = _choice(ctx, wl.pop("pattern"), "workload.pattern", FLOW_PATTERNS)
    _reject_unknown(ctx, wl, _PATTERN_KEYS[pattern], "workload", f"key for pattern {pattern!r}")
    hosts = [int(h) for h in topo.hosts()]
    if "bytes" not in wl:
        raise ctx.error("workload.bytes", f"missing: pattern {pattern!r} needs bytes (e.g. \"16MB\")")
    size = _size(ctx, wl["bytes"], "workload.bytes")
    start = _time(ctx, wl.get("start", 0), "workload.start")
    pg = _int(ctx, wl.get("pg", DEFAULT_PG), "workload.pg", 0)
    if pattern == "permutation":
        h = _host_list(ctx, wl["hosts"], "workload.hosts") if "hosts" in wl else hosts
        s = _int(ctx, wl.get("seed", seed), "workload.seed", 0)
        return permutation(h, size, seed=s, start_ns=start, pg=pg)
    receiver = _int(ctx, wl.get("receiver", hosts[-1] if hosts else 0), "workload.receiver", 0)
    senders = _host_list(ctx, wl["senders"], "workload.senders") if "senders" in wl else [h for h in hosts if h != receiver]
    if pattern == "incast":
        return incast(senders, receiver, size, start_ns=start, pg=pg)
    if "gap" not in wl:
        raise ctx.error("workload.gap", "missing: pattern 'staggered' needs gap (e.g. \"50us\")")
    gap = _time(ctx, wl["gap"], "workload.gap")
    return staggered(senders, receiver, size, gap, start_ns=start, pg=pg)


_SPEC_KEY = re.compile(r"^(model|parallel|precision|compute|workload)\.(\w+)")


def _build_llm(ctx: _Ctx, wl: dict, topo: Topology):
    from .workload import ComputeSpec, ModelSpec, ParallelSpec, Precision, Workload, aicb_dag, build_dag, preset, preset_names
    from .workload.aicb import read_aicb

    compute_keys = tuple(f.name for f in dataclasses.fields(ComputeSpec))
    _reject_unknown(ctx, wl, _LLM_KEYS + compute_keys, "workload", "key for kind 'llm'")
    iterations = _int(ctx, wl.get("iterations", 1), "workload.iterations", 1)
    schedule = _choice(ctx, wl.get("schedule", "1f1b"), "workload.schedule", ("1f1b", "gpipe"))
    compute_tbl = {k: wl[k] for k in compute_keys if k in wl}

    def spec_error(exc: ValueError) -> InputError:
        msg = str(exc)
        m = _SPEC_KEY.match(msg)
        if m is None:
            return ctx.error("workload", msg)
        # compute keys live directly in [workload]; the others in their sub-tables
        key = {"workload": m.group(0), "compute": f"workload.{m.group(2)}"}.get(m.group(1), f"workload.{m.group(0)}")
        return ctx.error(key, msg.split(" ", 1)[1] if msg.startswith(m.group(0) + " ") else msg)

    try:
        compute = ComputeSpec(**_typed_fields(ctx, ComputeSpec, compute_tbl, "workload"))
        if "aicb" in wl:
            for k in ("preset", "model", "parallel", "precision", "micro_batch", "global_batch", "a2a_per_layer"):
                if k in wl:
                    raise ctx.error(f"workload.{k}", "not used with aicb (the AICB file fixes the model and layout)")
            path = ctx.resolve(wl["aicb"], "workload.aicb")
            gps = _int(ctx, wl.get("gpus_per_server", topo.gpus_per_server or 8), "workload.gpus_per_server", 1)
            job = read_aicb(path)
            _check_tp_fits(ctx, job.tp, gps, "workload.gpus_per_server")
            limits.check_dag_size(_aicb_dag_estimate(job, iterations), "workload.iterations",
                                  f"{iterations} iteration(s) of {job.all_gpus} GPUs x {job.num_microbatches} "
                                  f"micro-batches x {len(job.rows)} layers")
            dag = aicb_dag(job, iterations=iterations, compute=compute, gpus_per_server=gps, schedule=schedule)
            spec = None
        else:
            if "gpus_per_server" in wl:
                raise ctx.error("workload.gpus_per_server", "set it in [workload.parallel] (or use it with aicb)")
            model_tbl = _check_table(ctx, wl.get("model", {}), "workload.model")
            par_tbl = _check_table(ctx, wl.get("parallel", {}), "workload.parallel")
            prec_tbl = _check_table(ctx, wl.get("precision", {}), "workload.precision")
            model_kw = _typed_fields(ctx, ModelSpec, model_tbl, "workload.model")
            par_kw = _typed_fields(ctx, ParallelSpec, par_tbl, "workload.parallel")
            prec_kw = _typed_fields(ctx, Precision, prec_tbl, "workload.precision")
            if "gpus_per_server" not in par_kw and topo.gpus_per_server:
                par_kw["gpus_per_server"] = int(topo.gpus_per_server)
            wl_kw = _typed_fields(
                ctx, Workload, {k: wl[k] for k in ("micro_batch", "global_batch", "a2a_per_layer") if k in wl}, "workload",
            )
            if "preset" in wl:
                name = _str(ctx, wl["preset"], "workload.preset")
                if name not in preset_names():
                    raise ctx.error("workload.preset", f"unknown preset {name!r}; known: {', '.join(preset_names())}")
                base = preset(name)
                model = dataclasses.replace(base.model, **model_kw)
                par = dataclasses.replace(base.parallel, **par_kw)
                prec = dataclasses.replace(base.precision, **prec_kw)
                spec = dataclasses.replace(base, model=model, parallel=par, precision=prec, compute=compute,
                                           iterations=iterations, **wl_kw)
            else:
                if not model_tbl:
                    raise ctx.error("workload.model", "missing: kind 'llm' needs preset = \"...\", "
                                    f"a [workload.model] table or aicb = file (presets: {', '.join(preset_names())})")
                for req in ("num_layers", "hidden", "heads"):
                    if req not in model_kw:
                        raise ctx.error(f"workload.model.{req}", "missing")
                model_kw.setdefault("name", "custom")
                if not par_tbl:
                    raise ctx.error("workload.parallel", "missing: give tp, dp, pp (and ep for MoE) in [workload.parallel]")
                spec = Workload(model=ModelSpec(**model_kw), parallel=ParallelSpec(**par_kw),
                                precision=Precision(**prec_kw), compute=compute, iterations=iterations,
                                name=str(model_kw["name"]), **wl_kw)
            _check_workload(ctx, spec, topo)
            dag = build_dag(spec, schedule=schedule)
    except InputError as exc:
        raise ctx.rewrap(exc, "workload") from None
    except ValueError as exc:
        raise spec_error(exc) from None
    try:
        limits.check_dag_horizon(dag, topo, "workload")
    except InputError as exc:
        raise ctx.rewrap(exc) from None
    hosts = set(int(h) for h in topo.hosts())
    flow = dag.op == 1
    used = set(np.unique(dag.src[flow]).tolist()) | set(np.unique(dag.dst[flow]).tolist())
    missing = sorted(used - hosts)
    if missing:
        raise ctx.error(
            "workload",
            f"the training job needs GPUs {missing[:5]}{'...' if len(missing) > 5 else ''} but topology "
            f"{topo.name or ''} has {len(hosts)} hosts; GPU g runs on host g",
        )
    return dag, spec, iterations


def _check_tp_fits(ctx: _Ctx, tp: int, gpus_per_server: int, key: str) -> None:
    if tp > gpus_per_server:
        raise ctx.error(key, f"tensor parallelism tp = {tp} is wider than a server ({gpus_per_server} GPUs): the model "
                        "charges TP all-reduces at NVLink speed, which would be wrong across servers")


def _dag_estimate(spec: Any) -> float:
    """An upper estimate of the DAG's node count (2-6x the real one for the presets), from
    the shape alone: per GPU and micro-batch a forward and a backward per layer (MoE: also
    the all-to-all steps), then the gradient rings."""
    par, m = spec.parallel, spec.model
    lps = -(-m.num_layers // par.pp)
    k = (2 + 2 * spec.a2a_per_layer * par.ep) if m.is_moe else 1
    per_gpu = float(spec.num_microbatches) * 2 * (lps * k + 2) + 2 * (par.dp + (par.edp if m.is_moe else 0)) + 4
    return float(spec.iterations) * par.world * per_gpu


def _aicb_dag_estimate(job: Any, iterations: int) -> float:
    per_gpu = float(job.num_microbatches) * 2 * (3 * len(job.rows) + 2) + 2 * (job.dp + job.ep) + 4
    return float(iterations) * job.all_gpus * per_gpu


def _check_workload(ctx: _Ctx, spec: Any, topo: Topology) -> None:
    """Before the DAG is built: its size, and that every compute time and transfer the
    job implies can be represented (a time within the horizon)."""
    par = spec.parallel
    _check_tp_fits(ctx, par.tp, par.gpus_per_server, "workload.parallel.tp")
    limits.check_dag_size(_dag_estimate(spec), "workload.iterations",
                          f"{spec.iterations} iteration(s) of {par.world} GPUs x {spec.num_microbatches} "
                          f"micro-batches x {spec.model.num_layers} layers")
    c = spec.compute
    src = "workload.effective_tflops"
    times = {
        "workload.layer_fwd_ns" if c.layer_fwd_ns is not None else src: spec.layer_fwd_ns,
        "workload.expert_fwd_ns" if c.expert_fwd_ns is not None else src: spec.expert_fwd_ns,
        "workload.head_fwd_ns" if c.head_fwd_ns is not None else src: spec.head_fwd_ns,
    }
    rate = float(topo.rate_bps.max()) if topo.num_links else 1.0
    try:
        for key, fn in times.items():
            fwd = fn()
            limits.check_time_ns(fwd, key, "a forward pass")
            limits.check_time_ns(spec.bwd_ns(fwd), "workload.bwd_factor", "a backward pass")
        for stage in range(par.pp):
            nbytes = spec.dense_grad_bytes(stage) + spec.expert_grad_bytes(stage)
            limits.check_time_ns(round(nbytes * 8e9 / rate), "workload.model",
                                 f"{nbytes:.3g} gradient bytes of stage {stage} at {rate / 1e9:g} Gbps")
        for what, nbytes in (("activations", spec.pp_bytes()), ("all-to-all", spec.a2a_pair_bytes())):
            limits.check_time_ns(round(nbytes * 8e9 / rate), "workload.model",
                                 f"{nbytes:.3g} bytes of {what} at {rate / 1e9:g} Gbps")
    except OverflowError:
        raise ctx.error(src, "the job's compute times or transfer sizes are too large to represent") from None
    except InputError as exc:
        raise ctx.rewrap(exc) from None


def format_duration_ns(ns: float) -> str:
    """Human time: 46.07 ms, 3.2 us, 1.5 s."""
    return limits.fmt_ns(ns)
