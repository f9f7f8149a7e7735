"""The Wormhole kernel on the RDMA model: the invariants of DESIGN.md
(baseline identity, conservation, isolation) and accuracy against the
default kernel on the same scenario and seed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ns3wormhole import run, scenarios
from ns3wormhole.accuracy_matrix import Case, Outcome, failed_checks, reference, staggered
from ns3wormhole.compare import ErrorSummary, PairedBias, compare_flows, fct_errors, signed_errors, workload_fct_errors
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet, incast
from ns3wormhole.topology import leaf_spine, star

MB = 1_000_000
OFF = run.WormholeConfig(fast_forward=False)


@pytest.mark.parametrize("name", ["incast8", "permutation16"])
def test_identical_to_default_kernel_with_fast_forward_off(name):
    topo, flows = scenarios.SCENARIOS[name](4 * MB)
    base = run.run_flows(topo, flows, kernel="baseline")
    worm = run.run_flows(topo, flows, kernel="wormhole", wormhole=OFF)
    assert worm.events == base.events
    np.testing.assert_array_equal(worm.flows, base.flows)
    assert worm.counters == base.counters
    assert worm.stats["fast_forwards"] == 0


def assert_conserved(result, flows: FlowSet):
    """Every flow completes with exactly its bytes, and no event was lost or
    run twice: the queue drained, so every scheduled event either ran or was
    removed."""
    assert result.completed.all()
    np.testing.assert_array_equal(np.sort(result.flows["bytes"]), np.sort(flows.bytes))
    assert (result.flows["credited_bytes"] < result.flows["bytes"]).all()
    s = result.stats
    assert s["events_scheduled"] == s["events_executed"] + s["events_removed"]
    assert s["events_executed"] == result.events


ACCURACY = [
    # (scenario, flow size, fewer events than the baseline by at least).
    # 16 MB is the incast: DCQCN settles only near its end, so the
    # skip is short; 32 MB flows are fast-forwarded for a larger share of
    # the run, and keep each pair of runs around a second.
    ("incast8", 16 * MB, 1.0),
    ("incast8", 32 * MB, 1.1),
    ("staggered4", 32 * MB, 1.1),
    ("permutation16", 32 * MB, 1.1),
    ("long_and_short", 32 * MB, 1.1),
]
# The targets where the reference is deterministic (DESIGN.md: an incast's
# per-flow max within 5%).
TARGETS = (0.01, 0.05, 0.01)


def _wormhole(config: run.WormholeConfig | None = None, late_by: float = 0.0):
    """Wormhole runs of a perturbed case, for a reference's bias check;
    ``late_by``: a fake bias, every FCT stretched by that factor."""

    def simulate(case: Case, fabric: FabricConfig) -> Outcome:
        r = run.run_flows(case.topology, case.flows, fabric, kernel="wormhole", wormhole=config)
        return Outcome(_stretched(r, late_by))

    return simulate


def _stretched(r: run.RunResult, by: float) -> run.RunResult:
    flows = r.flows.copy()
    done = flows["finish_ns"] >= 0
    fct = np.round(flows["fct_ns"][done] * (1 + by)).astype(flows["fct_ns"].dtype)
    flows["fct_ns"][done] = fct
    flows["finish_ns"][done] = flows["start_ns"][done] + fct
    return dataclasses.replace(r, flows=flows)


def judge(ref, worm: run.RunResult, wormhole) -> tuple[list[str], object]:
    """Every way ``worm`` (and Wormhole's runs of the reference's draws, made
    by ``wormhole``) fails the judgement of a chaotic reference: the 99%
    prediction bound of each metric, and the bias of makespan and mean FCT."""
    bounds = ref.bounds(TARGETS)
    errors, own = Outcome(worm).errors_against(ref.run)
    distance = ref.distance(Outcome(worm))
    mk = ref.makespan_error(Outcome(worm))
    bias = ref.bias(wormhole, Outcome(worm))
    failed = failed_checks(distance, own, mk, bounds, bias or ())
    return failed, (ErrorSummary.of(errors), distance, mk, bounds, bias)


@pytest.mark.parametrize(("name", "size", "min_event_ratio"), ACCURACY)
def test_accuracy_against_default_kernel(name, size, min_event_ratio):
    topo, flows = scenarios.SCENARIOS[name](size)
    cmp = compare_flows(topo, flows)
    assert_conserved(cmp.wormhole, flows)
    # the comparison must compare something: time was really skipped
    assert cmp.wormhole.stats["fast_forwards"] >= 1
    assert cmp.wormhole.stats["time_skipped_ns"] > 0
    assert cmp.event_ratio > min_event_ratio  # a real share of the run was skipped
    # Probabilistic ECN marking makes these incasts chaotic: the default
    # kernel itself moves by more than the targets when the seed changes.
    # Where it does, its reruns are a sample of the pattern and Wormhole's
    # run is judged as one more draw (docs/fast-forward.md); where it does
    # not, the targets stand.
    ref = reference(Case(topo, flows), FabricConfig(), cmp.baseline)
    failed, figures = judge(ref, cmp.wormhole, _wormhole())
    assert not failed, (failed, figures)


def test_a_biased_kernel_fails_the_judgement_of_a_chaotic_reference():
    """The judgement can fail: on the staggered 4-to-1 incast (chaotic: the
    seed moves its makespan by ~3%), a kernel that reports every FCT 3% late
    fails the bias check though its one run is within the prediction bound
    of a single draw, and a kernel made lax (theta 0.5 over a 50-sample
    window, each flow extrapolating its own rate: it skips limit cycles at
    their peak rate) fails every check. (Over 200 samples it no longer does:
    the flat rule's in-flight test, at theta/5 = 10% there, sends the cycles
    it would have skipped at their peak to the drift bound.)"""
    topo, flows = scenarios.staggered4(32 * MB)
    ref = reference(Case(topo, flows), FabricConfig())
    assert not ref.deterministic
    late = _wormhole(late_by=0.03)
    failed, figures = judge(ref, late(Case(topo, flows), FabricConfig()).network, late)
    assert "makespan bias" in failed and "mean FCT bias" in failed, figures
    lax = _wormhole(run.WormholeConfig(theta=0.5, window=50, pool_shares=False))
    failed, figures = judge(ref, lax(Case(topo, flows), FabricConfig()).network, lax)
    assert {"mean", "makespan", "makespan bias", "mean FCT bias"} <= set(failed), figures


def test_lone_flow_skips_nearly_everything_exactly():
    """A flow alone at line rate is the cleanest steady state: almost all of
    it is skipped, and its FCT is unchanged to within a few packets."""
    topo, flows = scenarios.lone(64 * MB)
    cmp = compare_flows(topo, flows)
    assert_conserved(cmp.wormhole, flows)
    fct = cmp.baseline.flows["fct_ns"][0]
    assert cmp.wormhole.stats["time_skipped_ns"] > 0.8 * fct
    assert cmp.event_ratio > 4
    assert cmp.fct_error.max < 1e-3
    skipped = cmp.wormhole.flow_time_skipped_ns
    assert skipped[int(flows.id[0])] == cmp.wormhole.stats["time_skipped_ns"]


@pytest.mark.parametrize("window", [2, 8, 64])
def test_a_skip_waits_for_events_scheduled_before_its_links_were_indexed(window):
    """Links are indexed only once a skip may come (a flow's window half
    full); frames sent before that are on 10 us of wire, due within MinSkip,
    so only counted. With a window of a few samples the flow is judged
    steady long before they arrive: a skip taken then would leave them
    where they are, to land in the middle of it. The skip must wait until
    they have run (docs/why-not.md, "Back-off") and then be exact."""
    topo = star(2, "100Gbps", "10us")
    flows = FlowSet.from_lists([0], [1], [12 * MB])
    base = run.run_flows(topo, flows, FabricConfig(), kernel="baseline")
    cfg = run.WormholeConfig(memo=False, window=window)
    worm = run.run_flows(topo, flows, FabricConfig(), kernel="wormhole", wormhole=cfg)
    assert worm.stats["time_skipped_ns"] > 0.5 * int(base.flows["fct_ns"][0])
    assert int(worm.flows["fct_ns"][0]) == int(base.flows["fct_ns"][0])


@pytest.mark.parametrize("delay_us", [1, 20])
@pytest.mark.parametrize("size", [12 * MB, 12 * MB + 777])
def test_a_lone_flow_skipped_finishes_at_the_reference_fct_to_the_ns(delay_us, size):
    """A flow alone at line rate is periodic: a skip of whole periods of its
    frames that credits whole frames leaves it exactly where the packet-level
    run is (docs/fast-forward.md). R-hat x dT left it up to 358 ns late."""
    topo = star(2, "100Gbps", f"{delay_us}us")
    flows = FlowSet.from_lists([0], [1], [size])
    base = run.run_flows(topo, flows, FabricConfig(), kernel="baseline")
    worm = run.run_flows(topo, flows, FabricConfig(), kernel="wormhole", wormhole=run.WormholeConfig(memo=False))
    assert worm.stats["time_skipped_ns"] > 0.5 * int(base.flows["fct_ns"][0])
    assert int(worm.flows["fct_ns"][0]) == int(base.flows["fct_ns"][0])


def test_a_ring_of_flows_sharing_only_acknowledgements_is_judged_like_a_lone_flow():
    """A ring step (each host sends to the next) puts every flow's data on a
    link that also carries its neighbour's acknowledgements: one partition
    of four flows, none ever cut. With no control loop in motion there is no
    sawtooth to average, so the partition is judged on the quick window a
    lone flow gets (docs/fast-forward.md, "Calm partitions"); on the full
    window (2 x 2000 acknowledgements) 3 MB flows were never steady and
    nothing was skipped. The skip must keep every FCT within 0.1%."""
    topo = star(4, "100Gbps", "1us")
    flows = FlowSet.from_lists([0, 1, 2, 3], [1, 2, 3, 0], [3 * MB] * 4)
    cmp = compare_flows(topo, flows, wormhole=run.WormholeConfig(memo=False))
    assert_conserved(cmp.wormhole, flows)
    assert cmp.wormhole.stats["partition_largest_flows"] == 4  # one partition, not four lone flows
    fct = cmp.baseline.flows["fct_ns"]
    skipped = cmp.wormhole.flow_time_skipped_ns
    assert all(skipped[int(i)] > 0.5 * int(f) for i, f in zip(cmp.baseline.flows["id"], fct))
    assert cmp.fct_error.max < 1e-3


@pytest.mark.parametrize("delay_us", [1, 10])
@pytest.mark.parametrize(
    ("hosts", "src", "dst", "start_ns", "rtol"),
    [
        pytest.param(2, [0, 0], [1, 1], [0, 2_000_000], 0, id="lone-then-memo-hit"),
        pytest.param(4, [0, 1, 2, 3] * 2, [1, 2, 3, 0] * 2, [0] * 4 + [2_000_000] * 4, 1e-4, id="ring-twice"),
    ],
)
def test_a_flat_partition_runs_to_its_end_whatever_the_completion_margin(delay_us, hosts, src, dst, start_ns, rtol):
    """CompletionMargin absorbs the extrapolation error of a noisy rate. A
    flat partition's credit is exact (whole line-rate periods) or off by at
    most its spread (a ring's flows, slowed by each other's
    acknowledgements), so its skips run to its frames in flight plus a frame
    or two of its end, by fast-forward and by memo hit alike: the time each
    flow runs packet by packet does not depend on the margin (with the
    margin it grew by 180 us when the margin did), and the FCTs stay at the
    reference's: to the ns at line rate, within 1e-4 (a fraction of a frame:
    R-hat x dT is not whole frames) for the ring."""
    topo = star(hosts, "100Gbps", f"{delay_us}us")
    flows = FlowSet.from_lists(src, dst, [12 * MB + 777] * len(src), start_ns=start_ns)
    base = run.run_flows(topo, flows, FabricConfig(), kernel="baseline")
    unskipped = []
    for margin_us in (20, 200):
        worm = run.run_flows(topo, flows, FabricConfig(), kernel="wormhole",
                             wormhole=run.WormholeConfig(completion_margin_us=margin_us))
        assert_conserved(worm, flows)
        fct = worm.flows["fct_ns"].astype(np.int64)
        np.testing.assert_allclose(fct, base.flows["fct_ns"].astype(np.int64), rtol=rtol)
        skipped = worm.flow_time_skipped_ns
        unskipped.append([int(f) - int(skipped[int(i)]) for i, f in zip(worm.flows["id"], fct)])
        assert worm.stats["memo_hits"] + worm.stats["fast_forwards"] >= 2
    assert unskipped[0] == unskipped[1]


def test_a_chaotic_pattern_after_an_exact_skip_draws_what_the_reference_draws():
    """Staggered arrivals with probabilistic marking are chaotic (1 ns moves
    FCTs by several percent), and the only skip is the first flow's lone
    phase. Being exact, it leaves every later ECN draw where the default
    kernel makes it: the FCTs are the reference's, not another draw."""
    case = staggered(1, 12 * MB)
    base = run.run_flows(case.topology, case.flows, FabricConfig(), kernel="baseline")
    worm = run.run_flows(case.topology, case.flows, FabricConfig(), kernel="wormhole",
                         wormhole=run.WormholeConfig(memo=False))
    assert worm.stats["time_skipped_ns"] > 0
    np.testing.assert_array_equal(worm.flows["fct_ns"], base.flows["fct_ns"])


