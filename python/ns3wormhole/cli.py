"""The ``ns3-wormhole`` command."""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import __version__
from . import cli_workflow as workflow
from .why_not import partition_summary, why_not_summary

DESCRIPTION = """\
ns3-wormhole: packet-level ns-3 simulation of RoCEv2 fabrics (PFC, ECN, DCQCN)
under LLM-training traffic, accelerated by the Wormhole kernel
(ns3::WormholeSimulatorImpl: port-level partitions, steady-state fast-forward,
memoized contention patterns).

Ways to use the kernel:
  * ns-3 C++ program:  link with `ns3-wormhole config --libs` and run it with
      --SimulatorImplementationType=ns3::WormholeSimulatorImpl
    or set NS_GLOBAL_VALUE="SimulatorImplementationType=ns3::WormholeSimulatorImpl".
  * an already-built ns-3 program, unchanged:  eval "$(ns3-wormhole config --env)"
  * ns-3 Python script (from ns import ns):  add `import ns3wormhole; ns3wormhole.use_wormhole()`.
"""

EPILOG = """\
examples:
  ns3-wormhole run examples/incast.toml                     # Wormhole kernel, summary table
  ns3-wormhole run examples/incast.toml --kernel baseline --json base.json
  ns3-wormhole compare examples/incast.toml --report report # both kernels, errors, plots
  ns3-wormhole compare examples/gpt-tiny.toml --json cmp.json
  ns3-wormhole compare examples/incast.toml --noise 2 --repeat 3 --out-dir out
  ns3-wormhole run mix/config.txt                           # an HPCC/SimAI config, unchanged
  ns3-wormhole run examples/incast.toml --seed 2 --set workload.bytes=16MB
  ns3-wormhole validate examples/gpt-7b.toml && ns3-wormhole show examples/incast.toml
  ns3-wormhole presets
  ns3-wormhole convert mix/config.txt -o scenario.toml
  ns3-wormhole sweep examples/sweep.toml --out sweep-out --workers 2
  ns3-wormhole sweep examples/sweep.toml --scheduler tcp://127.0.0.1:8786
  ns3-wormhole config --cflags --libs --modules core network internet
  g++ prog.cc $(ns3-wormhole config --cflags --libs --modules core network) -o prog
  ns3-wormhole info

exit codes: 0 done, 1 a sweep point failed or an internal error, 2 bad input (one line on
stderr names the file, line and key), 130 interrupted by Ctrl-C, 143 by SIGTERM (the JSON
of what was computed is still written).
Scenario file keys: README.md, section "Scenario files".
"""

RUN_EPILOG = """\
examples:
  ns3-wormhole run examples/incast.toml
  ns3-wormhole run examples/gpt-tiny.toml --kernel baseline --json run.json
  ns3-wormhole run examples/incast.toml --json - --quiet | jq .wall_s

JSON fields: kernel, wall_s, setup_s, events, sim_time_s, interrupted, flows_total,
flows_completed, makespan_ns, iteration_times_ns ([] for flow workloads), finished,
stats (kernel counters), counters (fabric counters), flows (list of {id, src, dst,
bytes, start_ns, finish_ns, fct_ns}; unfinished flows have null finish and FCT).
"""

COMPARE_EPILOG = """\
examples:
  ns3-wormhole compare examples/incast.toml
  ns3-wormhole compare examples/incast.toml --json cmp.json --report report
  ns3-wormhole compare examples/gpt-tiny.toml --quiet --json -

JSON fields: speedup (baseline wall / Wormhole wall), event_ratio (baseline events /
Wormhole events), fct_error {mean, p50, p99, max} of per-flow |FCT_w - FCT_b| / FCT_b,
makespan_error, iteration_time_error (max over iterations; null for flow workloads),
flows (count), flows_compared, interrupted, baseline {wall_s, events, ...},
wormhole {wall_s, events, stats, ...}, per_flow (list of {id, src, dst, bytes,
fct_baseline_ns, fct_wormhole_ns, error}).

--report DIR also samples every flow's rate (fabric.rate_sample_interval_ns = 10 us
unless the scenario sets it) and writes DIR/report.md with fct_cdf.png,
fct_error.png and rates.png (needs matplotlib: pip install 'ns3wormhole[plot]').
"""

