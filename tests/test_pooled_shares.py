"""Pooled shares on noisy skips (docs/fast-forward.md, "Noisy partitions:
pooled shares"): flows alike at a port whose ECN marks are drawn by
probability are credited their own rates only over the span measured, then
the group's mean plus a drawn dispersion. Where the model draws nothing the
flows keep their own rates: the results do not move."""

from __future__ import annotations

import numpy as np
import pytest

from ns3wormhole import run
from ns3wormhole.accuracy_matrix import Case, Outcome, reference
from ns3wormhole.compare import PairedBias, t_quantile
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import incast
from ns3wormhole.topology import star

MB = 1_000_000


def _incast(mb: int):
    return star(9, "100Gbps", "1us"), incast(list(range(8)), 8, mb * MB)


def _fcts(r: run.RunResult) -> np.ndarray:
    return r.flows["fct_ns"].astype(np.int64)


@pytest.mark.parametrize(
    "fabric",
    [FabricConfig(cc="dctcp").with_step_marking(), FabricConfig(cc="hpcc")],
    ids=["dctcp-step-marking", "hpcc"],
)
def test_nothing_is_pooled_where_the_model_draws_nothing(fabric):
    """Step marking (DCTCP) and HPCC (marks move nothing) make the incast
    deterministic: every measured share is the outcome, so pooling must not
    touch it. Results with pooling on and off are the same to the ns. (Theta
    0.15: HPCC's shares wander too much over a window for 0.05 to skip at
    all, as in test_cc_kernels.)"""
    topo, flows = _incast(32)
    on = run.run_flows(topo, flows, fabric, "wormhole", run.WormholeConfig(theta=0.15, pool_shares=True))
    off = run.run_flows(topo, flows, fabric, "wormhole", run.WormholeConfig(theta=0.15, pool_shares=False))
    assert on.stats["fast_forwards"] >= 1
    assert on.events == off.events
    assert np.array_equal(_fcts(on), _fcts(off))


def test_pooled_draws_repeat_with_the_run():
    """The dispersion a pooled skip draws is seeded: the same scenario gives
    the same results, and pooling did act on this chaotic incast (DCQCN,
    probabilistic marking), so the draws were made."""
    topo, flows = _incast(64)
    first = run.run_flows(topo, flows, None, "wormhole", run.WormholeConfig())
    again = run.run_flows(topo, flows, None, "wormhole", run.WormholeConfig())
    unpooled = run.run_flows(topo, flows, None, "wormhole", run.WormholeConfig(pool_shares=False))
    assert first.events == again.events
    assert np.array_equal(_fcts(first), _fcts(again))
    assert not np.array_equal(_fcts(first), _fcts(unpooled))


def _paired_mean_fct_errors(ref, case: Case, config: run.WormholeConfig) -> PairedBias:
    """Signed mean-FCT errors of Wormhole against the default kernel, run by
    run over the reference's run and its sample (the same seed or late flow
    under both kernels), judged against no bias at all."""

    def simulate(case: Case, fabric: FabricConfig) -> Outcome:
        return Outcome(run.run_flows(case.topology, case.flows, fabric, "wormhole", config))

    _, fct = ref.bias(simulate, simulate(case, FabricConfig()))
    return PairedBias(fct.errors, margin=0.0)


@pytest.mark.slow
def test_pooled_shares_leave_a_chaotic_incast_unbiased():
    """An 8-to-1 DCQCN incast of 128 MB (probabilistic marking: the seed
    moves each flow's FCT by several %). Extrapolating each flow's own
    measured share stretches every transient unfairness over the skipped
    time: the flows' FCTs spread wider than the reference's and their mean
    comes out early, a bias many standard errors from zero over the
    reference's run and its perturbations. With pooled shares the paired
    mean-FCT errors are consistent with no bias at a 1% false-alarm rate,
    and the flows' FCTs spread as the reference's do."""
    topo, flows = _incast(128)
    case = Case(topo, flows)
    ref = reference(case, FabricConfig())
    assert not ref.deterministic
    pooled = _paired_mean_fct_errors(ref, case, run.WormholeConfig())
    own = _paired_mean_fct_errors(ref, case, run.WormholeConfig(pool_shares=False))
    t = t_quantile(1 - 0.01 / 2, pooled.errors.size - 1)
    assert abs(pooled.mean) <= t * pooled.stderr, (pooled.mean, pooled.stderr)
    assert own.mean < -t * own.stderr, (own.mean, own.stderr)


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_a_stationary_group_below_full_capacity_skips_to_its_completions(seed):
    """DCQCN's probabilistic marks keep the incast's port about 1% below its
    payload capacity for good. A group whose summed rate has no trend is
    still skipped to its completions (not only in steps bounded by
    MaxExtrapolation). Drift-limited skips alone cannot skip more than was
    simulated since the flows turned steady (MaxExtrapolation 1), so more
    than half the run skipped means a skip ran to the completions. Seed 2
    is one on which a level test (capacity to 0.2 theta) never passed:
    0.375 of the run skipped in 10 drift-limited steps."""
    topo, flows = _incast(128)
    w = run.run_flows(topo, flows, FabricConfig(seed=seed), "wormhole", run.WormholeConfig())
    assert run.WormholeConfig().max_extrapolation == 1.0
    assert w.stats["time_skipped_ns"] > 0.5 * w.makespan_ns, (w.stats["time_skipped_ns"], w.makespan_ns)