def _dcqcn_waves(fabric, kernel, waves=20, memo=True):
    """Issue 11's repeated incast: 20 waves of a 4-to-1 DCQCN incast of 6 MB,
    3 ms apart, on 1 us links."""
    flows = FlowSet.concat([incast([0, 1, 2, 3], 4, 6 * MB, start_ns=k * 3_000_000) for k in range(waves)])
    return run.run_flows(star(5, "100Gbps", "1us"), flows, fabric, kernel=kernel,
                         wormhole=run.WormholeConfig(memo=memo))


def test_repeated_dcqcn_incasts_fast_forwarded_within_the_seed_spread():
    """Probabilistic marking makes each wave a random draw. A skip inside one
    wave redraws what is left of that wave, but must not redraw every later
    one: marks are keyed by the frame, and the skipped frames are booked on
    the ports they would have crossed, so the waves after it run exactly as
    under the default kernel (before: per-flow max 19.5%, against a seed
    spread of 14.6-16.2%). Judged against the reference's seed-to-seed
    distribution (prediction bound and bias, docs/fast-forward.md), and the
    mean FCT over the run within 2%."""
    topo = star(5, "100Gbps", "1us")
    flows = FlowSet.concat([incast([0, 1, 2, 3], 4, 6 * MB, start_ns=k * 3_000_000) for k in range(20)])
    base = _dcqcn_waves(FabricConfig(), "baseline")
    worm = _dcqcn_waves(FabricConfig(), "wormhole")
    assert worm.stats["time_skipped_ns"] > 0  # a wave was fast-forwarded
    ref = reference(Case(topo, flows), FabricConfig(), base)
    assert not ref.deterministic
    failed, figures = judge(ref, worm, _wormhole(run.WormholeConfig()))
    assert not failed, (failed, figures)
    mean_fct = float(np.mean(base.flows["fct_ns"]))
    assert abs(float(np.mean(worm.flows["fct_ns"])) - mean_fct) / mean_fct <= 0.02
    # only the waves a skip touched differ from the reference
    assert np.array_equal(worm.flows["id"], base.flows["id"])
    wave = worm.flows["id"] // 4
    untouched = ~np.isin(wave, wave[worm.flows["credited_bytes"] > 0])
    assert 0 < untouched.sum() < untouched.size
    np.testing.assert_array_equal(worm.flows["fct_ns"][untouched], base.flows["fct_ns"][untouched])


