"""Result files: per-flow CSV, HPCC's ``fct.txt``/``pfc.txt``/qlen formats, samples.

HPCC's formats (``scratch/third.cc``), so its users' analysis scripts run on ours:

* fct: one line per completed flow, in completion order:
  ``sip dip sport dport size_bytes start_ns fct_ns standalone_fct_ns`` with the IPs
  in hex (host ``i`` is ``11.0.x.y``: ``0x0b000001 + (i // 256) * 0x10000 + (i % 256) * 0x100``),
  source ports from 10000 per sending host in flow order, and HPCC's standalone FCT:
  base RTT (twice the path's propagation delay plus one payload's serialization
  per hop) + the bytes with headers over the path's slowest link.
* pfc: ``time_ns node node_type if_index type`` (type 1 pause, 0 resume; node type
  0 host, 1 switch), one line per PFC frame received, at the paused device;
  HPCC numbers a node's devices from 1 (0 is the loopback): ``if_index`` is our port + 1.
* qlen: at every multiple of 100 ms of simulated time inside the monitor window,
  ``time: T`` and one line ``node if_index c0 c1 ...`` per switch port, ``ck`` the
  samples (one per 100 ns) that found k KB queued since the window opened.

``flows.csv`` carries our own ideal FCT (``ideal_fct_ns``: alone on its path,
store-and-forward, ACK back; see docs/rdma-model-contract.md) and the slowdown
FCT / ideal FCT.  Every file is written atomically (:func:`ns3wormhole.outputs.write_text`).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from .outputs import write_text
from .run import RunResult
from .topology import Topology

__all__ = [
    "hpcc_ip",
    "standalone_fct_ns",
    "fct_lines",
    "pfc_lines",
    "qlen_lines",
    "flow_rows",
    "write_run_outputs",
    "write_compare_flows",
]

HPCC_FIRST_PORT = 10000
HPCC_DPORT = 100


def _csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow(["" if v is None else v for v in row])
    return buf.getvalue()


def hpcc_ip(node: int) -> int:
    """HPCC's address of host ``node`` (``node_id_to_ip`` in third.cc)."""
    return 0x0B000001 + (node // 256) * 0x00010000 + (node % 256) * 0x00000100


def standalone_fct_ns(topology: Topology, path: Sequence[int], size: int, mtu: int, header: int) -> int:
    """HPCC's standalone FCT of a flow of ``size`` bytes on ``path`` (link ids)."""
    if not path:
        return 0
    rates = [int(topology.rate_bps[l]) for l in path]
    delay = sum(int(topology.delay_ns[l]) for l in path)
    tx = sum(mtu * 1_000_000_000 * 8 // r for r in rates)
    total = size + ((size - 1) // mtu + 1) * header
    return 2 * delay + tx + total * 8_000_000_000 // min(rates)


def _source_ports(flows: np.ndarray) -> np.ndarray:
    """Source port of every flow: 10000, 10001, ... per sending host, in start order."""
    order = np.lexsort((flows["id"], flows["start_ns"]))
    ports = np.zeros(len(flows), dtype=np.int64)
    nxt: dict[int, int] = {}
    for i in order:
        s = int(flows["src"][i])
        ports[i] = nxt.get(s, HPCC_FIRST_PORT)
        nxt[s] = ports[i] + 1
    return ports


def fct_lines(run: RunResult, topology: Topology, mtu: int, header: int,
              dport: np.ndarray | None = None) -> list[str]:
    """HPCC fct.txt lines of a run (completed flows, in completion order)."""
    f = run.flows
    sport = _source_ports(f)
    done = np.flatnonzero(f["finish_ns"] >= 0)
    done = done[np.lexsort((f["id"][done], f["finish_ns"][done]))]
    out = []
    for i in done:
        path = run.paths[i] if i < len(run.paths) else []
        size = int(f["bytes"][i])
        dp = int(dport[i]) if dport is not None and i < len(dport) else HPCC_DPORT
        out.append(f"{hpcc_ip(int(f['src'][i])):08x} {hpcc_ip(int(f['dst'][i])):08x} {sport[i]} {dp} {size} "
                   f"{int(f['start_ns'][i])} {int(f['fct_ns'][i])} {standalone_fct_ns(topology, path, size, mtu, header)}")
    return out


def pfc_lines(run: RunResult, topology: Topology) -> list[str]:
    """HPCC pfc.txt lines: every PFC frame received, in time order."""
    e = run.pfc_events
    if e is None or len(e) == 0:
        return []
    order = np.argsort(e["time_ns"], kind="stable")
    sw = np.asarray(topology.is_switch)
    return [f"{int(e['time_ns'][i])} {int(e['node'][i])} {int(bool(sw[e['node'][i]]))} {int(e['port'][i]) + 1} "
            f"{int(e['pause'][i])}" for i in order]


def qlen_lines(run: RunResult) -> list[str]:
    """HPCC QLEN_MON_FILE lines."""
    out: list[str] = []
    last = None
    for t, node, port, counts in run.qlen:
        if t != last:
            out.append(f"time: {t}")
            last = t
        out.append(f"{node} {port + 1}" + "".join(f" {c}" for c in counts))
    return out


def _text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def flow_rows(run: RunResult, dag_node: dict[int, int] | None = None) -> tuple[list[str], list[list[object]]]:
    f = run.flows
    header = ["id", "src", "dst", "bytes", "start_ns", "finish_ns", "fct_ns", "ideal_fct_ns", "slowdown"]
    if dag_node is not None:
        header.append("dag_node")
    rows = []
    for i in range(len(f)):
        done = int(f["finish_ns"][i]) >= 0
        ideal = float(f["ideal_fct_ns"][i])
        fct = int(f["fct_ns"][i]) if done else None
        row: list[object] = [int(f["id"][i]), int(f["src"][i]), int(f["dst"][i]), int(f["bytes"][i]),
                             int(f["start_ns"][i]), int(f["finish_ns"][i]) if done else None, fct,
                             ideal if ideal > 0 else None,
                             f"{fct / ideal:.6g}" if fct is not None and ideal > 0 else None]
        if dag_node is not None:
            row.append(dag_node.get(int(f["id"][i])))
        rows.append(row)
    return header, rows


def write_run_outputs(out_dir: str | Path, run: RunResult, topology: Topology, mtu: int, header: int,
                      dport: np.ndarray | None = None, dag_node: dict[int, int] | None = None) -> list[Path]:
    """flows.csv, fct.txt, pfc.txt, and queues.csv / rates.csv / qlen.txt when the
    run sampled them, into ``out_dir`` (created). Returns the files written."""
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    files = [write_text(d / "flows.csv", _csv_text(*flow_rows(run, dag_node))),
             write_text(d / "fct.txt", _text(fct_lines(run, topology, mtu, header, dport))),
             write_text(d / "pfc.txt", _text(pfc_lines(run, topology)))]
    if len(run.queues):
        q = run.queues
        files.append(write_text(d / "queues.csv", _csv_text(
            ["time_ns", "node", "link", "bytes"],
            zip(q["time_ns"].tolist(), q["node"].tolist(), q["link"].tolist(), q["bytes"].tolist()))))
    if len(run.rates):
        r = run.rates
        files.append(write_text(d / "rates.csv", _csv_text(
            ["time_ns", "flow", "rate_bps", "delivered_bytes"],
            zip(r["time_ns"].tolist(), r["flow"].tolist(), r["rate_bps"].tolist(), r["delivered_bytes"].tolist()))))
    if run.qlen:
        files.append(write_text(d / "qlen.txt", _text(qlen_lines(run))))
    return files


def write_compare_flows(path: str | Path, per_flow: list[dict]) -> Path:
    """The comparison's flows.csv: both kernels' FCTs, the ideal FCT, slowdowns, the error."""
    header = ["id", "src", "dst", "bytes", "start_ns", "ideal_fct_ns", "fct_baseline_ns", "fct_wormhole_ns",
              "slowdown_baseline", "slowdown_wormhole", "error"]

    def slow(fct: int | None, ideal: float | None) -> str | None:
        return f"{fct / ideal:.6g}" if fct and ideal else None

    rows = [[p["id"], p["src"], p["dst"], p["bytes"], p.get("start_ns"), p.get("ideal_fct_ns"),
             p["fct_baseline_ns"], p["fct_wormhole_ns"], slow(p["fct_baseline_ns"], p.get("ideal_fct_ns")),
             slow(p["fct_wormhole_ns"], p.get("ideal_fct_ns")),
             None if p["error"] is None else f"{p['error']:.6g}"] for p in per_flow]
    return write_text(path, _csv_text(header, rows))
