"""LLM-training workloads: specs and presets, rank placement, collectives, the step DAG.

Typical use::

    from ns3wormhole.workload import preset, build_dag, reference_execute

    w = preset("gpt-13b", iterations=2)     # paper Table 1: TP8-DP4-PP4 on 128 GPUs
    dag = build_dag(w)                       # numpy arrays + CSR dependencies
    tl = reference_execute(dag, rate_bps=100e9, latency_ns=2000)   # uncongested timing
    tl.iteration_times_ns

The DAG is what the C++ ``ns3::WorkloadExecutor`` runs on the RDMA model (nodes become
compute delays or flows; a node starts when all its predecessors have finished).
Modules: :mod:`.models` (specs, presets), :mod:`.placement`, :mod:`.collectives`,
:mod:`.dag` (DAG, builder, schedules, reference executor), :mod:`.aicb` (SimAI/AICB files).
"""

from __future__ import annotations

from .aicb import AicbWorkload, aicb_dag, read_aicb
from .collectives import all_to_all, ring_allgather, ring_allreduce, ring_allreduce_time_ns, ring_reducescatter
from .dag import (
    COLL_OP_NAMES,
    KIND_NAMES,
    OP_DELAY,
    OP_FLOW,
    PHASE_BWD,
    PHASE_FWD,
    PHASE_NONE,
    PHASE_OPT,
    Dag,
    DagBuilder,
    Timeline,
    build_dag,
    gpipe,
    one_f_one_b,
    reference_execute,
)
from .models import PRESETS, ComputeSpec, ModelSpec, ParallelSpec, Precision, Workload, gpt, moe, preset, preset_names
from .placement import Placement

__all__ = [
    "AicbWorkload",
    "aicb_dag",
    "read_aicb",
    "COLL_OP_NAMES",
    "KIND_NAMES",
    "OP_DELAY",
    "OP_FLOW",
    "PHASE_BWD",
    "PHASE_FWD",
    "PHASE_NONE",
    "PHASE_OPT",
    "PRESETS",
    "ComputeSpec",
    "Dag",
    "DagBuilder",
    "ModelSpec",
    "ParallelSpec",
    "Placement",
    "Precision",
    "Timeline",
    "Workload",
    "all_to_all",
    "build_dag",
    "gpipe",
    "gpt",
    "moe",
    "one_f_one_b",
    "preset",
    "preset_names",
    "reference_execute",
    "ring_allgather",
    "ring_allreduce",
    "ring_allreduce_time_ns",
    "ring_reducescatter",
]