def test_repeated_step_marked_incasts_replayed_from_the_memo():
    """Issue 11's repeated incast with step marking draws nothing: the waves
    are identical, each drains before the next, so the later ones form the
    first one's pattern and are replayed from the memo: mean <= 1%,
    max <= 5%, makespan <= 1%, with memo hits and a real gain over the memo
    off (a hit skips a wave's transient, most of its events)."""
    step = FabricConfig().with_step_marking()
    base = _dcqcn_waves(step, "baseline")
    worm = _dcqcn_waves(step, "wormhole")
    off = _dcqcn_waves(step, "wormhole", memo=False)
    assert worm.stats["memo_hits"] >= 1
    assert worm.events * 2 < off.events
    err = fct_errors(base, worm)
    assert err.mean() <= 0.01 and err.max() <= 0.05, (err.mean(), err.max())
    assert abs(worm.makespan_ns - base.makespan_ns) / base.makespan_ns <= 0.01


def test_a_flow_joined_under_default_marking_within_the_seed_spread():
    """Issue 11's join repro with default marking: a 64 MB flow joined at
    1 ms by a second one to the same receiver. The shared phase is chaotic,
    and a flow starting 1 ns later moves it by 0.00% (it reorders no
    arrivals): the reference is sampled with other seeds and Wormhole's run
    judged as one more draw. The lone phase is skipped exactly and the
    shared phase at R-hat (docs/fast-forward.md)."""
    topo = star(3, "100Gbps", "1us")
    flows = FlowSet.from_lists([0, 1], [2, 2], [64 * MB, 64 * MB], [0, 1_000_000])
    base = run.run_flows(topo, flows, FabricConfig(), kernel="baseline")
    worm = run.run_flows(topo, flows, FabricConfig(), kernel="wormhole")
    assert worm.stats["fast_forwards"] >= 2  # the lone phase and the shared one
    ref = reference(Case(topo, flows), FabricConfig(), base)
    assert not ref.deterministic
    failed, figures = judge(ref, worm, _wormhole())
    assert not failed, (failed, figures)


