"""``ns3-wormhole compare --report DIR``: a Markdown summary and PNG plots of a
baseline-vs-Wormhole comparison (needs matplotlib: ``pip install 'ns3wormhole[plot]'``).

Plots:

* ``fct_cdf.png`` -- the CDF of flow completion times under both kernels;
* ``fct_error.png`` -- per-flow |FCT_w - FCT_b| / FCT_b against flow size;
* ``rates.png`` -- the delivered rate of a few flows over time under both kernels,
  with the intervals Wormhole fast-forwarded shaded.

The rate plot needs per-flow rate samples (fabric ``rate_sample_interval_ns``); the CLI
turns them on (10 us) when ``--report`` is given. A delivered rate is the derivative of
a flow's delivered bytes between samples. When Wormhole fast-forwards a partition by dT
it credits each flow the bytes of the skipped time at once and parks the partition's
events for dT: in the samples that is a jump of delivered bytes far above any link's
rate, followed by no progress until the flow resumes. Those intervals are shaded, and
the rate over them is drawn as the credited bytes spread over the interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .compare import format_pct, node_of_flow
from .outputs import write_figure, write_text
from .scenario import ScenarioComparison, format_duration_ns

__all__ = ["write_report", "skipped_intervals", "delivered_rate", "have_matplotlib"]

BASE_COLOR = "#1f77b4"
WORM_COLOR = "#d62728"
SKIP_COLOR = "#ffbf00"


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# --------------------------------------------------------------------------- rate series


@dataclass
class RateSeries:
    time_ns: np.ndarray  # sample times (step ends)
    rate_bps: np.ndarray  # delivered rate over the step ending at time_ns[i]
    skips: list[tuple[int, int]]  # fast-forwarded intervals [start_ns, end_ns]


def _flow_samples(rates: np.ndarray, flow: int, start_ns: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One flow's (time, delivered bytes) samples; with ``start_ns`` a (start, 0) sample
    comes first, so a skip before the first sample shows as a jump too."""
    s = rates[rates["flow"] == flow]
    order = np.argsort(s["time_ns"], kind="stable")
    t, d = s["time_ns"][order].astype(np.int64), s["delivered_bytes"][order].astype(np.int64)
    if start_ns is not None and (t.size == 0 or t[0] > start_ns):
        t, d = np.concatenate([[start_ns], t]), np.concatenate([[0], d])
    return t, d


def skipped_intervals(t: np.ndarray, delivered: np.ndarray, max_rate_bps: float, finish_ns: int | None = None) -> list[tuple[int, int, int]]:
    """``(start_ns, end_ns, credited_bytes)`` of each fast-forward seen in one flow's
    samples: a step whose delivered bytes exceed what ``1.5 x max_rate_bps`` could
    carry, up to the first later sample where the flow makes progress again (or its
    finish)."""
    out: list[tuple[int, int, int]] = []
    if t.size < 2:
        return out
    dt = np.diff(t)
    db = np.diff(delivered)
    possible = 1.5 * max_rate_bps * np.maximum(dt, 1) / 8e9
    jumps = np.flatnonzero(db > possible + 2 * 1500)
    for j in jumps:
        start = int(t[j])
        later = np.flatnonzero(db[j + 1 :] > 0)
        if later.size:
            end = int(t[j + 1 + later[0]])
        else:
            end = int(finish_ns) if finish_ns is not None and finish_ns > t[j + 1] else int(t[-1])
        out.append((start, end, int(db[j])))
    return out


