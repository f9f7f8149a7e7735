"""Parameter sweeps: one base scenario, a grid of key paths, every point in its own process.

A sweep file (TOML)::

    scenario = "incast.toml"        # base scenario, relative to the sweep file
    mode = "compare"                # "compare" (both kernels) or "run" (one kernel)
    kernel = "wormhole"             # mode = "run" only
    [grid]                          # key path -> list of values; the cartesian product runs
    "wormhole.theta" = [0.03, 0.05]
    "fabric.rp_timer_us" = [300, 900]
    [set]                           # optional: fixed overrides applied to every point
    "workload.bytes" = "16MB"

:func:`run_sweep` runs the points on local processes (``concurrent.futures``; each
point in a fresh process, since ns-3's simulator is a process-wide singleton) or, with
``scheduler="tcp://host:port"``, as tasks on a running Dask cluster
(``dask.distributed``; workers run points one at a time per process). Results: one
row per point (a pandas DataFrame if pandas is installed, else a numpy structured
array), written to ``OUT/sweep.csv``, ``OUT/sweep.json`` and ``OUT/sweep.png``.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError
from .outputs import OutputError, check_output_dir, write_figure, write_text
from .scenario import TABLES, TOP_KEYS, _key_lines, load_scenario, parse_toml, scenario_from_mapping, set_key

__all__ = ["SweepSpec", "SweepInterrupted", "load_sweep", "run_sweep", "run_point", "run_point_isolated", "format_table", "COMPARE_COLUMNS", "RUN_COLUMNS"]

SWEEP_KEYS = ("scenario", "mode", "kernel", "grid", "set")
MODES = ("compare", "run")

COMPARE_COLUMNS = (
    "speedup", "event_ratio", "fct_error_mean", "fct_error_p50", "fct_error_p99", "fct_error_max",
    "makespan_error", "iteration_time_error", "flows", "flows_compared", "baseline_wall_s", "wormhole_wall_s",
    "baseline_events", "wormhole_events", "fast_forwards", "time_skipped_ns", "baseline_makespan_ns",
    "wormhole_makespan_ns", "interrupted",
)
RUN_COLUMNS = (
    "kernel", "wall_s", "events", "sim_time_s", "makespan_ns", "flows", "flows_completed", "fast_forwards",
    "time_skipped_ns", "interrupted",
)

_POINT_LOCK = threading.Lock()  # one simulation at a time per process (ns-3 is a singleton)
_CHILDREN: set = set()  # point processes running now (stopped on Ctrl-C / SIGTERM)
_CHILDREN_LOCK = threading.Lock()


class SweepInterrupted(Exception):
    """Ctrl-C during a sweep; the points done so far were written to ``out_dir``."""

    def __init__(self, done: int, total: int, out_dir: Path, table: Any) -> None:
        super().__init__(f"interrupted after {done} of {total} points")
        self.done, self.total, self.out_dir, self.table = done, total, out_dir, table


@dataclass
class SweepSpec:
    path: Path
    scenario: Path
    mode: str = "compare"
    kernel: str = "wormhole"
    grid: dict[str, list] = field(default_factory=dict)
    fixed: dict[str, Any] = field(default_factory=dict)
    key_lines: dict[tuple[str, ...], int] = field(default_factory=dict, repr=False)

    def points(self) -> list[dict[str, Any]]:
        """Every combination of the grid values, first key varying slowest."""
        keys = list(self.grid)
        return [dict(zip(keys, combo)) for combo in itertools.product(*(self.grid[k] for k in keys))]


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and check a sweep file (every point's scenario is checked by :func:`run_sweep`)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(p), None, "sweep file not found") from None
    except OSError as exc:
        raise InputError(str(p), None, f"cannot read sweep file: {exc.strerror or exc}") from None
    data = parse_toml(text, str(p))
    src = str(p)
    lines = _key_lines(text)

    def err(where: tuple[str, ...], message: str) -> InputError:
        line = lines.get(where) or lines.get(where[:1])
        return InputError(src, line, message)

    for key in data:
        if key not in SWEEP_KEYS:
            raise err((key,), f"{key}: unknown key; known: {', '.join(SWEEP_KEYS)}")
    if "scenario" not in data or not isinstance(data["scenario"], str):
        raise err(("scenario",), "scenario: missing: give the base scenario file, e.g. scenario = \"incast.toml\"")
    scen = Path(data["scenario"]).expanduser()
    if not scen.is_absolute():
        scen = p.parent / scen
    if not scen.is_file():
        raise err(("scenario",), f"scenario: file not found: {scen}")
    mode = data.get("mode", "compare")
    if mode not in MODES:
        raise err(("mode",), f"mode: must be 'compare' or 'run', got {mode!r}")
    kernel = data.get("kernel", "wormhole")
    if kernel not in ("baseline", "wormhole"):
        raise err(("kernel",), f"kernel: must be 'baseline' or 'wormhole', got {kernel!r}")
    if "kernel" in data and mode != "run":
        raise err(("kernel",), "kernel: only used with mode = \"run\"")
    grid = data.get("grid", {})
    fixed = data.get("set", {})
    for name, table in (("grid", grid), ("set", fixed)):
        if not isinstance(table, dict):
            raise err((name,), f"{name}: expected a table of key paths")
        for key in table:
            head = key.split(".")[0]
            if head not in TABLES and head not in TOP_KEYS:
                raise err((name, key), f"{name}.{key!r}: not a scenario key path (starts with one of "
                          f"{', '.join(TABLES + TOP_KEYS)}, e.g. \"wormhole.theta\")")
    if not grid:
        raise err(("grid",), "grid: missing or empty: give at least one key path with a list of values")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise err(("grid", key), f"grid.{key!r}: expected a non-empty list of values, got {values!r}")
    return SweepSpec(path=p, scenario=scen, mode=mode, kernel=kernel, grid=dict(grid), fixed=dict(fixed), key_lines=lines)


# --------------------------------------------------------------------------- one point


def _point_data(spec_data: dict, overrides: Mapping[str, Any]) -> dict:
    import copy

    data = copy.deepcopy(spec_data)
    for key, value in overrides.items():
        set_key(data, key, value)
    return data


def run_point(data: dict, base_dir: str, source: str, mode: str, kernel: str) -> dict[str, Any]:
    """Run one sweep point (a scenario mapping) and return its result columns.
    Runs in a worker process; never raises for a failed point (``error`` says why)."""
    with _POINT_LOCK:
        t0 = time.monotonic()
        try:
            sc = scenario_from_mapping(data, base_dir=base_dir, source=source)
            if mode == "compare":
                d = sc.compare().as_dict()
                b, w = d["baseline"], d["wormhole"] or {}
                st = w.get("stats", {})
                row = {
                    "speedup": d["speedup"], "event_ratio": d["event_ratio"],
                    "fct_error_mean": d["fct_error"]["mean"], "fct_error_p50": d["fct_error"]["p50"],
                    "fct_error_p99": d["fct_error"]["p99"], "fct_error_max": d["fct_error"]["max"],
                    "makespan_error": d["makespan_error"], "iteration_time_error": d["iteration_time_error"],
                    "flows": d["flows"], "flows_compared": d["flows_compared"],
                    "baseline_wall_s": b["wall_s"], "wormhole_wall_s": w.get("wall_s"),
                    "baseline_events": b["events"], "wormhole_events": w.get("events"),
                    "fast_forwards": st.get("fast_forwards"), "time_skipped_ns": st.get("time_skipped_ns"),
                    "baseline_makespan_ns": b["makespan_ns"], "wormhole_makespan_ns": w.get("makespan_ns"),
                    "interrupted": d["interrupted"],
                }
            else:
                from .scenario import run_as_dict

                d = run_as_dict(sc.run(kernel), sc)
                row = {
                    "kernel": kernel, "wall_s": d["wall_s"], "events": d["events"], "sim_time_s": d["sim_time_s"],
                    "makespan_ns": d["makespan_ns"], "flows": d["flows_total"], "flows_completed": d["flows_completed"],
                    "fast_forwards": d["stats"].get("fast_forwards"), "time_skipped_ns": d["stats"].get("time_skipped_ns"),
                    "interrupted": d["interrupted"],
                }
            row["error"] = ""
        except Exception as exc:  # a failed point is a row with its error, not a failed sweep
            row = {"error": " ".join(f"{type(exc).__name__}: {exc}".split()) if not isinstance(exc, ValueError)
                   else " ".join(str(exc).split())}
        row["point_wall_s"] = time.monotonic() - t0
        row["host"] = os.uname().nodename
        row["pid"] = os.getpid()
        return row


def run_point_isolated(data: dict, base_dir: str, source: str, mode: str, kernel: str) -> dict[str, Any]:
    """:func:`run_point` in a fresh Python process (``python -m ns3wormhole.sweep``), so that
    nothing a simulation leaves in the process (ns-3's singletons, the kernel's memo store)
    reaches the next point. Used on Dask workers, whose processes run many tasks."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ns3wh-point-") as tmp:
        src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
        src.write_text(json.dumps({"data": data, "base_dir": base_dir, "source": source, "mode": mode,
                                   "kernel": kernel}, default=str), encoding="utf-8")
        proc = subprocess.Popen([sys.executable, "-m", "ns3wormhole.sweep", str(src), str(dst)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with _CHILDREN_LOCK:
            _CHILDREN.add(proc)
        try:
            _, stderr = proc.communicate()
        finally:
            with _CHILDREN_LOCK:
                _CHILDREN.discard(proc)
        if proc.returncode != 0 or not dst.is_file():
            tail = " ".join((stderr or "").split())[-300:]
            return {"error": f"point process exited with {proc.returncode}: {tail}".rstrip(": "),
                    "host": os.uname().nodename}
        return json.loads(dst.read_text(encoding="utf-8"))


def _point_main(argv: list[str]) -> int:
    payload = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    row = run_point(payload["data"], payload["base_dir"], payload["source"], payload["mode"], payload["kernel"])
    Path(argv[1]).write_text(json.dumps(row, default=str), encoding="utf-8")
    return 0


# --------------------------------------------------------------------------- the sweep


def _value_repr(v: Any) -> Any:
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return json.dumps(v)


def _make_table(rows: list[dict[str, Any]], columns: list[str]):
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None:
        return pd.DataFrame(rows, columns=columns)
    dtypes = []
    for c in columns:
        vals = [r.get(c) for r in rows]
        present = [v for v in vals if v is not None and v != ""]
        if present and all(isinstance(v, bool) for v in present):
            dtypes.append((c, "?"))
        elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
            dtypes.append((c, "f8"))
        else:
            dtypes.append((c, "U200"))
    arr = np.zeros(len(rows), dtype=dtypes)
    for i, r in enumerate(rows):
        for c, t in dtypes:
            v = r.get(c)
            if t == "f8":
                arr[c][i] = np.nan if v is None or v == "" else float(v)
            elif t == "?":
                arr[c][i] = bool(v)
            else:
                arr[c][i] = "" if v is None else str(v)
    return arr


def _rows_of(table) -> tuple[list[str], list[list[Any]]]:
    if hasattr(table, "to_dict"):
        cols = list(table.columns)
        return cols, table.astype(object).where(table.notna(), None).values.tolist()
    cols = list(table.dtype.names)
    return cols, [[table[c][i].item() for c in cols] for i in range(len(table))]


def _pct(v: Any) -> str:
    return "n/a" if v is None else f"{v:.2%}"


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def format_table(table, max_rows: int = 50) -> str:
    """A compact text table of the main columns."""
    cols, rows = _rows_of(table)
    col = {c: k for k, c in enumerate(cols)}

    def used(c: str) -> bool:
        return c in col and any(r[col[c]] not in (None, "") and not (isinstance(r[col[c]], float) and math.isnan(r[col[c]]))
                                for r in rows)

    grid = cols[1 : cols.index("speedup" if "speedup" in col else "kernel")]
    if "speedup" in col:
        metrics = ["speedup", "event_ratio", "fct_error_mean", "fct_error_p99", "fct_error_max", "makespan_error",
                   "iteration_time_error", "baseline_wall_s", "wormhole_wall_s"]
    else:
        metrics = ["kernel", "wall_s", "events", "sim_time_s", "makespan_ns", "flows_completed", "fast_forwards"]
    main = ["point", *grid, *(m for m in metrics if m != "iteration_time_error" or used(m))]
    if used("error"):
        main.append("error")
    idx = [col[c] for c in main]
    cells = [[_cell(r[i]) for i in idx] for r in rows[:max_rows]]
    widths = [max(len(c), *(len(x[k]) for x in cells)) if cells else len(c) for k, c in enumerate(main)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(main, widths))]
    lines += ["  ".join(x.rjust(w) for x, w in zip(row, widths)) for row in cells]
    if len(rows) > max_rows:
        lines.append(f"... {len(rows) - max_rows} more rows in the CSV")
    return "\n".join(lines)


def _write_csv(path: Path, table) -> None:
    cols, rows = _rows_of(table)
    fh = io.StringIO(newline="")
    w = csv.writer(fh)
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in r])
    write_text(path, fh.getvalue())