def test_isolation_of_an_unrelated_partition():
    """Skipping one partition moves no event of another: a concurrent group
    of short flows on another leaf switch finishes exactly as under the
    default kernel while a long flow elsewhere is fast-forwarded."""
    topo = leaf_spine(2, 1, 4, "100Gbps", "400Gbps", "1us")  # hosts 0-3 on leaf 0, 4-7 on leaf 1
    long_flow = FlowSet.from_lists([0], [1], [64 * MB])
    # 1 MB flows (1000 packets) never show the 2 x 2000 acknowledgements a
    # steady verdict needs, so this partition runs packet by packet.
    shorts = FlowSet.from_lists([4, 5, 6, 4], [7, 7, 7, 5], [MB] * 4, [0, 100_000, 300_000, 2_000_000])
    flows = FlowSet.concat([long_flow, shorts])
    # memo off: with it, the lone short flow 4 -> 5 would reuse the long
    # flow's lone-flow record and be skipped itself
    cmp = compare_flows(topo, flows, wormhole=run.WormholeConfig(memo=False))
    assert cmp.wormhole.stats["fast_forwards"] >= 1
    base = cmp.baseline.flows
    worm = cmp.wormhole.flows
    short_ids = base["id"][base["src"] >= 4]
    for fid in short_ids:
        b = base[base["id"] == fid][0]
        w = worm[worm["id"] == fid][0]
        assert (w["start_ns"], w["finish_ns"]) == (b["start_ns"], b["finish_ns"])
        assert w["credited_bytes"] == 0