SWEEP_EPILOG = """\
A sweep file names a base scenario and a grid of key paths to vary:

  scenario = "incast.toml"          # relative to the sweep file
  mode = "compare"                  # or "run" (then kernel = "wormhole" | "baseline")
  [grid]
  "wormhole.theta" = [0.03, 0.05]
  "fabric.rp_timer_us" = [300, 900]
  [set]                             # optional fixed overrides
  "workload.bytes" = "16MB"

Every point of the cartesian product runs in its own process (ns-3's simulator is
a process-wide singleton): local processes by default, or tasks on an existing
Dask cluster with --scheduler (pip install 'ns3wormhole[sweep]'; workers need
ns3wormhole installed and the scenario's files at the same paths).
Writes OUT/sweep.csv (one column per grid key, then speedup, event_ratio,
fct_error_mean/p99/max, makespan_error, wall times, events, ...), OUT/sweep.json and
OUT/sweep.png (speedup and FCT error against the first grid key).

examples:
  ns3-wormhole sweep examples/sweep.toml --out sweep-out --workers 2
  ns3-wormhole sweep examples/sweep.toml --scheduler tcp://127.0.0.1:8786
"""


SCENARIO_HELP = "scenario file (.toml), or an HPCC/SimAI config (KEY value lines, e.g. mix/config.txt)"


def _cmd_config(args: argparse.Namespace) -> int:
    from . import paths

    out: list[str] = []
    if args.cflags:
        out += paths.cflags()
    if args.libs:
        out += paths.libs(args.modules)
    if args.env:
        env = paths.preload_env({})
        print(f"export LD_PRELOAD='{env['LD_PRELOAD']}'")
        print(f"export NS_GLOBAL_VALUE='{env['NS_GLOBAL_VALUE']}'")
    if out:
        print(" ".join(out))
    if not (args.cflags or args.libs or args.env):
        print("nothing asked: give --cflags, --libs and/or --env", file=sys.stderr)
        return 2
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from . import _core, paths

    print(f"ns3wormhole {__version__} (native core {_core.__version__})")
    print(f"ns-3 {paths._buildinfo().NS3_VERSION}: headers {paths.ns3_include_dir()}, libraries {paths.ns3_lib_dir()}")
    print(f"kernel TypeId: {_core.kernel_type_name()}")
    for lib in paths.available_libraries():
        print(f"library: {lib}")
    return 0


# --------------------------------------------------------------------------- helpers


class CliError(Exception):
    """A problem to report as one line with exit code 2."""


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _check_output_path(path: str | None, what: str, forbid: list[str | None] | None = None) -> None:
    """Fail before simulating if an output file cannot be written."""
    from .outputs import OutputError, check_output_file

    try:
        check_output_file(path, forbid)
    except OutputError as exc:
        raise CliError(f"{what} {exc}") from None


def _jsonable(x: Any) -> Any:
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def _write_json(path: str | None, data: dict) -> None:
    if path is None:
        return
    text = json.dumps(_jsonable(data), indent=1, allow_nan=False) + "\n"
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from .outputs import write_text

    write_text(path, text)


def _fmt_ns(ns: float | None) -> str:
    from .scenario import format_duration_ns

    return "n/a" if ns is None else format_duration_ns(ns)


def _pct(x: float | None) -> str:
    from .compare import format_pct

    return format_pct(x)


