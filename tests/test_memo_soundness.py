"""Memo soundness off the tuned path (issue #11): what a record is keyed by
(link delays among the rest), what a hit credits when a long round trip
leaves much in flight, and records whose numbers are not physical. Every
accuracy check is against the default kernel on the same scenario and seed;
step ECN marking (kmin = kmax) keeps the reference deterministic, and where
marking is probabilistic a run is judged against the reference's
distribution over seeds (the accuracy matrix's judgement)."""

from __future__ import annotations

import hashlib
import math
import shutil
import sqlite3
import struct

import numpy as np
import pytest

from ns3wormhole import accuracy_matrix as am
from ns3wormhole import compare, run, topology
from ns3wormhole.compare import fct_errors
from ns3wormhole.fabric import FabricConfig
from ns3wormhole.flows import FlowSet, incast

STEP = FabricConfig().with_step_marking()


def waves(senders, receiver, size, count, gap_ns):
    return FlowSet.concat([incast(senders, receiver, size, start_ns=k * gap_ns) for k in range(count)])


def within(base, worm, mean=0.01, worst=0.03, makespan=0.01):
    err = fct_errors(base, worm)
    assert len(err) == len(base.flows["id"])
    assert err.mean() <= mean and err.max() <= worst, (err.mean(), err.max())
    assert abs(worm.makespan_ns - base.makespan_ns) / base.makespan_ns <= makespan


# ------------------------------------------------- what a hit credits


@pytest.mark.parametrize("delay_us", [1, 20, 50])
def test_a_hit_on_long_links_credits_only_what_is_unsent(delay_us):
    """Two identical 4-to-1 waves of 4 MB: the second is a memo hit. On 50 us
    links a first round trip at line rate puts 2.5 MB of each flow in flight
    before the pattern's first acknowledgement; a hit that credited the
    stored transient's bytes anyway left those in flight, and each flow of
    the second wave ended ~15 link delays late (41%)."""
    topo = topology.star(5, "100Gbps", f"{delay_us}us")
    flows = waves([0, 1, 2, 3], 4, 4_000_000, 2, 8_000_000)
    base = run.run_flows(topo, flows, STEP)
    worm = run.run_flows(topo, flows, STEP, kernel="wormhole")
    assert worm.stats["memo_hits"] >= 1
    within(base, worm)


def test_what_a_hit_leaves_in_flight_drains_at_the_line_rate_not_at_hpccs_target():
    """Three identical 4-to-1 HPCC waves of 3 MB on 50 us links; the third is
    a memo hit taken at the pattern's first acknowledgement, with a round
    trip of each flow (2.3 MB) in flight. The hit stops short of the stored
    completion by the time those bytes take to drain from the queue at each
    flow's share of the port. That share was counted at HPCC's target
    utilisation (95%), and the in-flight bytes drained faster than the skip
    allowed for: every flow of the hit wave ended 3.4% early. A queue drains
    at the line's pace. HPCC is deterministic here (the three waves of the
    reference end within 0.03% of each other), so the bound is the tight one."""
    from ns3wormhole import accuracy_matrix as am

    case = am.incast_waves(50, 12_000_000)
    fabric = am.fabric_of("default", "hpcc")
    base = run.run_flows(case.topology, case.flows, fabric)
    worm = run.run_flows(case.topology, case.flows, fabric, kernel="wormhole")
    assert worm.stats["memo_hits"] >= 1
    within(base, worm, mean=0.005, worst=0.01, makespan=0.005)


@pytest.mark.xfail(strict=True, reason="open: every hit of this pattern ends the incast 22% early and its "
                                        "neighbours 16% late (docs/memo.md, 'Open: an incast that holds its "
                                        "neighbours back')")