def test_a_known_flow_start_ends_the_skip_of_the_partition_it_joins():
    """A long flow is fast-forwarded; a second flow to the same receiver is
    known (from the flow list) to start at 2 ms. The skip stops exactly
    there (the paper's predetermined interrupt), so nothing is skipped back,
    and both FCTs stay within the accuracy bounds."""
    topo, _ = scenarios.incast8(MB)
    flows = FlowSet.from_lists([0, 1], [8, 8], [64 * MB, 4 * MB], [0, 2_000_000])
    cmp = compare_flows(topo, flows)
    s = cmp.wormhole.stats
    assert s["skips_to_known_start"] >= 1 and s["skip_backs"] == 0
    assert s["partitions_merged"] == 0 and s["partitions_formed"] >= 1
    # the long flow was skipped before the join, and only up to it
    assert 0 < cmp.wormhole.flow_time_skipped_ns[0]
    assert_conserved(cmp.wormhole, flows)
    assert cmp.fct_error.max <= 0.05
    assert cmp.makespan_error <= 0.01


def test_skip_back_when_an_unforeseen_flow_joins_a_skipped_partition():
    """The same join, but the second flow is started by a training DAG when
    a 1 kB flow elsewhere, started by a 2 ms compute delay, ends: nothing
    can announce it (a start the DAG knows, it announces:
    tests/test_dag_foresight.py). The kernel must bring the skipped
    partition back to that moment (skip-back) and credit only the time
    really skipped."""
    from ns3wormhole.workload import DagBuilder, ParallelSpec, Placement
    from ns3wormhole.workload.dag import KIND_COMPUTE, KIND_DP_COMM

    b = DagBuilder(Placement(ParallelSpec(dp=9, gpus_per_server=1)))
    b.transfer(np.array([0]), np.array([8]), 64 * MB, kind=KIND_DP_COMM)
    wait = b.delay(np.array([2]), 2_000_000, kind=KIND_COMPUTE)
    ping = b.transfer(np.array([2]), np.array([3]), 1000, kind=KIND_DP_COMM, deps=[wait])
    b.transfer(np.array([1]), np.array([8]), 4 * MB, kind=KIND_DP_COMM, deps=[ping])
    dag = b.build()
    topo, _ = scenarios.incast8(MB)
    base = run.run_workload(topo, dag, kernel="baseline")
    worm = run.run_workload(topo, dag, kernel="wormhole")
    s = worm.network.stats
    assert s["skip_backs"] >= 1 and s["skips_to_known_start"] == 0
    assert worm.network.completed.all()
    np.testing.assert_array_equal(np.sort(worm.network.flows["bytes"]), [1000, 4 * MB, 64 * MB])
    err = workload_fct_errors(base, worm)
    assert err.max() <= 0.05
    it = abs(int(worm.iteration_times_ns[0]) - int(base.iteration_times_ns[0])) / base.iteration_times_ns[0]
    assert it <= 0.01


