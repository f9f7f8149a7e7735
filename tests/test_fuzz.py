"""Property-based fuzzing of the scenario loader and the ``ns3-wormhole run`` command.

Hypothesis builds scenarios from a small valid one by setting one to three documented
keys (every top-level key, topology parameter, [fabric] field, flow and LLM workload key
and [wormhole] knob) to extreme values: -1, 0, NaN, +-inf, 2^31..2^64 and 1e30, tiny
floats, wrong types, strings with and without units, deep nesting. Each scenario runs
in a subprocess under a wall-clock budget, and the contract is:

* exit 0, and the results are physically sound: no flow finished faster than its bytes
  at the fastest link, and a run that ended before its stop time finished every flow; or
* exit 2 with exactly one error line naming the scenario file and a key;
* never a signal, a traceback, an internal error, another exit code, or the budget.

In CI it runs a fixed number of examples from a fixed seed (``derandomize``). A longer
run (README, "Fuzzing"): ``NS3WH_FUZZ_EXAMPLES=1000 NS3WH_FUZZ_SEED=2026 pytest tests/test_fuzz.py``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import subprocess

import pytest
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st

from conftest import clean_env, ns3_wormhole_cmd

from ns3wormhole.fabric import FabricConfig
from ns3wormhole.run import WormholeConfig
from ns3wormhole.toml_out import dumps as to_toml
from ns3wormhole.scenario import TOP_KEYS, TOPOLOGY_BUILDERS, _PATTERN_KEYS
from ns3wormhole.workload import ComputeSpec, ModelSpec, ParallelSpec, Precision

EXAMPLES = int(os.environ.get("NS3WH_FUZZ_EXAMPLES", "60"))
SEED = int(os.environ.get("NS3WH_FUZZ_SEED", "0"))  # 0: derandomized (CI); else a random run from this seed
BUDGET_S = float(os.environ.get("NS3WH_FUZZ_BUDGET_S", "90"))
STOP = "5ms"  # every run is short in simulated time unless `stop` itself is the key under test

FLOWS_BASE = {
    "name": "fuzz",
    "stop": STOP,
    "topology": {"kind": "star", "n_hosts": 4},
    "workload": {"kind": "flows", "pattern": "incast", "bytes": "20KB"},
}
LLM_BASE = {
    "name": "fuzz-llm",
    "stop": STOP,
    "topology": {"kind": "rail_optimized", "n_servers": 2, "gpus_per_server": 2},
    "workload": {"kind": "llm", "model": {"num_layers": 2, "hidden": 128, "heads": 2},
                 "parallel": {"tp": 2, "dp": 2}},
}

# every documented key path, by the base scenario it applies to
TOP = [*TOP_KEYS, "events[0].time", "events[0].link", "events[0].nodes", "events[0].action"]
TOPOLOGY = sorted({f"topology.{p}" for b in TOPOLOGY_BUILDERS.values() for p in b.__code__.co_varnames[: b.__code__.co_argcount]}
                  | {"topology.kind", "topology.file", "topology.error_rate"})
FABRIC = [f"fabric.{f.name}" for f in dataclasses.fields(FabricConfig)]
WORMHOLE = [f"wormhole.{f.name}" for f in dataclasses.fields(WormholeConfig)]
FLOW_KEYS = sorted({f"workload.{k}" for keys in _PATTERN_KEYS.values() for k in keys}
                   | {"workload.pattern", "workload.kind", "workload.file", "workload.flows",
                      "workload.flows[0].src", "workload.flows[0].bytes", "workload.flows[0].start",
                      "workload.flows[0].pg"})
LLM_KEYS = (["workload.preset", "workload.iterations", "workload.micro_batch", "workload.global_batch",
             "workload.schedule", "workload.a2a_per_layer", "workload.aicb"]
            + [f"workload.{f.name}" for f in dataclasses.fields(ComputeSpec)]
            + [f"workload.model.{f.name}" for f in dataclasses.fields(ModelSpec)]
            + [f"workload.parallel.{f.name}" for f in dataclasses.fields(ParallelSpec)]
            + [f"workload.precision.{f.name}" for f in dataclasses.fields(Precision)])

NUMBERS = [-1, 0, 1, 2, 3, 7, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**62, 2**63 - 1, 2**63, 2**64, 10**30,
           -1.0, 0.0, 0.5, 1.5, 2.7, 1e-300, 1e16, 1e20, 1e300, math.nan, math.inf, -math.inf]
STRINGS = ["", "abc", "1e30bps", "100Gbps", "-5us", "1h", "0ns", "9.3e18", "18446744073709551616ns", "64MB",
           "1.5", "32MiB", "0.3ms", "1e999999999s", "gpt-7b", "moe-8x7b", "incast", "staggered", "permutation",
           "star", "hpcc", "llm", "flows", "1f1b", "no/such/file.txt", "\u00b5s", "1e-9ms"]


def _nested(depth: int):
    v: object = 1
    for _ in range(depth):
        v = [v]
    return v


# values a user would plausibly write: most keys then load, so the runs themselves are fuzzed too
PLAUSIBLE = [1, 2, 3, 4, 8, 16, 0.01, 0.1, 0.5, 0.9, 10, 100, 1000, 4096, True, False, "10us", "1ms", "0.3ms",
             "1KB", "64KB", "2MB", "10Gbps", "100Gbps", "400Gbps", "1us", "5us", [0, 1], [1, 2, 3]]

values = st.one_of(
    *[st.sampled_from(PLAUSIBLE)] * 7,
    st.sampled_from(NUMBERS),
    st.sampled_from(STRINGS),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.sampled_from([0, 1, 2, 3, -1, 2**40, "x"]), max_size=4),
    st.sampled_from([{}, {"a": 1}, {"kmin_kb": 1, "kmax_kb": 2, "pmax": 0.5}, {"100Gbps": {"kmin_kb": 1e30, "kmax_kb": 1e31, "pmax": 2}}]),
    st.sampled_from([10, 60, 120, 300]).map(_nested),
)


@st.composite
def scenarios(draw):
    llm = draw(st.booleans())
    data = json.loads(json.dumps(LLM_BASE if llm else FLOWS_BASE))
    pool = TOP + TOPOLOGY + FABRIC + WORMHOLE + (LLM_KEYS if llm else FLOW_KEYS)
    keys = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
    if "stop" in keys:
        keys = ["stop"]  # an extreme stop alone: the base workload is small
    for key in keys:
        _set(data, key, draw(values))
    return data, keys


def _set(data: dict, key: str, value: object) -> None:
    parts = re.split(r"\.(?![^\[]*\])", key)
    cur: object = data
    for part in parts[:-1]:
        m = re.fullmatch(r"(\w+)\[(\d+)\]", part)
        if m:
            first = {"src": 0, "dst": 1, "bytes": "20KB"} if m.group(1) == "flows" else {
                "time": "10us", "link": 0, "action": "down"}
            lst = cur.setdefault(m.group(1), [first])  # type: ignore[union-attr]
            cur = lst[0] if isinstance(lst, list) and lst and isinstance(lst[0], dict) else {}
        else:
            nxt = cur.setdefault(part, {})  # type: ignore[union-attr]
            cur = nxt if isinstance(nxt, dict) else {}
    cur[parts[-1]] = value  # type: ignore[index]


# ---------------------------------------------------------------- the contract


def check_contract(path, keys) -> str:
    out = path.with_suffix(".json")
    try:
        r = subprocess.run([*ns3_wormhole_cmd(), "run", str(path), "--json", str(out), "--quiet"],
                           capture_output=True, text=True, timeout=BUDGET_S, env=clean_env(NS3WH_PROGRESS="never"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"over the {BUDGET_S:.0f} s budget: keys {keys}\n{path.read_text()}")
    text = path.read_text()
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode in (0, 2), f"exit {r.returncode} for keys {keys}:\n{r.stderr[-3000:]}\n{text}"
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, f"{keys}:\n{r.stderr[-3000:]}\n{text}"
    if r.returncode == 2:
        errors = [ln for ln in lines if not ln.startswith("ns3-wormhole: warning: ")]
        assert len(errors) == 1 and errors[0].startswith("ns3-wormhole: error: "), f"{keys}: {r.stderr}\n{text}"
        msg = errors[0]
        rest = msg[len("ns3-wormhole: error: "):]
        assert rest.startswith(str(path)), f"error names no file: {msg}\n{text}"
        assert re.match(r"(:\d+)?: [A-Za-z_][\w.\[\]]*: ", rest[len(str(path)):]), f"error names no key: {msg}\n{text}"
        return "refused"
    assert all(ln.startswith("ns3-wormhole: warning: ") for ln in lines), f"{keys}: {r.stderr}"
    d = json.loads(out.read_text())
    for f in d["flows"]:
        if f["fct_ns"] is not None:
            assert f["fct_ns"] >= f["bytes"] * 8 / 10**13 * 1e9 - 1, f"flow faster than any link: {f}\n{text}"
            assert f["finish_ns"] == f["start_ns"] + f["fct_ns"], f
    stop_ns = None
    if d["sim_time_s"] * 1e9 + 1 < _stop_ns(text):
        stop_ns = _stop_ns(text)
    if stop_ns is not None and not d["interrupted"]:
        assert d["finished"], f"ended at {d['sim_time_s']} s, before stop, with work left: {keys}\n{text}"
    return "ran"


def _stop_ns(text: str) -> float:
    from ns3wormhole.scenario import parse_toml
    from ns3wormhole.topology import parse_time

    try:
        return float(parse_time(parse_toml(text, "x").get("stop", 0)))
    except Exception:
        return 0.0


@seed(SEED)
@settings(max_examples=EXAMPLES, derandomize=SEED == 0, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=scenarios())
def test_every_input_is_run_soundly_or_refused_in_one_line(tmp_path_factory, case):
    data, keys = case
    path = tmp_path_factory.mktemp("fuzz") / "s.toml"
    path.write_text(to_toml(data))
    event(check_contract(path, keys))