def delivered_rate(rates: np.ndarray, flow: int, max_rate_bps: float, finish_ns: int | None = None,
                   start_ns: int | None = None, smooth: int = 1) -> RateSeries:
    """Delivered rate of ``flow`` over time; fast-forwarded intervals are replaced by
    their average (credited bytes / interval) and returned in ``skips``."""
    t, d = _flow_samples(rates, flow, start_ns)
    if t.size < 2:
        return RateSeries(np.zeros(0), np.zeros(0), [])
    skips = skipped_intervals(t, d, max_rate_bps, finish_ns)
    dt = np.diff(t).astype(float)
    r = np.diff(d) * 8e9 / np.maximum(dt, 1)
    tt = t[1:].astype(float)
    for start, end, credited in skips:
        inside = (tt > start) & (tt <= end)
        r[inside] = credited * 8e9 / max(end - start, 1)
    if smooth > 1 and r.size > smooth:
        kernel = np.ones(smooth)
        r = np.convolve(r, kernel, mode="same") / np.convolve(np.ones_like(r), kernel, mode="same")
    return RateSeries(tt, r, [(s, e) for s, e, _ in skips])


# --------------------------------------------------------------------------- plots


def _log_axis(axis) -> None:
    """Log scale with labels at 1, 2 and 5 of each decade only: the default puts a
    label on every minor tick of a short range, and they overlap."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _fct_cdf(plt, cmp: ScenarioComparison, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for res, label, color, ls in ((cmp.baseline, "baseline (ns-3 default kernel)", BASE_COLOR, "-"),
                                  (cmp.wormhole, "Wormhole", WORM_COLOR, "--")):
        if res is None:
            continue
        f = res.flows
        fct = np.sort(f["fct_ns"][f["finish_ns"] >= 0].astype(float)) / 1e6
        if fct.size == 0:
            continue
        y = np.arange(1, fct.size + 1) / fct.size
        ax.step(np.concatenate([[fct[0]], fct]), np.concatenate([[0], y]), where="post", color=color, ls=ls, lw=1.8,
                label=f"{label}, {fct.size} flows")
    ax.set_xlabel("flow completion time (ms)")
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.02)
    lo_hi = [r.flows["fct_ns"][r.flows["finish_ns"] >= 0] for r in (cmp.baseline, cmp.wormhole) if r is not None]
    allf = np.concatenate(lo_hi) if lo_hi else np.zeros(0)
    if allf.size and allf.min() > 0 and allf.max() / allf.min() > 20:
        ax.set_xscale("log")
        _log_axis(ax.xaxis)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right", fontsize=9)
    else:
        ax.text(0.5, 0.5, "no flow completed", ha="center", va="center", transform=ax.transAxes)
    ax.set_title("FCT distribution under both kernels")
    fig.tight_layout()
    write_figure(path, fig, dpi=120)
    plt.close(fig)


def error_x_axis(cmp: ScenarioComparison) -> str:
    """"size" when the flows have several sizes; else "fct" (baseline FCT), since
    against one size every error falls in one column."""
    sizes = {r["bytes"] for r in cmp.matched_flows() if r["error"] is not None}
    return "size" if len(sizes) >= 4 else "fct"


def _fct_error(plt, cmp: ScenarioComparison, path: Path) -> None:
    rows = [r for r in cmp.matched_flows() if r["error"] is not None]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    by = error_x_axis(cmp)
    if rows:
        x = np.array([r["bytes"] / 1e6 if by == "size" else r["fct_baseline_ns"] / 1e6 for r in rows], dtype=float)
        err = np.array([r["error"] for r in rows]) * 100
        ax.scatter(x, err, s=18, alpha=0.7, color=WORM_COLOR, edgecolors="none", label=f"{len(rows)} flows")
        s = cmp.fct_error
        ax.axhline(s.mean * 100, color="0.3", lw=1, ls="--", label=f"mean {format_pct(s.mean)}")
        ax.axhline(s.max * 100, color="0.3", lw=1, ls=":", label=f"max {format_pct(s.max)}")
        if x.min() > 0 and x.max() / x.min() > 20:
            ax.set_xscale("log")
            _log_axis(ax.xaxis)
        ax.set_ylim(bottom=0, top=max(err.max() * 1.15, 1e-6))
        ax.legend(loc="upper right", fontsize=9)
    else:
        ax.text(0.5, 0.5, "no flow completed under both kernels", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("flow size (MB)" if by == "size" else "flow completion time under the baseline (ms)")
    ax.set_ylabel("|FCT_wormhole - FCT_baseline| / FCT_baseline (%)")
    ax.set_title("Per-flow FCT error against " + ("flow size" if by == "size" else "baseline FCT"))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    write_figure(path, fig, dpi=120)
    plt.close(fig)


def _pick_flows(cmp: ScenarioComparison, n: int = 4) -> list[int]:
    """A few flows worth looking at: those Wormhole skipped longest, then the largest
    (the caption says which applies)."""
    f = cmp.baseline.flows
    if len(f) == 0:
        return []
    worm = cmp.wormhole
    skipped = {}
    if worm is not None and worm.flow_time_skipped_ns:
        # keyed by the kernel's flow id; for LLM workloads the comparison's ids are DAG nodes
        skipped = dict(worm.flow_time_skipped_ns)
        if cmp.wormhole_workload is not None:
            node_of = node_of_flow(cmp.wormhole_workload)
            skipped = {node_of[k]: v for k, v in skipped.items() if k in node_of}
    order = sorted(range(len(f)), key=lambda i: (-skipped.get(int(f["id"][i]), 0), -int(f["bytes"][i]), int(f["id"][i])))
    return [int(f["id"][i]) for i in order[:n]]


def _rates_for(cmp: ScenarioComparison, kernel: str) -> tuple[np.ndarray, dict[int, int], dict[int, int]]:
    """Rate samples of a kernel with flow ids mapped to the comparison's ids, and finish times."""
    res = cmp.baseline if kernel == "baseline" else cmp.wormhole
    wl = cmp.baseline_workload if kernel == "baseline" else cmp.wormhole_workload
    if res is None:
        return np.zeros(0, dtype=[("time_ns", "i8"), ("flow", "u4"), ("delivered_bytes", "u8")]), {}, {}
    raw = wl.network if wl is not None else res
    rates = raw.rates.copy()
    id_map = {int(a): int(b) for a, b in zip(raw.flows["id"], res.flows["id"])}
    if wl is not None and len(rates):
        rates["flow"] = np.array([id_map.get(int(x), 0xFFFFFFFF) for x in rates["flow"]], dtype=rates["flow"].dtype)
    finish = {int(i): (int(fn), int(st)) for i, fn, st in zip(res.flows["id"], res.flows["finish_ns"], res.flows["start_ns"])}
    return rates, finish, id_map