def test_same_seed_same_results_under_the_wormhole_kernel():
    topo, flows = scenarios.incast8(16 * MB)
    a = run.run_flows(topo, flows, kernel="wormhole")
    b = run.run_flows(topo, flows, kernel="wormhole")
    np.testing.assert_array_equal(a.flows, b.flows)
    assert a.events == b.events and a.stats == b.stats


def test_partition_statistics_on_a_permutation():
    topo, flows = scenarios.permutation16(4 * MB)
    r = run.run_flows(topo, flows, kernel="wormhole")
    s = r.stats
    assert s["partitions_formed"] >= 1
    # every flow left: the partitions it formed were split or emptied
    assert s["partitions_formed"] + s["partitions_merged"] + s["partitions_split"] >= 2


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("late_us", [0, 100])
def test_a_flow_climbing_back_to_line_rate_is_not_credited_its_climb(late_us, reverse):
    # A 2 MB flow leaves a 40 MB one sharing its receiver's port. Alone, the
    # big flow climbs back to line rate by DCQCN's additive increase for
    # milliseconds, in steps its window sees as flat within theta. Its CC rate
    # reaches line rate long before what it delivers over a window does: a
    # skip judged on the CC rate credits the lagging average. Step marking:
    # the reference is deterministic, so the bound is the tight one.
    # `reverse`: a 40 MB flow from the receiver back to the sender takes the
    # same two cables the other way. The climbing flow's ports carry only its
    # acknowledgements: they do not hold it back. Judged per cable (both
    # directions' data summed) they looked full, and the climb was credited:
    # the big flow ended 3.2% late.
    src, dst, size, start = [0, 1], [2, 2], [40 * MB, 2 * MB], [0, late_us * 1000]
    if reverse:
        src, dst, size, start = src + [2], dst + [0], size + [40 * MB], start + [0]
    flows = FlowSet.from_lists(src, dst, size, start)
    fabric = FabricConfig(kmin_bytes_per_100g=100_000, kmax_bytes_per_100g=100_000, pmax=1.0)
    base = run.run_flows(star(3), flows, fabric=fabric, kernel="baseline")
    worm = run.run_flows(star(3), flows, fabric=fabric, kernel="wormhole")
    b = np.sort(base.flows, order="id")["fct_ns"].astype(float)
    w = np.sort(worm.flows, order="id")["fct_ns"].astype(float)
    assert b[0] > 1.1 * base.flows["ideal_fct_ns"].max()  # it did climb for long
    np.testing.assert_allclose(w, b, rtol=1e-3)