def _plot(path: Path, spec: SweepSpec, table) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    cols, rows = _rows_of(table)
    col = {c: k for k, c in enumerate(cols)}
    points = spec.points()
    keys = list(spec.grid)
    x_key, others = keys[0], keys[1:]
    xs = spec.grid[x_key]
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in xs)

    def xpos(pt: dict) -> float:
        v = pt[x_key]
        return float(v) if numeric else float(next(i for i, x in enumerate(xs) if x == v))

    def ok(v: Any) -> bool:
        return v is not None and v != "" and not (isinstance(v, float) and math.isnan(v))

    groups: dict[str, list] = {}
    for r in rows:
        pt = points[int(r[col["point"]])]
        label = ", ".join(_cell(_value_repr(pt[k])) for k in others)
        groups.setdefault(label, []).append((pt, r))
    if spec.mode == "compare":
        panels = [("speedup", "speedup (x)"), ("fct_error_mean", "FCT error (%): mean, max dotted")]
    else:
        panels = [("wall_s", "wall time (s)"), ("events", "events")]
    fig, axes = plt.subplots(len(panels), 1, figsize=(6.8, 2.6 * len(panels) + 0.7), sharex=True, squeeze=False)
    for ax, (metric, ylabel) in zip(axes[:, 0], panels):
        for label, members in groups.items():
            pts = sorted((xpos(pt), r[col[metric]]) for pt, r in members if ok(r[col[metric]]))
            if not pts:
                continue
            scale = 100.0 if metric.startswith("fct_error") else 1.0
            (line,) = ax.plot([a for a, _ in pts], [b * scale for _, b in pts], marker="o", lw=1.5, label=label or None)
            if metric == "fct_error_mean":
                mx = sorted((xpos(pt), r[col["fct_error_max"]]) for pt, r in members if ok(r[col["fct_error_max"]]))
                if mx:
                    ax.plot([a for a, _ in mx], [b * 100 for _, b in mx], marker="^", ls=":", lw=1.2, color=line.get_color())
        if metric == "speedup":  # above the line Wormhole is faster, below it slower
            ax.axhline(1.0, color="0.35", lw=1, ls="--", label="1x (as fast as the baseline)")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        if metric == "speedup" and len(groups) <= 1:
            ax.legend(fontsize=8, loc="best")
        if len(groups) > 1 and ax is axes[0, 0]:
            ax.legend(fontsize=8, title=", ".join(others), title_fontsize=8)
    if not numeric:
        axes[-1, 0].set_xticks(range(len(xs)), [_cell(_value_repr(v)) for v in xs])
    axes[-1, 0].set_xlabel(x_key)
    fig.suptitle(f"sweep {spec.path.name}: {spec.mode} of {spec.scenario.name}", fontsize=11)
    fig.tight_layout()
    write_figure(path, fig, dpi=120)
    plt.close(fig)
    return True