def test_an_incast_beside_flows_it_holds_back_is_replayed_within_bounds():
    """Six waves of a 4-to-1 incast from leaf 0 into a host of leaf 1, each
    beside two 2 MB flows from the same leaf to two other hosts of leaf 1,
    all through one 400G uplink; DCQCN with step marking, so the reference is
    deterministic. In the reference the neighbours average 73 Gb/s and the
    incast 75 (its four flows together; no PFC pause is sent). Memo off,
    Wormhole is exact; every wave it takes from the memo (waves 2-6, deferred
    hits) ends with the incast's flows 22.3% early and their neighbours 15.8%
    late, on 2026-12-08's kernel and on 5d89953's alike. Strict: it fails the
    day that is fixed."""
    topo = topology.leaf_spine(2, 1, 8, "100Gbps", "400Gbps", "1us")
    gap = 3_000_000
    incasts = [incast([0, 1, 2, 3], 8, 2_000_000, start_ns=k * gap) for k in range(6)]
    beside = [FlowSet.from_lists([4, 5], [9, 10], [2_000_000] * 2, [k * gap] * 2) for k in range(6)]
    flows = FlowSet.concat(incasts + beside)
    base = run.run_flows(topo, flows, STEP)
    worm = run.run_flows(topo, flows, STEP, kernel="wormhole")
    assert worm.stats["memo_hits"] >= 1
    within(base, worm)


# ---------------------------------------------------- what a key holds


def incast_run(delay_us, senders, receiver, db, n_waves=1):
    topo = topology.star(9, "100Gbps", f"{delay_us}us")
    flows = waves(senders, receiver, 4_000_000, n_waves, 8_000_000)
    cfg = run.WormholeConfig(memo_db=str(db) if db else None)
    return run.run_flows(topo, flows, STEP, kernel="wormhole", wormhole=cfg), topo, flows


def test_a_store_filled_on_short_links_is_not_used_on_long_ones(tmp_path):
    """Link delays are in the key: records of a 4-to-1 incast on 1 us links
    do not match the same incast on 100 us links (they did, and erred by
    82%): the run is exactly the run from an empty store."""
    db = tmp_path / "memo.sqlite"
    filled, _, _ = incast_run(1, [0, 1, 2, 3], 4, db)
    assert filled.stats["memo_inserts"] >= 1
    used, _, _ = incast_run(100, [0, 1, 2, 3], 4, db)
    fresh, _, _ = incast_run(100, [0, 1, 2, 3], 4, None)
    assert used.stats["memo_hits"] == 0
    np.testing.assert_array_equal(used.flows["fct_ns"], fresh.flows["fct_ns"])


@pytest.mark.parametrize("delay_us", [5, 20])
def test_a_store_is_used_for_the_same_pattern_elsewhere_and_in_another_run(tmp_path, delay_us):
    """What matters to a transient is the same for another set of hosts with
    the same links (senders 5-8 to host 0 after senders 0-3 to host 4), and
    for a later run of the same fabric: both hit, within the bounds."""
    db = tmp_path / "memo.sqlite"
    incast_run(delay_us, [0, 1, 2, 3], 4, db)
    elsewhere, topo, flows = incast_run(delay_us, [5, 6, 7, 8], 0, db)
    assert elsewhere.stats["memo_hits"] >= 1
    within(run.run_flows(topo, flows, STEP), elsewhere)
    again, topo, flows = incast_run(delay_us, [0, 1, 2, 3], 4, db)
    assert again.stats["memo_hits"] >= 1
    within(run.run_flows(topo, flows, STEP), again)


# ------------------------------------------------ records checked on load


def parse(blob: bytes) -> dict:
    """The record format of memo-store.cc (little-endian, no padding)."""
    pos = 0

    def get(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, blob, pos)
        pos += struct.calcsize("<" + fmt)
        return v if len(v) > 1 else v[0]

    r = {"head": get("II")}
    n = get("I")
    r["labels"] = [get("Q") for _ in range(n)]
    r["edges"] = [get("III") for _ in range(get("I"))]
    r["transient_ns"], r["completes"], r["events"], r["occurrence"], r["spread"] = (
        get("q"), get("i"), get("Q"), get("I"), get("d"))
    r["flows"] = []
    for _ in range(n):
        f = {"bytes": get("d"), "rate": get("d")}
        f["cc"] = [get("d") for _ in range(get("I"))]
        f["backlog"] = [get("d") for _ in range(get("I"))]
        r["flows"].append(f)
    r["course"] = []
    for _ in range(get("I")):
        c = {"at_ns": get("q"), "flows": []}
        for _ in range(n):
            f = {"bytes": get("d"), "in_flight": get("d")}
            f["cc"] = [get("d") for _ in range(get("I"))]
            f["backlog"] = [get("d") for _ in range(get("I"))]
            c["flows"].append(f)
        r["course"].append(c)
    assert pos == len(blob)
    return r