class _Progress:
    """A one-line progress display on stderr, shown once a run has taken longer than
    ``delay_s`` of wall time, only when stderr is a terminal."""

    def __init__(self, enabled: bool, delay_s: float = 2.0) -> None:
        self.enabled = enabled
        self.delay_s = delay_s
        self.label = ""
        self.t0 = time.monotonic()
        self.shown = False

    def start(self, label: str) -> None:
        self.clear()
        self.label = label
        self.t0 = time.monotonic()

    def __call__(self, now_ns: int, done: int, total: int) -> None:
        wall = time.monotonic() - self.t0
        if not self.enabled or wall < self.delay_s:
            return
        width = 16
        frac = done / total if total else 0.0
        bar = "#" * int(frac * width) + "." * (width - int(frac * width))
        line = f"{self.label:>8}  sim {_fmt_ns(now_ns):>9}  flows {done}/{total} [{bar}]  wall {wall:.1f} s  Ctrl-C stops"
        cols = shutil.get_terminal_size((80, 24)).columns
        sys.stderr.write("\r" + line[: max(cols - 1, 20)] + "\033[K")
        sys.stderr.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.shown = False


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is (partial results written), exit 143."""


_STOPPED_BY: list[int] = []  # the signal that stopped this command, if any


def _stop_handler(signum: int, frame: object) -> None:
    _STOPPED_BY.append(signum)
    raise _Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _stopped_code() -> int:
    return 143 if _STOPPED_BY and _STOPPED_BY[-1] == signal.SIGTERM else 130


def _stopped_word() -> str:
    return "terminated (SIGTERM)" if _stopped_code() == 143 else "interrupted"


class _InterruptGuard:
    """Ctrl-C (or SIGTERM) during a simulation must reach the C++ watchdog, which stops
    the run at its next tick and returns what was computed. The watchdog notices it when
    Python's signal handler raises; a signal that lands while our progress callback
    is running Python code would instead raise inside the callback (and lose the
    results), so it is deferred: re-sent a moment later, when the simulation is
    back in C++."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.in_callback = False
        self._old: dict[int, Any] = {}

    def __enter__(self) -> "_InterruptGuard":
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._old[sig] = signal.getsignal(sig)
                signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)

    def _handler(self, signum: int, frame: object) -> None:
        if self.in_callback:
            t = threading.Timer(0.05, os.kill, (os.getpid(), signum))
            t.daemon = True
            t.start()
            return
        _stop_handler(signum, frame)

    def wrap(self, fn: Callable[[int, int, int], None]) -> Callable[[int, int, int], None]:
        def callback(now_ns: int, done: int, total: int) -> None:
            self.in_callback = True
            try:
                fn(now_ns, done, total)
            except Exception:  # a display problem must never end the simulation
                pass
            finally:
                self.in_callback = False

        return callback


def _progress_wanted(args: argparse.Namespace) -> bool:
    """On a terminal unless --quiet; NS3WH_PROGRESS=always|never overrides the terminal test."""
    force = os.environ.get("NS3WH_PROGRESS", "").lower()
    if args.quiet or force == "never":
        return False
    return force == "always" or sys.stderr.isatty()


# --------------------------------------------------------------------------- run


def _run_summary(d: dict, label: str) -> list[str]:
    st = d["stats"]
    out = [
        f"scenario   {label}",
        f"kernel     {d['kernel']}",
        f"flows      {d['flows_completed']}/{d['flows_total']} completed, last ends at {_fmt_ns(d['makespan_ns'])}",
        f"sim time   {_fmt_ns(d['sim_time_s'] * 1e9)}",
        f"wall time  {d['wall_s']:.3f} s (+ {d['setup_s']:.3f} s setup)",
        f"events     {d['events']:,}",
    ]
    if d["kernel"] == "wormhole":
        out.append(f"fast-fwd   {st.get('fast_forwards', 0):,} fast-forwards, {_fmt_ns(st.get('time_skipped_ns', 0))} skipped (sum over partitions)")
        out.append(f"           {partition_summary(st)}")
        out.append(f"           {why_not_summary(st)}")
    if d["iteration_times_ns"]:
        out.append("iterations " + ", ".join(_fmt_ns(x) for x in d["iteration_times_ns"]))
    return out


def _cmd_run(args: argparse.Namespace) -> int:
    from .scenario import run_as_dict

    loaded = workflow.load(args.scenario, args, _say)
    sc = loaded.scenario
    _check_output_path(args.json, "--json", forbid=[args.scenario, sc.memo_db])
    workflow.check_out_dir(args.out_dir)
    bar = _Progress(_progress_wanted(args))
    bar.start(args.kernel)
    with _InterruptGuard() as guard:
        result = sc.run(args.kernel, progress=guard.wrap(bar) if bar.enabled else None)
    bar.clear()
    d = run_as_dict(result, sc)
    _write_json(args.json, d)
    files = workflow.write_run(args, loaded, result)
    if d["interrupted"]:
        where = f"; partial results in {args.json}" if args.json and args.json != "-" else ""
        _say(f"ns3-wormhole: {_stopped_word()} at simulated time {_fmt_ns(d['sim_time_s'] * 1e9)} "
             f"({d['flows_completed']}/{d['flows_total']} flows done){where}")
        return _stopped_code()
    if not args.quiet:
        out = sys.stderr if args.json == "-" else sys.stdout
        print("\n".join(_run_summary(d, sc.summary())), file=out)
        if files:
            print(f"wrote      {', '.join(str(f) for f in files)}", file=out)
    return 0


# --------------------------------------------------------------------------- compare