def _rates(plt, cmp: ScenarioComparison, path: Path, max_rate_bps: float) -> int:
    flows = _pick_flows(cmp)
    b_rates, b_finish, _ = _rates_for(cmp, "baseline")
    w_rates, w_finish, _ = _rates_for(cmp, "wormhole")
    n = max(1, len(flows))
    # one y-scale for every panel, so the flows' rates compare at a glance
    fig, axes = plt.subplots(n, 1, figsize=(7.5, 1.9 * n + 0.9), sharex=True, sharey=True, squeeze=False)
    n_skips = 0
    if len(b_rates) == 0:
        axes[0, 0].text(0.5, 0.5, "no rate samples (fabric.rate_sample_interval_ns = 0)", ha="center", va="center",
                        transform=axes[0, 0].transAxes)
    for ax, fid in zip(axes[:, 0], flows):
        nsamp = int(np.sum(b_rates["flow"] == fid)) if len(b_rates) else 0
        smooth = max(1, nsamp // 250)
        b = delivered_rate(b_rates, fid, max_rate_bps, *b_finish.get(fid, (None, None)), smooth=smooth)
        ax.plot(b.time_ns / 1e6, b.rate_bps / 1e9, color=BASE_COLOR, lw=1.2, label="baseline")
        if len(w_rates):
            w = delivered_rate(w_rates, fid, max_rate_bps, *w_finish.get(fid, (None, None)), smooth=smooth)
            ax.plot(w.time_ns / 1e6, w.rate_bps / 1e9, color=WORM_COLOR, lw=1.2, ls="--", label="Wormhole")
            for k, (s, e) in enumerate(w.skips):
                ax.axvspan(s / 1e6, e / 1e6, color=SKIP_COLOR, alpha=0.25, lw=0,
                           label="fast-forwarded (Wormhole)" if k == 0 else None)
            n_skips += len(w.skips)
        ax.set_ylabel("Gbps")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        what = f"flow of DAG node {fid}" if cmp.baseline_workload is not None else f"flow {fid}"
        ax.text(0.01, 0.95, what, transform=ax.transAxes, va="top", fontsize=9,
                bbox={"facecolor": "white", "alpha": 0.7, "lw": 0})
    handles, labels = [], []
    for ax in axes[:, 0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    top = axes[0, 0]
    if handles:
        lo, hi = top.get_ylim()
        top.set_ylim(lo, hi * 1.35)
        top.legend(handles, labels, loc="upper right", ncol=len(handles), fontsize=8, framealpha=0.9)
    top.set_title("Delivered rate of selected flows (derivative of delivered bytes)", fontsize=10)
    axes[-1, 0].set_xlabel("simulated time (ms)")
    fig.tight_layout()
    write_figure(path, fig, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return n_skips


# --------------------------------------------------------------------------- report


def _pct(x: float | None) -> str:
    return format_pct(x)


def write_report(cmp: ScenarioComparison, out_dir: str | Path, *, json_name: str | None = None,
                 extra: dict | None = None) -> list[Path]:
    """Write ``report.md``, ``fct_cdf.png``, ``fct_error.png`` and ``rates.png`` into
    ``out_dir`` (created). ``extra``: the CLI's JSON, whose ``noise`` (reference's own
    spread) and ``repeat`` (median wall times) are reported too. Returns the files written."""
    plt = _pyplot()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sc = cmp.scenario
    max_rate = float(sc.topology.rate_bps.max()) if sc is not None and sc.topology.num_links else 100e9
    files = [out / "fct_cdf.png", out / "fct_error.png", out / "rates.png"]
    _fct_cdf(plt, cmp, files[0])
    _fct_error(plt, cmp, files[1])
    n_skips = _rates(plt, cmp, files[2], max_rate)

    d = cmp.as_dict()
    if extra:
        d.update({k: extra[k] for k in ("noise", "repeat", "speedup") if k in extra})
    b, w = d["baseline"], d["wormhole"]
    fe = d["fct_error"]
    lines = [f"# ns3-wormhole comparison: {sc.label if sc else 'scenario'}", ""]
    if sc is not None:
        lines += [f"Scenario file `{sc.path or sc.label}`. {sc.summary()}.", ""]
        if sc.description:
            lines += [sc.description, ""]
    if d["interrupted"]:
        lines += ["**Interrupted (Ctrl-C): the numbers below are partial.**", ""]
    lines += ["| | baseline | Wormhole |", "| --- | ---: | ---: |"]

    def row(name: str, fb, fw) -> None:
        lines.append(f"| {name} | {fb} | {fw} |")

    row("wall time", f"{b['wall_s']:.3f} s", f"{w['wall_s']:.3f} s" if w else "n/a")
    row("events", f"{b['events']:,}", f"{w['events']:,}" if w else "n/a")
    row("simulated time", format_duration_ns(b["sim_time_s"] * 1e9), format_duration_ns(w["sim_time_s"] * 1e9) if w else "n/a")
    row("makespan (last flow end)", format_duration_ns(b["makespan_ns"]) if b["makespan_ns"] else "n/a",
        format_duration_ns(w["makespan_ns"]) if w and w["makespan_ns"] else "n/a")
    row("flows completed", f"{b['flows_completed']} / {d['flows']}", f"{w['flows_completed']} / {d['flows']}" if w else "n/a")
    if w:
        st = w["stats"]
        row("fast-forwards", "", f"{st.get('fast_forwards', 0):,}")
        row("time skipped (sum over partitions)", "", format_duration_ns(st.get("time_skipped_ns", 0)))
    if b["iteration_times_ns"]:
        row("iteration times", ", ".join(format_duration_ns(x) for x in b["iteration_times_ns"]),
            ", ".join(format_duration_ns(x) for x in w["iteration_times_ns"]) if w else "n/a")
    lines += [""]
    lines += ["| accuracy and speed | |", "| --- | ---: |"]
    runs = f", median of {d['repeat']['runs']} runs per kernel" if "repeat" in d else ""
    lines.append(f"| speedup (baseline wall / Wormhole wall{runs}) | {d['speedup']:.2f}x |" if d["speedup"] else "| speedup | n/a |")
    lines.append(f"| event ratio (baseline / Wormhole events) | {d['event_ratio']:.2f}x |" if d["event_ratio"] else "| event ratio | n/a |")
    lines.append(f"| FCT error mean / p50 / p99 / max | {_pct(fe['mean'])} / {_pct(fe['p50'])} / {_pct(fe['p99'])} / {_pct(fe['max'])} |"
                 if d["flows_compared"] else "| FCT error | n/a: no flow completed under both kernels |")
    lines.append(f"| makespan error | {_pct(d['makespan_error'])} |")
    if d["iteration_time_error"] is not None:
        lines.append(f"| iteration time error (max over iterations) | {_pct(d['iteration_time_error'])} |")
    lines.append(f"| flows compared | {d['flows_compared']} of {d['flows']} |")
    if "noise" in d:
        n = d["noise"]
        span = "makespan" if "makespan" in n["spread"] else "iteration_time"
        ours = {"fct_mean": fe["mean"], "fct_max": fe["max"],
                span: d["makespan_error"] if span == "makespan" else d["iteration_time_error"]}
        lines += ["", f"Against the reference's own spread ({n['runs']} perturbed baseline run{'s' if n['runs'] != 1 else ''}, "
                  f"each with {n['perturbation']}):", "",
                  "| measure | Wormhole's error | reference's own spread | accuracy target | judged |",
                  "| --- | ---: | ---: | ---: | --- |"]
        for k, label in (("fct_mean", "FCT error mean"), ("fct_max", "FCT error max"), (span, span.replace("_", " ") + " error")):
            j = n["judged"][k]
            lines.append(f"| {label} | {format_pct(ours[k])} | {format_pct(n['spread'][k])} | "
                         f"{format_pct(n['targets'][k])} | {'**outside**' if j == 'OUTSIDE' else j} |")
        lines += ["", f"**{n['verdict']}.**"]
    interval = sc.fabric.rate_sample_interval_ns if sc is not None else 0
    n_ff = (w or {}).get("stats", {}).get("fast_forwards", 0)
    lines += [
        "",
        "## FCT distribution",
        "",
        "![FCT CDF](fct_cdf.png)",
        "",
        "## Per-flow FCT error against " + ("flow size" if error_x_axis(cmp) == "size" else "baseline FCT"),
        "",
        "![FCT error](fct_error.png)",
        "",
        "## Rates over time",
        "",
        "![rates](rates.png)",
        "",
        f"Delivered rate (derivative of delivered bytes, sampled every {format_duration_ns(interval)}) of "
        + (f"the flows Wormhole skipped longest ({n_skips} skipped flow intervals shown, {n_ff} fast-forwards in the "
           "run). Shaded: where the kernel credited the skipped bytes at once and parked the partition; the dashed "
           "line shows the credited bytes spread over the interval."
           if n_ff else "the largest flows (Wormhole fast-forwarded nothing in this run: it simulated every packet).")
        + " Rate sampling adds events to both runs, so wall times here are slightly above those of a run "
        "without `--report`.",
        "",
    ]
    if json_name:
        lines += [f"Full numbers: `{json_name}`.", ""]
    write_text(out / "report.md", "\n".join(lines))
    return [out / "report.md", *files]