def pack(r: dict) -> bytes:
    out = struct.pack("<II", *r["head"]) + struct.pack("<I", len(r["labels"]))
    out += b"".join(struct.pack("<Q", x) for x in r["labels"])
    out += struct.pack("<I", len(r["edges"])) + b"".join(struct.pack("<III", *e) for e in r["edges"])
    out += struct.pack("<qiQId", r["transient_ns"], r["completes"], r["events"], r["occurrence"], r["spread"])
    for f in r["flows"]:
        out += struct.pack("<dd", f["bytes"], f["rate"])
        out += struct.pack("<I", len(f["cc"])) + b"".join(struct.pack("<d", x) for x in f["cc"])
        out += struct.pack("<I", len(f["backlog"])) + b"".join(struct.pack("<d", x) for x in f["backlog"])
    out += struct.pack("<I", len(r["course"]))
    for c in r["course"]:
        out += struct.pack("<q", c["at_ns"])
        for f in c["flows"]:
            out += struct.pack("<dd", f["bytes"], f["in_flight"])
            out += struct.pack("<I", len(f["cc"])) + b"".join(struct.pack("<d", x) for x in f["cc"])
            out += struct.pack("<I", len(f["backlog"])) + b"".join(struct.pack("<d", x) for x in f["backlog"])
    return out


def corrupt_rate_nan(r):
    r["flows"][0]["rate"] = math.nan


def corrupt_rate_inf(r):
    r["flows"][-1]["rate"] = math.inf


def corrupt_rate_huge(r):
    for f in r["flows"]:
        f["rate"] = 1e30


def corrupt_bytes_negative(r):
    r["flows"][0]["bytes"] = -4e6


def corrupt_one_second(r):
    r["transient_ns"] = 1_000_000_000


def corrupt_2_pow_62(r):
    r["transient_ns"] = 2**62


def corrupt_cc_nan(r):
    r["flows"][0]["cc"] = [math.nan] * len(r["flows"][0]["cc"])


def corrupt_backlog_inf(r):
    r["flows"][0]["backlog"] = [math.inf] * max(1, len(r["flows"][0]["backlog"]))