def _compare_summary(d: dict, label: str) -> list[str]:
    b, w = d["baseline"], d["wormhole"]
    fe = d["fct_error"]

    def row(name: str, vb: str, vw: str) -> str:
        return f"{name:<16}{vb:>16}{vw:>16}"

    out = [f"scenario  {label}", "", row("", "baseline", "wormhole")]
    out.append(row("wall time", f"{b['wall_s']:.3f} s", f"{w['wall_s']:.3f} s"))
    out.append(row("events", f"{b['events']:,}", f"{w['events']:,}"))
    out.append(row("makespan", _fmt_ns(b["makespan_ns"] or None), _fmt_ns(w["makespan_ns"] or None)))
    out.append(row("flows done", f"{b['flows_completed']}/{d['flows']}", f"{w['flows_completed']}/{d['flows']}"))
    out.append(row("fast-forwards", "", f"{w['stats'].get('fast_forwards', 0):,}"))
    out.append(f"wormhole {partition_summary(w['stats'])}")
    out.append(f"wormhole {why_not_summary(w['stats'])}")
    out.append("")
    runs = f" (median of {d['repeat']['runs']} runs per kernel)" if "repeat" in d else ""
    out.append(f"speedup {d['speedup']:.2f}x{runs}   event ratio {d['event_ratio']:.2f}x")
    if d["flows_compared"]:
        out.append(f"FCT error ({d['flows_compared']} flows)  mean {_pct(fe['mean'])}  p50 {_pct(fe['p50'])}  "
                   f"p99 {_pct(fe['p99'])}  max {_pct(fe['max'])}")
    else:
        out.append("FCT error  n/a: no flow completed under both kernels")
    out.append(f"makespan error {_pct(d['makespan_error'])}")
    if d["iteration_time_error"] is not None:
        out.append(f"iteration time error {_pct(d['iteration_time_error'])} (max over "
                   f"{len(b['iteration_times_ns'])} iterations)")
    return out


def _cmd_compare(args: argparse.Namespace) -> int:
    if args.noise < 0 or args.repeat < 1:
        raise CliError(f"--noise must be >= 0 and --repeat >= 1, got {args.noise} and {args.repeat}")
    loaded = workflow.load(args.scenario, args, _say)
    sc = loaded.scenario
    _check_output_path(args.json, "--json", forbid=[args.scenario, sc.memo_db])
    if args.report is not None:
        from .outputs import OutputError, check_output_dir
        from .report import have_matplotlib

        try:
            check_output_dir(args.report)
        except OutputError as exc:
            raise CliError(f"--report {exc}") from None
        if not have_matplotlib():
            raise CliError("--report needs matplotlib: pip install 'ns3wormhole[plot]'")
    workflow.check_out_dir(args.out_dir)
    if args.report is not None and sc.fabric.rate_sample_interval_ns == 0:
        sc = sc.with_fabric(rate_sample_interval_ns=int(args.rate_interval_ns))
    bar = _Progress(_progress_wanted(args))
    with _InterruptGuard() as guard:
        cmp = sc.compare(progress=guard.wrap(bar) if bar.enabled else None, on_start=bar.start)
    bar.clear()
    d = cmp.as_dict()
    if not d["interrupted"]:
        with _InterruptGuard():
            if args.repeat > 1:
                d["repeat"] = workflow.repeat_walls(sc, cmp, args.repeat)
                d["speedup"] = d["repeat"]["speedup"]
            if args.noise:
                d["noise"] = workflow.noise(loaded, cmp, args.noise)
    _write_json(args.json, d)
    files = workflow.write_compare(args, loaded, cmp, d)
    if d["interrupted"]:
        r = cmp.wormhole if cmp.wormhole is not None else cmp.baseline
        kernel = "wormhole" if cmp.wormhole is not None else "baseline"
        where = f"; partial results in {args.json}" if args.json and args.json != "-" else ""
        _say(f"ns3-wormhole: {_stopped_word()} during the {kernel} run at simulated time {_fmt_ns(r.sim_time_ns)}{where}")
        return _stopped_code()
    out = sys.stderr if args.json == "-" else sys.stdout
    if not args.quiet:
        print("\n".join(_compare_summary(d, sc.summary())), file=out)
        if "noise" in d:
            print("\n".join(workflow.noise_lines(d["noise"], d)), file=out)
        if files:
            print(f"wrote      {', '.join(str(f) for f in files)}", file=out)
    if args.report is not None:
        from .report import write_report

        json_name = os.path.relpath(args.json, args.report) if args.json and args.json != "-" else None
        written = write_report(cmp, args.report, json_name=json_name, extra=d)
        if not args.quiet:
            print(f"report     {written[0]} (+ {', '.join(f.name for f in written[1:])})", file=out)
    return 0


