"""Collectives decomposed into flows (between servers) and NVLink delays (inside a server).

Every function works on ``G`` independent groups at once: ``groups`` is ``int[G, N]`` of
ranks, ``ready`` is ``int[G, N]`` of node ids (the node after which each rank enters the
collective; -1 = ready at the start).  Each returns ``int[G, N]``: per rank, a zero-length
join node that completes when the rank is done with the collective.  Each group is one
collective instance (its own id in ``Dag.collective``).

Ring algorithms (one ring, ranks in group order, successor ``(c + 1) mod N``), ``S`` bytes
split into ``N`` chunks (sizes differ by at most one byte):

* **reduce-scatter / all-gather**: ``N - 1`` steps; **all-reduce**: reduce-scatter then
  all-gather, ``2(N - 1)`` steps.  In step ``k`` every rank sends one chunk to its successor.
  Step ``k+1`` of rank ``r`` depends on step ``k``'s flow *into* ``r`` and on ``r``'s own step-``k``
  send.  Step 0 from ``r`` to ``r+1`` waits for both to have entered the collective (the
  receiver must post its buffer).  Uncongested, an all-reduce takes
  ``2(N-1) * (latency + S/(N*B))`` (:func:`ring_allreduce_time_ns`).
* **all-to-all**: every rank sends ``bytes_per_pair`` to every other rank, ``N(N-1)``
  transfers, each waiting for sender and receiver to have entered; a rank is done when
  everything addressed to it has arrived.
"""

from __future__ import annotations

import numpy as np

from .dag import (
    COLL_ALLGATHER,
    COLL_ALLREDUCE,
    COLL_ALLTOALL,
    COLL_REDUCESCATTER,
    DagBuilder,
)

__all__ = [
    "all_to_all",
    "chunk_sizes",
    "ring_allgather",
    "ring_allreduce",
    "ring_allreduce_time_ns",
    "ring_reducescatter",
]


def chunk_sizes(total: int, n: int) -> np.ndarray:
    """``total`` bytes in ``n`` chunks; every chunk at least one byte."""
    if total <= 0 or n <= 0:
        raise ValueError(f"chunk_sizes: need total > 0 and n > 0 (total={total}, n={n})")
    base, rem = divmod(int(total), n)
    sizes = np.full(n, base, dtype=np.int64)
    sizes[:rem] += 1
    return np.maximum(sizes, 1)


def ring_allreduce_time_ns(nbytes: float, n: int, rate_bps: float, latency_ns: float = 0.0) -> float:
    """Analytic uncongested ring all-reduce time: ``2(N-1) * (latency + S/N / B)``."""
    if n <= 1:
        return 0.0
    return 2 * (n - 1) * (latency_ns + nbytes / n * 8e9 / rate_bps)


def _prepare(groups: np.ndarray, ready: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    g = np.atleast_2d(np.asarray(groups, dtype=np.int64))
    if ready is None:
        r = np.full(g.shape, -1, dtype=np.int64)
    else:
        r = np.broadcast_to(np.asarray(ready, dtype=np.int64), g.shape)
    srt = np.sort(g, axis=1)
    dup = (srt[:, 1:] == srt[:, :-1]).any(axis=1)
    if dup.any():
        raise ValueError(f"collective group {g[np.flatnonzero(dup)[0]].tolist()} repeats a rank")
    return g, r


def _ring(b: DagBuilder, groups: np.ndarray, ready: np.ndarray | None, nbytes: int, steps_per: str,
          *, kind: int, op: int, **tags: int) -> np.ndarray:
    g, ready = _prepare(groups, ready)
    G, N = g.shape
    cids = b.new_collectives(kind, op, G, N)
    cid = cids[:, None]
    if N == 1:
        return b.join(g, kind=kind, deps=[ready], collective=cid, **tags)
    sizes = chunk_sizes(nbytes, N)
    nxt = (np.arange(N) + 1) % N
    prv = (np.arange(N) - 1) % N
    n_steps = {"rs": N - 1, "ag": N - 1, "ar": 2 * (N - 1)}[steps_per]
    dst = g[:, nxt]
    prev = None
    for k in range(n_steps):
        # rank at position c sends chunk (c - k) mod N (reduce-scatter, then all-gather, both
        # moving chunks one hop along the ring per step).
        nb = sizes[(np.arange(N) - k) % N][None, :]
        deps = [ready, ready[:, nxt]] if prev is None else [prev, prev[:, prv]]
        prev = b.transfer(g, dst, nb, kind=kind, deps=deps, collective=cid, **tags)
    return b.join(g, kind=kind, deps=[prev, prev[:, prv]], collective=cid, **tags)


def ring_allreduce(b: DagBuilder, groups: np.ndarray, ready: np.ndarray | None, nbytes: int, *, kind: int,
                   **tags: int) -> np.ndarray:
    """Ring all-reduce of ``nbytes`` per rank: ``2(N-1)`` dependent steps of one chunk each."""
    return _ring(b, groups, ready, nbytes, "ar", kind=kind, op=COLL_ALLREDUCE, **tags)


def ring_reducescatter(b: DagBuilder, groups: np.ndarray, ready: np.ndarray | None, nbytes: int, *, kind: int,
                       **tags: int) -> np.ndarray:
    """Ring reduce-scatter of ``nbytes`` (the full buffer per rank): ``N-1`` steps."""
    return _ring(b, groups, ready, nbytes, "rs", kind=kind, op=COLL_REDUCESCATTER, **tags)


def ring_allgather(b: DagBuilder, groups: np.ndarray, ready: np.ndarray | None, nbytes: int, *, kind: int,
                   **tags: int) -> np.ndarray:
    """Ring all-gather producing ``nbytes`` (the full buffer) per rank: ``N-1`` steps."""
    return _ring(b, groups, ready, nbytes, "ag", kind=kind, op=COLL_ALLGATHER, **tags)


def all_to_all(b: DagBuilder, groups: np.ndarray, ready: np.ndarray | None, bytes_per_pair: int, *, kind: int,
               **tags: int) -> np.ndarray:
    """All-to-all: each rank sends ``bytes_per_pair`` to each other rank of its group."""
    g, ready = _prepare(groups, ready)
    G, N = g.shape
    cids = b.new_collectives(kind, COLL_ALLTOALL, G, N)
    if N == 1:
        return b.join(g, kind=kind, deps=[ready], collective=cids[:, None], **tags)
    # pairs ordered by destination: for j, for i != j
    j_idx = np.repeat(np.arange(N), N - 1)
    i_idx = np.array([i for j in range(N) for i in range(N) if i != j], dtype=np.int64)
    flows = b.transfer(g[:, i_idx], g[:, j_idx], int(bytes_per_pair), kind=kind,
                       deps=[ready[:, i_idx], ready[:, j_idx]], collective=cids[:, None], **tags)
    incoming = flows.reshape(G, N, N - 1)
    return b.join(g, kind=kind, deps=[incoming], collective=cids[:, None], **tags)