def test_a_queue_that_fills_under_flat_rates_is_not_credited_as_a_steady_state():
    # B (128 MB) joins A (128 MB) at 2 ms at one receiver under TIMELY. The
    # pair settles into a 1.5 ms cycle: the port's queue climbs to ~660 kB
    # over 0.8 ms while it delivers its capacity, the flows cut, the port
    # idles. The rates look flat on the climb, and the window's send/deliver
    # mismatch, averaged over climb and idle, stays under theta: credited as
    # flat to the completions, the climb's 94.7 Gbps ran both flows 4% early.
    # The reference is deterministic but moves with the join's phase, so it
    # is judged as a chaotic one: B later by k x 37 ns under both kernels,
    # the signed errors' mean within the 1% target plus its standard errors.
    topo = star(4, "100Gbps", "1us")
    fabric = FabricConfig(cc="timely")
    bases, worms = [], []
    for k in range(8):
        flows = FlowSet.from_lists([0, 1], [2, 2], [128 * MB, 128 * MB], [0, 2_000_000 + 37 * k])
        bases.append(run.run_flows(topo, flows, fabric, "baseline"))
        worms.append(run.run_flows(topo, flows, fabric, "wormhole"))
        assert worms[-1].stats["fast_forwards"] > 1
    for errors in signed_errors(bases, worms):  # makespan, mean FCT
        bias = PairedBias(errors, margin=0.01)
        assert bias.ok, bias


def test_a_flow_its_controller_just_cut_is_not_credited_what_it_still_delivers():
    """A TIMELY permutation on a 2-leaf Clos with 50 us links: two flows are
    cut from 100 to 52 Gb/s at 0.83 ms, but their ACKs bring back 88 Gb/s of
    deliveries for another round trip (400 us). A skip taken there (the
    windows looked steady: spread 0.05 theta) credited 88 and froze the cut
    in flight; the two ended 3.9% early, the makespan 3.9% early on a
    deterministic reference. A flow judged on its own rate whose controller
    sends more than theta below what it delivers is not steady."""
    from ns3wormhole import accuracy_matrix as am

    case = am.permutation(50, 24 * am.MB)
    cmp = compare_flows(case.topology, case.flows, FabricConfig(cc="timely"))
    assert cmp.fct_error.mean <= 0.01 and cmp.fct_error.max <= 0.03, cmp.fct_error
    assert abs(cmp.makespan_error) <= 0.01, cmp.makespan_error
    assert cmp.wormhole.stats["no_skip"]["slowing"]["time_ns"] > 0  # refused for this reason


def test_a_flow_its_controller_just_raised_is_not_credited_what_it_delivered_before():
    """An HPCC permutation on a 2-leaf Clos with 20 us links: HPCC's flows
    still climb towards UTarget once a round trip. Two had just been raised
    to 89 Gb/s (81.7 of payload) but had delivered 75; a skip of 213 us at
    0.93 ms credited 75 and froze the raise in flight, and both ended 1.3%
    late (12 MB flows; 0.6% at 24 MB), on a reference no join phase or 1 ns
    shift moves. A flow below its line rate whose controller sends more
    than theta above what it delivers is not steady either."""
    from ns3wormhole import accuracy_matrix as am

    for size_mb in (12, 24):
        case = am.permutation(20, size_mb * am.MB)
        cmp = compare_flows(case.topology, case.flows, FabricConfig(cc="hpcc"))
        assert cmp.fct_error.max <= 0.005 and abs(cmp.makespan_error) <= 0.005, (size_mb, cmp.fct_error)
        if size_mb == 12:
            assert cmp.wormhole.stats["no_skip"]["rising"]["time_ns"] > 0  # refused for this reason