# --------------------------------------------------------------------------- sweep


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import SweepInterrupted, format_table, run_sweep

    if args.workers is not None and args.workers < 1:
        raise CliError(f"--workers must be >= 1, got {args.workers}")
    say = None if args.quiet else _say
    try:
        table = run_sweep(args.sweep, out_dir=args.out, scheduler=args.scheduler, workers=args.workers, log=say)
    except SweepInterrupted as exc:
        _say(f"ns3-wormhole: {_stopped_word()}; {exc.done} of {exc.total} points done, written to {exc.out_dir}")
        return _stopped_code()
    if not args.quiet:
        print(format_table(table))
    failed = _failed_points(table)
    if failed:
        _say(f"ns3-wormhole: {failed} of {len(table)} points failed (their error is in the table)")
        return 1
    return 0


def _failed_points(table: Any) -> int:
    cols = list(table.columns) if hasattr(table, "columns") else list(table.dtype.names)
    errors = list(table["error"]) if "error" in cols else []
    return sum(1 for e in errors if isinstance(e, str) and e)


# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ns3-wormhole",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    raw = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser(
        "run",
        help="simulate a scenario file under one kernel",
        description="Simulate a scenario (TOML: [topology], [fabric], [workload], [wormhole]) under one "
        "kernel and print a summary. A progress line appears on stderr for runs longer than a few "
        "seconds; Ctrl-C stops the simulation, writes what it has and exits with 130.",
        epilog=RUN_EPILOG,
        formatter_class=raw,
    )
    p.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    p.add_argument("--kernel", choices=("baseline", "wormhole"), default="wormhole",
                   help="baseline = ns-3's DefaultSimulatorImpl, wormhole = ns3::WormholeSimulatorImpl (default)")
    p.add_argument("--json", metavar="OUT", help="write results as JSON to OUT ('-' for stdout)")
    workflow.add_override_args(p)
    workflow.add_out_dir_arg(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no summary table and no progress line")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "compare",
        help="simulate a scenario under both kernels and report speed-up and errors",
        description="Run a scenario under ns-3's default kernel and under Wormhole (same fabric and seed) "
        "and report the speed-up, the event ratio and the per-flow FCT errors.",
        epilog=COMPARE_EPILOG,
        formatter_class=raw,
    )
    p.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    p.add_argument("--json", metavar="OUT", help="write the comparison as JSON to OUT ('-' for stdout)")
    workflow.add_override_args(p)
    workflow.add_out_dir_arg(p)
    p.add_argument("--noise", type=int, default=0, metavar="N", help=workflow.NOISE_HELP)
    p.add_argument("--repeat", type=int, default=1, metavar="N", help=workflow.REPEAT_HELP)
    p.add_argument("--report", metavar="DIR", help="write DIR/report.md and PNG plots (needs matplotlib)")
    p.add_argument("--rate-interval-ns", type=int, default=10_000, metavar="NS",
                   help="rate sampling period for --report's rate plot, if the scenario sets none (default 10000)")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary table and no progress line")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("validate", help="check a scenario (or HPCC config) without simulating it",
                       description="Load and check SCENARIO with its overrides; print its one-line summary "
                       "(exit 0) or the error (exit 2). Nothing is simulated.")
    p.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    workflow.add_override_args(p)
    p.set_defaults(func=lambda a: workflow.cmd_validate(a, _say))

    p = sub.add_parser("show", help="print a scenario with every default filled in, as TOML",
                       description="Print the resolved scenario (file paths absolute, every fabric and "
                       "kernel default filled in) as TOML.")
    p.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    workflow.add_override_args(p)
    p.set_defaults(func=lambda a: workflow.cmd_show(a, _say))

    p = sub.add_parser("presets", help="list the LLM workload presets (paper Table 1)")
    p.set_defaults(func=workflow.cmd_presets)

    p = sub.add_parser("convert", help="write the scenario (TOML) equivalent to an HPCC/SimAI config",
                       description="Read an HPCC/SimAI config (KEY value lines) and write the equivalent "
                       "scenario file; file paths in it are relative to the output file.")
    p.add_argument("config", metavar="CONFIG", help="HPCC/SimAI config file (e.g. mix/config.txt)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.toml", help="scenario file to write")
    workflow.add_override_args(p)
    p.set_defaults(func=lambda a: workflow.cmd_convert(a, _say))

    p = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of parameters (local processes or a Dask cluster)",
        description="Run the cartesian product of a sweep file's grid over its base scenario.",
        epilog=SWEEP_EPILOG,
        formatter_class=raw,
    )
    p.add_argument("sweep", metavar="SWEEP", help="sweep file (.toml)")
    p.add_argument("--out", metavar="DIR", help="output folder (default: SWEEP's name + '-results')")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="address of a running Dask scheduler")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local worker processes (default: number of CPUs, at most the number of points)")
    p.add_argument("--quiet", "-q", action="store_true", help="no per-point log and no table")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser(
        "config",
        help="compiler/linker flags and environment for ns-3 C++ programs using the kernel",
        description="Print flags for compiling an ns-3 C++ program against ns3wormhole, "
        "or the environment that loads the kernel into an unchanged ns-3 binary.",
    )
    p.add_argument("--cflags", action="store_true", help="compiler flags (C++20, include dirs)")
    p.add_argument("--libs", action="store_true", help="linker flags (our libraries, ns-3 modules, rpaths)")
    p.add_argument(
        "--modules",
        nargs="+",
        default=None,
        metavar="MODULE",
        help="ns-3 modules to link (default: core network), e.g. core network internet applications",
    )
    p.add_argument("--env", action="store_true", help="shell exports: LD_PRELOAD the kernel and select it")
    p.set_defaults(func=_cmd_config)

    p = sub.add_parser("info", help="show versions and where the native libraries are")
    p.set_defaults(func=_cmd_info)

    p = sub.add_parser(
        "memo",
        help="inspect or clear a memo database (the [wormhole] memo_db file)",
        description="Memoized contention patterns persist in one SQLite file that later runs reuse. "
        "`info` shows its entries, scopes, size and the hits/misses/inserts of the runs that used it; "
        "`clear` empties it.",
    )
    p.add_argument("action", choices=["info", "clear"])
    p.add_argument("database", help="path of the memo database")
    p.set_defaults(func=_cmd_memo)
    return parser


