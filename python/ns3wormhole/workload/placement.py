"""Rank placement: which GPU plays which (tp, dp, pp) role, and the communication groups.

Order (Megatron-LM's default, TP fastest, then DP, then PP)::

    rank = tp + TP * (dp + DP * pp)          GPU id = rank,  server = rank // gpus_per_server

so with ``TP == gpus_per_server`` (8) a TP group is exactly one server, the DP group of a
(tp, pp) pair is one GPU in each of ``DP`` servers, all with the same local index ``tp`` (one
rail of a rail-optimised fabric), and the next pipeline stage is ``TP*DP`` ranks further on
(same local index, another server).  GPU ids are host ids of the topology builders in
:mod:`ns3wormhole.topology` (hosts first, ``server * gpus_per_server + local``); pass
``gpu_of_rank`` to place ranks on other hosts.

Expert parallelism (``EP``) folds into the ``TP*DP`` GPUs of a stage (expert tensor-parallel
size 1).  The stage's GPUs are ordered DP-fastest, ``k = dp + DP * tp``, and cut into
consecutive runs of ``EP``: EP group ``g`` is ``k in [g*EP, (g+1)*EP)``.  Hence:

* ``EP <= DP``: an EP group is ``EP`` consecutive DP replicas of one TP rank -- one GPU per
  server, all on one rail (EP traffic crosses servers, like DP);
* ``EP > DP``: it is ``EP/DP`` TP ranks in each of the ``DP`` servers of the stage (Table 1's
  TP8-EP8-DP4: 2 GPUs in each of 4 servers), so some EP pairs are intra-server (NVLink).

GPUs at the same position ``e`` of their EP groups hold the same experts and form the
expert-data-parallel (EDP) group ``{g*EP + e : g}`` of size ``TP*DP/EP`` that all-reduces expert
gradients.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .models import ParallelSpec

__all__ = ["Placement"]


@dataclass(frozen=True)
class Placement:
    """Ranks, coordinates and groups for a :class:`ParallelSpec` (arrays of GPU ids)."""

    parallel: ParallelSpec
    gpu_of_rank: np.ndarray | None = field(default=None, compare=False)
    """Optional ``int[world]`` map rank -> GPU (host) id; identity by default."""

    def __post_init__(self) -> None:
        world = self.parallel.world
        if self.gpu_of_rank is None:
            g = np.arange(world, dtype=np.int64)
        else:
            g = np.asarray(self.gpu_of_rank, dtype=np.int64).reshape(-1)
            if g.size != world:
                raise ValueError(f"gpu_of_rank has {g.size} entries for {world} ranks")
            if np.unique(g).size != world or (g < 0).any():
                raise ValueError("gpu_of_rank must map ranks to distinct non-negative GPU ids")
        object.__setattr__(self, "gpu_of_rank", g)

    # ---------------------------------------------------------------- coordinates
    @property
    def world(self) -> int:
        return self.parallel.world

    @property
    def stage_size(self) -> int:
        return self.parallel.tp * self.parallel.dp

    def rank(self, tp: int, dp: int, pp: int) -> int:
        p = self.parallel
        return tp + p.tp * (dp + p.dp * pp)

    def coords(self, rank: int | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tp, dp, pp) of ``rank``."""
        p = self.parallel
        r = np.asarray(rank)
        return r % p.tp, (r // p.tp) % p.dp, r // (p.tp * p.dp)

    def gpu(self, rank: int | np.ndarray) -> np.ndarray:
        return self.gpu_of_rank[np.asarray(rank)]

    def server_of_rank(self, rank: int | np.ndarray) -> np.ndarray:
        """Server of a rank (by rank, so it holds whatever ``gpu_of_rank`` is)."""
        return np.asarray(rank) // self.parallel.gpus_per_server

    def same_server(self, rank_a: np.ndarray, rank_b: np.ndarray) -> np.ndarray:
        return self.server_of_rank(rank_a) == self.server_of_rank(rank_b)

    # ---------------------------------------------------------------- groups (ranks)
    def stage_ranks(self, pp: int) -> np.ndarray:
        """``int[TP*DP]`` ranks of a pipeline stage, local index ``j = tp + TP*dp``."""
        return np.arange(self.stage_size, dtype=np.int64) + pp * self.stage_size

    def tp_groups(self, pp: int) -> np.ndarray:
        """``int[DP, TP]``: the TP groups of a stage (one server each when TP = GPUs per server)."""
        p = self.parallel
        return self.stage_ranks(pp).reshape(p.dp, p.tp)

    def dp_groups(self, pp: int) -> np.ndarray:
        """``int[TP, DP]``: the DP groups of a stage; row ``t`` holds the ranks with tp = t."""
        p = self.parallel
        return self.stage_ranks(pp).reshape(p.dp, p.tp).T.copy()

    def pp_group(self, tp: int, dp: int) -> np.ndarray:
        """``int[PP]``: the pipeline of (tp, dp), stage order."""
        return np.array([self.rank(tp, dp, s) for s in range(self.parallel.pp)], dtype=np.int64)

    def _ep_order(self, pp: int) -> np.ndarray:
        """The stage's ranks in DP-fastest order ``k = dp + DP*tp``."""
        return self.dp_groups(pp).reshape(-1)

    def ep_groups(self, pp: int) -> np.ndarray:
        """``int[TP*DP/EP, EP]``: the EP groups of a stage (see module docstring)."""
        p = self.parallel
        return self._ep_order(pp).reshape(-1, p.ep)

    def edp_groups(self, pp: int) -> np.ndarray:
        """``int[EP, TP*DP/EP]``: expert-data-parallel groups of a stage."""
        return self.ep_groups(pp).T.copy()

    def describe(self) -> str:
        p = self.parallel
        lines = [f"{p.label()} on {p.world} GPUs, {p.gpus_per_server} per server, rank = tp + TP*(dp + DP*pp)"]
        lines.append(f"  TP group of stage 0: {self.tp_groups(0)[0].tolist()}")
        lines.append(f"  DP group of stage 0, tp 0: {self.dp_groups(0)[0].tolist()}")
        if p.pp > 1:
            lines.append(f"  pipeline of tp 0, dp 0: {self.pp_group(0, 0).tolist()}")
        if p.ep > 1:
            lines.append(f"  EP group 0 of stage 0: {self.ep_groups(0)[0].tolist()}")
        return "\n".join(lines)