def corrupt_course_cc_nan(r):
    r["course"][len(r["course"]) // 2]["flows"][0]["cc"][0] = math.nan


def corrupt_course_bytes_fall(r):
    # a flow's delivered bytes fall mid-way through the transient
    mid = r["course"][len(r["course"]) // 2]["flows"][0]
    mid["bytes"] = r["flows"][0]["bytes"] * 2


def corrupt_course_out_of_order(r):
    r["course"][1]["at_ns"], r["course"][2]["at_ns"] = r["course"][2]["at_ns"], r["course"][1]["at_ns"]


def corrupt_course_dropped(r):
    r["course"] = []


def corrupt_course_queue_negative(r):
    for c in r["course"]:
        c["flows"][0]["backlog"] = [-1e6] * max(1, len(c["flows"][0]["backlog"]))


CORRUPTIONS = [corrupt_rate_nan, corrupt_rate_inf, corrupt_rate_huge, corrupt_bytes_negative,
               corrupt_one_second, corrupt_2_pow_62, corrupt_cc_nan, corrupt_backlog_inf,
               corrupt_course_cc_nan, corrupt_course_bytes_fall, corrupt_course_out_of_order,
               corrupt_course_dropped, corrupt_course_queue_negative]


@pytest.fixture(scope="module")
def filled_store(tmp_path_factory):
    """A store filled by one 4-to-1 wave, and the run of a second identical
    wave from an empty store (what a run that uses no record gives)."""
    db = tmp_path_factory.mktemp("memo") / "memo.sqlite"
    incast_run(1, [0, 1, 2, 3], 4, db)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT scope, digest, blob FROM records").fetchall()
    con.close()
    assert rows
    fresh, _, _ = incast_run(1, [0, 1, 2, 3], 4, None)
    return db, rows, fresh


@pytest.mark.parametrize("corrupt", CORRUPTIONS, ids=[c.__name__[8:] for c in CORRUPTIONS])
def test_records_with_numbers_no_fabric_produces_are_dropped_with_a_warning(filled_store, tmp_path, corrupt):
    """Every record's numbers corrupted and its digest recomputed (so only
    the numbers tell): each is dropped with a warning naming how many, and
    the run is exactly the run from an empty store (used, they erred by
    267% or hung)."""
    source, rows, fresh = filled_store
    db = tmp_path / "memo.sqlite"
    shutil.copy(source, db)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM records")
    for scope, _, blob in rows:
        r = parse(blob)
        corrupt(r)
        bad = pack(r)
        con.execute("INSERT INTO records VALUES (?, ?, ?, 0)", (scope, hashlib.sha256(bad).hexdigest(), bad))
    con.commit()
    con.close()
    with pytest.warns(UserWarning, match=rf"{len(rows)} memo record\(s\) hold numbers"):
        used, _, _ = incast_run(1, [0, 1, 2, 3], 4, db)
    assert used.stats["memo_hits"] == 0
    np.testing.assert_array_equal(used.flows["fct_ns"], fresh.flows["fct_ns"])


def test_an_untouched_record_round_trips_and_is_used(filled_store, tmp_path):
    """The parser above reads the format exactly (so the corruptions are of
    the numbers only), and the same records untouched are used."""
    source, rows, _ = filled_store
    for _, _, blob in rows:
        assert pack(parse(blob)) == blob
    db = tmp_path / "memo.sqlite"
    shutil.copy(source, db)
    used, _, _ = incast_run(1, [0, 1, 2, 3], 4, db)
    assert used.stats["memo_hits"] >= 1


# ------------------------------------------------------------ random draws
#
# Repeated DCQCN incasts (issue 11): with probabilistic marking each wave's
# outcome is a random draw, so Wormhole's run is judged as one more draw of
# the reference, as the accuracy matrix judges it (docs/fast-forward.md,
# "Judging a run against a chaotic reference"): per-flow errors within the
# 99% prediction bound of the reference's seed-to-seed sample, makespan
# likewise, and the same perturbations run under both kernels to show no
# bias. The 2% on the mean FCT over the run holds for every one of
# those runs: replaying one draw for every later wave makes the run's mean
# FCT that one draw's (1.6% standard deviation over seeds on the 1 us
# pattern, against 0.7% for the reference, which averages eight draws), and
# it is the run-level mean, not any flow's error, that then leaves 2%.

# The bound on the mean FCT over a run of repeated DCQCN incasts.
MEAN_FCT = 0.02


def dcqcn_case(senders, size, delay_us, count):
    """``count`` waves of a ``senders``-to-1 incast of ``size`` bytes a flow,
    each starting once the previous one has drained (the matrix's spacing:
    the wave at ~80 Gb/s plus a few RTTs and a steady stretch)."""
    gap = int(senders * size * 8 / 80e9 * 1e9) + 2 * am._unit(delay_us)
    flows = waves(list(range(senders)), senders, size, count, gap)
    return am.Case(topology.star(senders + 1, "100Gbps", f"{delay_us}us"), flows)


def dcqcn_waves(fabric, cfg=None, kernel="wormhole"):
    topo = topology.star(5, "100Gbps", "1us")
    flows = waves([0, 1, 2, 3], 4, 2_000_000, 8, 1_500_000)
    return run.run_flows(topo, flows, fabric, kernel=kernel, wormhole=cfg)


def judge_dcqcn_waves(case, count, cfg=None):
    """Wormhole (``cfg``) on ``case`` under default marking, judged against
    the reference's distribution; returns its run's stats."""
    fabric = FabricConfig()
    ref = am.reference(case, fabric)
    assert not ref.deterministic and len(ref.sample) >= am.MIN_DRAWS, ref.draws
    runs = []

    def wormhole(c, fab):
        runs.append(am.simulate(c, fab, "wormhole", cfg))
        return runs[-1]

    worm = wormhole(case, fabric)
    bias_span, bias_fct = ref.bias(wormhole, worm, margins=(am.BOUND_MAKESPAN, MEAN_FCT))
    _, span = worm.errors_against(ref.run)
    distance, bounds = ref.distance(worm), ref.bounds()
    failed = am.failed_checks(distance, span, ref.makespan_error(worm), bounds, (bias_span, bias_fct))
    assert not failed, (failed, distance, span, bounds, bias_span, bias_fct)
    # the run and each perturbation of the sample, against the default
    # kernel's run of the same
    _, fct = compare.signed_errors([ref.run.network] + [d.run.network for d in ref.sample],
                                   [r.network for r in runs])
    assert np.all(np.abs(fct) <= MEAN_FCT), fct
    stats = worm.network.stats
    # every wave after the first two occurrences (memo_confirmations = 2
    # under probabilistic marking) is decided by the memo: replayed if the
    # two agree, simulated if they disagree
    decided = stats["memo_hits"] + stats["memo_miss_reasons"]["disagree"]
    assert decided >= count - 2, stats
    return stats


@pytest.mark.parametrize("senders,size,delay_us,replayed", [
    # occurrences disagree: the memo must refuse to replay either
    (4, 2_000_000, 1, False),
    # occurrences agree within 2%: the medoid is replayed
    (2, 8_000_000, 20, True),
    # the same with four flows: each hit freezes ~1 MB a flow in flight,
    # which ECN-marked after the skip cut every flow to DCQCN's minimum
    # rate (three flows a hit wave 300-450 us late) until the hit exempted it
    (4, 8_000_000, 20, True),
])
def test_repeated_dcqcn_incasts_are_not_one_draw_replayed(senders, size, delay_us, replayed):
    """Eight waves of a DCQCN incast under probabilistic ECN marking: each
    wave's outcome is a random draw. The memo must not replay one draw for
    every later wave: per-flow error within the reference's own
    seed-to-seed distribution, mean FCT over the run within 2%, and where the
    occurrences agree the later waves are hits."""
    stats = judge_dcqcn_waves(dcqcn_case(senders, size, delay_us, 8), 8)
    if replayed:
        assert stats["memo_hits"] >= 1, stats


@pytest.mark.slow
@pytest.mark.parametrize("senders,size,delay_us", [
    (4, 2_000_000, 5),
    (2, 2_000_000, 5),
    (4, 8_000_000, 20),
    (2, 8_000_000, 50),
])
def test_repeated_dcqcn_incasts_are_not_one_draw_replayed_more_waves(senders, size, delay_us):
    """The same judgement over sixteen waves at other sizes and delays."""
    judge_dcqcn_waves(dcqcn_case(senders, size, delay_us, 16), 16)


def test_repeated_step_marked_incasts_are_replayed_within_bounds():
    """The same waves with step marking draw nothing: one occurrence is the
    outcome, every later wave hits, within mean 1% / max 5% / makespan 1%. Each
    wave drains before the next, so a wave is one transient from its start
    to its completions. A hit is taken once the wave's first round trip is
    delivered and its queue has come down to what the course holds in
    flight where the skip ends (docs/memo.md): each hit wave must still cost
    less than half of a wave simulated packet by packet (memo off: 1/waves
    of its events a wave)."""
    count = 8
    base = dcqcn_waves(STEP, kernel="baseline")
    worm = dcqcn_waves(STEP)
    off = dcqcn_waves(STEP, run.WormholeConfig(memo=False))
    hits = worm.stats["memo_hits"]
    assert hits >= count - 1, worm.stats  # every wave after the first
    err = fct_errors(base, worm)
    assert err.mean() <= 0.01 and err.max() <= 0.05, (err.mean(), err.max())
    assert abs(worm.makespan_ns - base.makespan_ns) / base.makespan_ns <= 0.01
    per_wave = off.events / count
    assert worm.events - (count - hits) * per_wave < hits * per_wave / 2, (worm.events, off.events, hits)


# ------------------------------------------------- a hit and a later join


@pytest.mark.parametrize("delay_us,join_ns", [(1, 300_000), (1, 900_000), (10, 300_000)])
def test_a_known_join_inside_a_stored_transient_is_not_skipped_over(delay_us, join_ns):
    """The second of two 4-to-1 waves matches the first's record, but a fifth
    flow is known to join it mid-transient: the stored transient is not this
    one's. Taking the hit and skipping back at the join kept the restored
    end state and erred by up to 180% per flow (34% makespan)."""
    topo = topology.star(6, "100Gbps", f"{delay_us}us")
    late = FlowSet.from_lists([5], [4], [2_000_000], [8_000_000 + join_ns])
    flows = FlowSet.concat([waves([0, 1, 2, 3], 4, 4_000_000, 2, 8_000_000), late])
    base = run.run_flows(topo, flows, STEP)
    worm = run.run_flows(topo, flows, STEP, kernel="wormhole")
    within(base, worm)


def test_confirmation_keys_are_checked():
    from ns3wormhole.errors import InputError

    for key, value in (("memo_confirmations", 17), ("memo_confirmations", -1), ("memo_agreement", 1.5)):
        with pytest.raises(InputError, match=f"wormhole.{key}"):
            run.WormholeConfig.from_mapping({key: value})
    assert run.WormholeConfig.from_mapping({"memo_confirmations": 3}).memo_confirmations == 3


def test_a_record_holds_its_transients_course(filled_store):
    """Each record keeps checkpoints through its transient, from the
    formation (nothing delivered) to its end (its bytes), K to 2K of them
    (K = 100), spaced by T / K or less: checkpoints are taken at
    acknowledgements, so a gap also spans a stretch without any (flows cut
    to 1 Gb/s, a pause). A hit cut short by an unforeseen join lags the
    reference by at most one gap."""
    _, rows, _ = filled_store
    for _, _, blob in rows:
        r = parse(blob)
        course = r["course"]
        assert course[0]["at_ns"] == 0 and course[-1]["at_ns"] == r["transient_ns"]
        assert all(f["bytes"] == 0 for f in course[0]["flows"])
        assert [f["bytes"] for f in course[-1]["flows"]] == [f["bytes"] for f in r["flows"]]
        gaps = np.diff([c["at_ns"] for c in course])
        assert gaps.min() > 0 and np.median(gaps) <= r["transient_ns"] / 100, (np.median(gaps), r["transient_ns"])
        assert 50 <= len(course) <= 2 * 100 + 1


# ------------------------------------------- a hit and an unforeseen join


def unforeseen_join_dag(join_ns, size=4_000_000, gap_ns=8_000_000):
    """Two 4-to-1 waves (hosts 0-3 to 4), the second started by compute
    delays; a fifth flow (host 5 to 4, half the size) started by a compute
    delay join_ns into the second wave: no flow list announces it, the
    executor does (its start is the delay's end: tests/test_dag_foresight.py)."""
    from ns3wormhole.workload import DagBuilder, ParallelSpec, Placement
    from ns3wormhole.workload.dag import KIND_COMPUTE, KIND_DP_COMM

    b = DagBuilder(Placement(ParallelSpec(dp=6, gpus_per_server=1)))
    senders, receiver = np.array([0, 1, 2, 3]), np.array([4] * 4)
    b.transfer(senders, receiver, size, kind=KIND_DP_COMM)
    wait = b.delay(senders, gap_ns, kind=KIND_COMPUTE)
    b.transfer(senders, receiver, size, kind=KIND_DP_COMM, deps=[wait])
    late = b.delay(np.array([5]), gap_ns + join_ns, kind=KIND_COMPUTE)
    b.transfer(np.array([5]), np.array([4]), size // 2, kind=KIND_DP_COMM, deps=[late])
    return b.build()


def unforeseeable_join_dag(join_ns, delay_us, size=4_000_000, gap_ns=8_000_000):
    """unforeseen_join_dag, but the fifth flow waits for a 1 kB flow between
    hosts 6 and 7 (started by a compute delay): its start is that flow's end,
    which the executor cannot know in advance (a join it can know, it
    announces: tests/test_dag_foresight.py). The small flow starts about its
    completion time (four link delays) early, so the join lands near
    join_ns."""
    from ns3wormhole.workload import DagBuilder, ParallelSpec, Placement
    from ns3wormhole.workload.dag import KIND_COMPUTE, KIND_DP_COMM

    b = DagBuilder(Placement(ParallelSpec(dp=8, gpus_per_server=1)))
    senders, receiver = np.array([0, 1, 2, 3]), np.array([4] * 4)
    b.transfer(senders, receiver, size, kind=KIND_DP_COMM)
    wait = b.delay(senders, gap_ns, kind=KIND_COMPUTE)
    b.transfer(senders, receiver, size, kind=KIND_DP_COMM, deps=[wait])
    late = b.delay(np.array([6]), gap_ns + join_ns - 4 * delay_us * 1000, kind=KIND_COMPUTE)
    ping = b.transfer(np.array([6]), np.array([7]), 1000, kind=KIND_DP_COMM, deps=[late])
    b.transfer(np.array([5]), np.array([4]), size // 2, kind=KIND_DP_COMM, deps=[ping])
    return b.build()


@pytest.mark.parametrize("delay_us,join_ns", [
    (1, 600_000),
    (10, 600_000),
    (10, 1_200_000),
    (20, 900_000),
    (20, 1_200_000),
    (50, 1_200_000),
])
def test_a_hit_cut_short_by_an_unforeseen_join_is_replayed_exactly(delay_us, join_ns):
    """The second wave is a memo hit; the fifth flow, started by the DAG when
    a small flow elsewhere ends (so nobody can announce it), joins while the
    hit skips. The hit is undone and the partition simulated packet by packet
    from the hit to the join (docs/memo.md): the run is the reference's. Most
    are cells the resumption from the stored course misses (mean / max per
    flow: 1 us at 600 us 1.3 / 11.2%; 10 us at 600 us 4.2 / 9.8%; 20 us at
    900 us 2.9 / 20.5%; 50 us at 1200 us 4.0 / 9.8%). 50 us at 1200 us erred
    129% on the joining flow when hits were taken as the pattern formed: the
    skip had ended and the first round trip it froze still drained as a queue
    in front of the joiner."""
    from ns3wormhole.compare import workload_fct_errors

    topo = topology.star(8, "100Gbps", f"{delay_us}us")
    dag = unforeseeable_join_dag(join_ns, delay_us)
    base = run.run_workload(topo, dag, STEP)
    worm = run.run_workload(topo, dag, STEP, kernel="wormhole")
    stats = worm.network.stats
    assert stats["memo_hits"] >= 1 and stats["memo_hits_replayed"] >= 1, stats
    err = workload_fct_errors(base, worm)
    assert err.max() == 0 and worm.network.makespan_ns == base.network.makespan_ns, (err.max(), err.mean())


@pytest.mark.parametrize("cc", ["dcqcn", "hpcc", "timely", "dctcp"])
@pytest.mark.parametrize("marking", ["step", "default"])
def test_a_replayed_hit_is_exact_under_every_congestion_control_and_marking(cc, marking):
    """The replay is exact wherever the hit left the flows' controllers as
    they were (their restore waits for the skip's end) and the partition's
    random draws are its own (ECN is drawn per port, keyed by the port's own
    packets): probabilistic marking redraws the same marks in the replay.
    One occurrence confirms a record here, so the second wave hits under
    default marking too."""
    from ns3wormhole.compare import workload_fct_errors
    from ns3wormhole.fabric import FabricConfig

    fab = FabricConfig(cc=cc)
    fab = fab.with_step_marking() if marking == "step" else fab
    topo = topology.star(8, "100Gbps", "10us")
    dag = unforeseeable_join_dag(900_000, 10)  # after every controller's hit is taken
    base = run.run_workload(topo, dag, fab)
    worm = run.run_workload(topo, dag, fab, kernel="wormhole", wormhole=run.WormholeConfig(memo_confirmations=1))
    assert worm.network.stats["memo_hits_replayed"] >= 1, worm.network.stats
    assert workload_fct_errors(base, worm).max() == 0
    assert worm.network.makespan_ns == base.network.makespan_ns


@pytest.mark.parametrize("delay_us,join_ns", [(1, 300_000), (10, 900_000), (20, 600_000)])
def test_without_replay_a_cut_short_hit_resumes_from_its_course(delay_us, join_ns):
    """The fallback when a hit is cut short where it cannot be replayed
    (memo_replay_joins off, or something other than a flow start reaching
    the partition): resume mid-way through the stored course. Keeping the
    stored end state with partial credit erred by up to 180% per flow;
    undoing the hit without replaying, by 320%. On long links the frames the
    hit froze in flight came back on top of the checkpoint's queue (10 us,
    900 us in: 16% max per flow) until they were waived. Other cells are
    listed in docs/memo.md."""
    from ns3wormhole.compare import workload_fct_errors

    topo = topology.star(8, "100Gbps", f"{delay_us}us")
    dag = unforeseeable_join_dag(join_ns, delay_us)
    base = run.run_workload(topo, dag, STEP)
    worm = run.run_workload(topo, dag, STEP, kernel="wormhole",
                            wormhole=run.WormholeConfig(memo_replay_joins=False))
    assert worm.network.stats["memo_hits"] >= 1 and worm.network.stats["skip_backs"] >= 1
    assert worm.network.stats["memo_hits_replayed"] == 0
    err = workload_fct_errors(base, worm)
    makespan = abs(worm.network.makespan_ns - base.network.makespan_ns) / base.network.makespan_ns
    assert err.mean() <= 0.01 and err.max() <= 0.03 and makespan <= 0.01, (err.mean(), err.max(), makespan)


@pytest.mark.parametrize("late_us", [25, 75, 175])
def test_a_wave_whose_last_flow_starts_late_is_not_the_wave_whose_flows_started_together(late_us):
    """Three waves of a 4-to-1 DCTCP incast on 50 us links; in the third the
    fourth flow starts late_us after the other three. When it joins, the
    three have a round trip's worth in flight and have delivered nothing yet:
    judged by delivered bytes they had started with the pattern, the four
    took the record of the waves whose flows started together, and the three
    ended 20-24% early. A pattern is fresh only if its flows started within
    5 us of each other; otherwise its records are keyed by what each flow
    has left and has not yet sent. Step marking: the reference is
    deterministic, so the tight bounds hold."""
    case = am.incast_waves(50, 24 * am.MB)
    case = am._late(case, 0, late_us * 1000)
    fabric = am.fabric_of("step", "dctcp")
    base = am.simulate(case, fabric, "baseline").network
    worm = am.simulate(case, fabric, "wormhole", run.WormholeConfig(memo=True)).network
    assert worm.stats["memo_hits"] >= 1  # the second wave is still a hit
    err = fct_errors(base, worm)
    assert err.max() <= 0.03 and err.mean() <= 0.01, (err.max(), err.mean())


def test_a_store_a_run_wrote_is_loaded_whole_by_the_next(tmp_path):
    """Every record a run writes must load in the next one. A pattern whose
    window was too short to measure its spread (HPCC flows on 50 us links
    joining a few hundred microseconds apart) was written with an infinite
    spread, which the store's load check takes for corruption: three records
    dropped, with a warning, from every later run."""
    import warnings

    store = tmp_path / "memo.sqlite"
    case = am.staggered(50, 12 * am.MB)
    fabric = am.fabric_of("default", "hpcc")
    cfg = run.WormholeConfig(memo=True, memo_db=str(store))
    am.simulate(case, fabric, "wormhole", cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        am.simulate(case, fabric, "wormhole", cfg)