def _cmd_memo(args: argparse.Namespace) -> int:
    from .memo import MemoDatabase

    with MemoDatabase(args.database, create=False, read_only=args.action == "info") as db:
        if args.action == "clear":
            print(f"{args.database}: removed {db.clear()} records")
            return 0
        info = db.info()
    print(f"{info.path}: {info.entries} records in {info.scopes} scope(s), {info.size_bytes:,} bytes; "
          f"{info.runs} run(s): {info.hits} hits, {info.misses} misses, {info.inserts} inserts")
    return 0


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    _say(f"ns3-wormhole: warning: {_one_line(message)}")


def main(argv: Sequence[str] | None = None) -> int:
    warnings.showwarning = _show_warning  # one line each, as errors are
    _STOPPED_BY.clear()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _stop_handler)  # from the first moment: 130, never a traceback
        signal.signal(signal.SIGTERM, _stop_handler)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 0
        return int(args.func(args))
    except KeyboardInterrupt:
        _say(f"ns3-wormhole: {_stopped_word()}")
        return _stopped_code()
    except Exception as exc:
        if not _STOPPED_BY:
            return _failed(exc)
        # A stop signal turned into another error by whatever it interrupted:
        # an extension module's import reports "initialization failed".
        _say(f"ns3-wormhole: {_stopped_word()}")
        return _stopped_code()


def _failed(exc: Exception) -> int:
    """The exit code and one-line message of an error that stopped the command."""
    try:
        raise exc
    except CliError as exc:
        _say(f"ns3-wormhole: error: {_one_line(exc)}")
        return 2
    except (OSError, ValueError) as exc:  # InputError, TOML errors, ValueError from the C++ layer
        if os.environ.get("NS3WH_TRACEBACK"):
            raise
        text = str(exc)
        if isinstance(exc, OSError) and exc.filename and exc.strerror:
            text = f"{exc.filename}: {exc.strerror}"
        _say(f"ns3-wormhole: error: {_one_line(text)}")
        return 2
    except ImportError as exc:
        _say(f"ns3-wormhole: error: {_one_line(exc)}")
        return 2
    except Exception as exc:  # never a traceback; NS3WH_TRACEBACK=1 shows it
        if os.environ.get("NS3WH_TRACEBACK"):
            raise
        _say(f"ns3-wormhole: internal error: {type(exc).__name__}: {_one_line(exc)} (NS3WH_TRACEBACK=1 shows where)")
        return 1


if __name__ == "__main__":
    sys.exit(main())