def _executor(workers: int):
    """Threads that each start one fresh Python process per point (run_point_isolated):
    a point whose process crashes (a native abort, the OOM killer) is that point's
    error, and the pool goes on with the others (a process pool would break:
    BrokenProcessPool for every later point)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ns3wh-point"), run_point_isolated


def _stop_point_processes() -> None:
    with _CHILDREN_LOCK:
        children = list(_CHILDREN)
    for proc in children:
        if proc.poll() is None:
            proc.terminate()


def run_sweep(
    sweep: str | Path | SweepSpec,
    out_dir: str | Path | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
    connect_timeout_s: float = 10.0,
):
    """Run every point of a sweep; returns the result table (pandas DataFrame, or a
    numpy structured array without pandas) and writes ``sweep.csv``, ``sweep.json`` and
    ``sweep.png`` (with matplotlib) into ``out_dir`` (default: the sweep file's name +
    ``-results``). Points run on local processes (``workers``, default the CPU count)
    or on the Dask cluster at ``scheduler`` (connecting for at most ``connect_timeout_s``). Bad grids raise :class:`InputError`
    before anything runs; Ctrl-C raises :class:`SweepInterrupted` after writing the
    points done so far."""
    spec = sweep if isinstance(sweep, SweepSpec) else load_sweep(sweep)
    out = Path(out_dir) if out_dir is not None else Path(f"{spec.path.stem}-results")
    try:
        check_output_dir(out)
    except OutputError as exc:
        raise InputError(exc.path, None, exc.message) from None
    # the base scenario, with fixed overrides; every point is checked here, before running
    try:
        base = load_scenario(spec.scenario, overrides=spec.fixed)
    except InputError as exc:
        raise InputError(exc.source, exc.line, f"{exc.message} (in sweep {spec.path})") from None
    base_dir = str(spec.scenario.parent.resolve())
    source = str(spec.scenario)
    points = spec.points()
    datas = []
    for i, pt in enumerate(points):
        try:
            data = _point_data(base.data, pt)
            scenario_from_mapping(data, base_dir=base_dir, source=source)
        except InputError as exc:
            what = ", ".join(f"{k}={_value_repr(v)!r}" for k, v in pt.items())
            culprit = [k for k in pt if k in exc.message or k in exc.source]  # the grid key the error names
            line = spec.key_lines.get(("grid", culprit[0])) if culprit else None
            raise InputError(str(spec.path), line, f"point {i} ({what}): {exc}") from None
        datas.append(data)
    say = log or (lambda s: None)
    n = len(points)
    columns = ["point", *spec.grid.keys(), *(COMPARE_COLUMNS if spec.mode == "compare" else RUN_COLUMNS),
               "error", "point_wall_s", "host", "pid"]
    rows: list[dict | None] = [None] * n

    def record(i: int, row: dict[str, Any]) -> None:
        full = {"point": i, **{k: _value_repr(v) for k, v in points[i].items()}, **row}
        rows[i] = full
        desc = ", ".join(f"{k}={_value_repr(v)}" for k, v in points[i].items())
        if row.get("error"):
            say(f"[{sum(r is not None for r in rows)}/{n}] {desc}: failed: {row['error']}")
        elif spec.mode == "compare":
            say(f"[{sum(r is not None for r in rows)}/{n}] {desc}: speedup {_cell(row['speedup'])}x, "
                f"FCT error mean {_pct(row['fct_error_mean'])} max {_pct(row['fct_error_max'])}")
        else:
            say(f"[{sum(r is not None for r in rows)}/{n}] {desc}: wall {row['wall_s']:.3f} s, {row['events']} events")

    where = f"Dask scheduler {scheduler}" if scheduler else None
    interrupted = False
    t0 = time.monotonic()
    try:
        if scheduler:
            _run_dask(scheduler, datas, base_dir, source, spec, record, say, connect_timeout_s)
        else:
            nw = max(1, min(workers or (os.cpu_count() or 1), n))
            where = f"{nw} local process{'es' if nw > 1 else ''}"
            say(f"sweep {spec.path}: {n} points ({spec.mode}) on {where}")
            from concurrent.futures import as_completed

            ex, point_fn = _executor(nw)
            try:
                futs = {ex.submit(point_fn, d, base_dir, source, spec.mode, spec.kernel): i for i, d in enumerate(datas)}
                for fut in as_completed(futs):
                    i = futs[fut]
                    try:
                        record(i, fut.result())
                    except Exception as exc:  # the worker process died (crash in native code)
                        record(i, {"error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"})
            except BaseException:
                _stop_point_processes()  # Ctrl-C / SIGTERM: the points running now end too
                raise
            finally:
                ex.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt:
        interrupted = True
    done_rows = [r for r in rows if r is not None]
    table = _make_table(done_rows, columns)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "sweep.csv"
    _write_csv(csv_path, table)
    meta = {
        "sweep": str(spec.path), "scenario": str(spec.scenario), "mode": spec.mode,
        "kernel": spec.kernel if spec.mode == "run" else None, "grid": spec.grid, "set": spec.fixed,
        "ran_on": where, "wall_s": time.monotonic() - t0, "interrupted": interrupted,
        "rows": [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in done_rows],
    }
    write_text(out / "sweep.json", json.dumps(meta, indent=1, default=str) + "\n")
    plotted = _plot(out / "sweep.png", spec, table) if done_rows else False
    say(f"wrote {csv_path}, {out / 'sweep.json'}" + (f", {out / 'sweep.png'}" if plotted else ""))
    if hasattr(table, "attrs"):
        table.attrs["csv"] = str(csv_path)
    if interrupted:
        raise SweepInterrupted(len(done_rows), n, out, table)
    return table


def _run_dask(scheduler: str, datas: list[dict], base_dir: str, source: str, spec: SweepSpec,
              record: Callable[[int, dict], None], say: Callable[[str], None], timeout_s: float = 10.0) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise InputError("--scheduler", None, "needs dask.distributed: pip install 'ns3wormhole[sweep]'") from None
    try:
        client = Client(scheduler, timeout=f"{timeout_s}s")
    except (OSError, TimeoutError) as exc:
        raise InputError("--scheduler", None, f"cannot connect to the Dask scheduler at {scheduler}: {exc}") from None
    try:
        nworkers = len(client.scheduler_info().get("workers", {}))
        say(f"sweep {spec.path}: {len(datas)} points ({spec.mode}) on Dask scheduler {scheduler} ({nworkers} workers)")
        futs = {}
        for i, d in enumerate(datas):
            fut = client.submit(run_point_isolated, d, base_dir, source, spec.mode, spec.kernel, pure=False,
                                key=f"ns3wormhole-point-{i}-{os.getpid()}-{time.time_ns()}")
            futs[fut] = i
        try:
            for fut in as_completed(list(futs)):
                i = futs[fut]
                try:
                    record(i, fut.result())
                except Exception as exc:
                    record(i, {"error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"})
        except KeyboardInterrupt:
            client.cancel(list(futs))
            raise
    finally:
        client.close()


if __name__ == "__main__":  # one sweep point in a fresh process: python -m ns3wormhole.sweep IN.json OUT.json
    sys.exit(_point_main(sys.argv[1:]))
