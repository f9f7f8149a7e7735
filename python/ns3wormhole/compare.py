"""Side-by-side runs: the same scenario and seed under ns-3's default kernel
and under Wormhole, with the errors that say how far apart they are."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fabric import FabricConfig
from .flows import FlowSet
from .run import RunResult, WormholeConfig, run_flows
from .topology import Topology


@dataclass
class ErrorSummary:
    mean: float
    p50: float
    p99: float
    max: float

    @classmethod
    def of(cls, errors: np.ndarray) -> "ErrorSummary":
        if errors.size == 0:
            return cls(0.0, 0.0, 0.0, 0.0)
        return cls(
            float(errors.mean()),
            float(np.percentile(errors, 50)),
            float(np.percentile(errors, 99)),
            float(errors.max()),
        )

    def as_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "p50": self.p50, "p99": self.p99, "max": self.max}


def fct_errors(baseline: RunResult, wormhole: RunResult) -> np.ndarray:
    """Per-flow |FCT_w - FCT_b| / FCT_b, matched by flow id, over flows that
    completed under both kernels."""
    b = dict(zip(baseline.flows["id"].tolist(), baseline.flows["fct_ns"].tolist()))
    w = dict(zip(wormhole.flows["id"].tolist(), wormhole.flows["fct_ns"].tolist()))
    ids = [i for i in b if b[i] > 0 and w.get(i, -1) > 0]
    if not ids:
        return np.zeros(0)
    bb = np.array([b[i] for i in ids], dtype=float)
    ww = np.array([w[i] for i in ids], dtype=float)
    return np.abs(ww - bb) / bb


@dataclass
class Comparison:
    baseline: RunResult
    wormhole: RunResult

    @property
    def speedup(self) -> float:
        return self.baseline.wall_s / self.wormhole.wall_s if self.wormhole.wall_s > 0 else float("inf")

    @property
    def event_ratio(self) -> float:
        return self.baseline.events / self.wormhole.events if self.wormhole.events else float("inf")

    @property
    def fct_error(self) -> ErrorSummary:
        return ErrorSummary.of(fct_errors(self.baseline, self.wormhole))

    @property
    def makespan_error(self) -> float:
        b = self.baseline.makespan_ns
        return abs(self.wormhole.makespan_ns - b) / b if b else 0.0

    @property
    def unfinished(self) -> int:
        """Flows that completed under one kernel but not the other."""
        return int(np.sum(self.baseline.completed) != np.sum(self.wormhole.completed))


def compare_flows(
    topology: Topology,
    flows: FlowSet,
    fabric: FabricConfig | None = None,
    wormhole: WormholeConfig | None = None,
    stop_ns: int = 0,
    progress=None,
) -> Comparison:
    """Run ``flows`` under both kernels with the same fabric and seed."""
    base = run_flows(topology, flows, fabric, "baseline", wormhole, stop_ns, progress)
    worm = run_flows(topology, flows, fabric, "wormhole", wormhole, stop_ns, progress, check=False)
    return Comparison(base, worm)
