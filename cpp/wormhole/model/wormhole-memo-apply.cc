// WormholeSimulatorImpl, memo apply (Wormhole §4.3): when a contention
// pattern forms, look it up; on a hit restore the stored transient's end
// state (CC state, switch queues) and skip the partition by the transient
// (and by the steady state after it where that is exact), crediting each
// flow; on a miss start recording the pattern.
#include "wormhole-simulator-impl.h"

#include "memo-key.h"
#include "memo-match.h"

#include "ns3/log.h"
#include "ns3/make-event.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeMemoApply");

using wormhole::FlowSeam;

std::vector<wormhole::MemoFlowView>
WormholeSimulatorImpl::MemoViews(uint32_t partition) const
{
    std::vector<wormhole::MemoFlowView> views;
    for (uint32_t flow : m_partitions.Get(partition).flows)
    {
        const FlowState& fs = m_flows.at(flow);
        wormhole::MemoFlowView& v = views.emplace_back();
        v.ccRate = fs.ccRate;
        v.lineRate = fs.lineRate;
        v.delivered = static_cast<double>(fs.acked) + static_cast<double>(fs.credited);
        v.remaining = static_cast<double>(fs.bytes) - static_cast<double>(fs.acked) - static_cast<double>(fs.credited);
        v.inFlight = static_cast<double>(fs.sent - fs.acked);
        v.startedAt = fs.startedAt;
        v.dataLinks.assign(fs.links.begin(), fs.links.begin() + fs.dataHops);
    }
    return views;
}

void
WormholeSimulatorImpl::MemoOnFormation(uint32_t partition)
{
    if (!m_memo || !FlowSeam::creditor || StateOf(partition).relinkPending)
    {
        return;
    }
    // A pattern whose flows have all sent their last byte has nothing a hit
    // could credit: what is left of it is frames in flight, which arrive
    // packet by packet (a hit's skip ends before they would, MemoSkipEnd).
    // It is neither looked up nor recorded. In an all-to-all's cascade of
    // completions every pattern after the first completion is such a one.
    if (NothingLeftToSend(partition))
    {
        StateOf(partition).memoPending = false;
        return;
    }
    if (DeferMemoKey(partition)) // back-off: an empty store cannot hit
    {
        return;
    }
    const std::vector<wormhole::MemoFlowView> views = MemoViews(partition);
    wormhole::MemoKey key = wormhole::BuildMemoKey(views, m_memoRateQuantum, *FlowSeam::creditor);
    wormhole::MemoMatch match(views,
                              static_cast<double>(m_completionMargin.GetNanoSeconds()),
                              static_cast<double>(m_minSkip.GetNanoSeconds()),
                              m_theta,
                              m_memoConfirmations,
                              m_memoAgreement);
    match.Search(wormhole::MemoStore::Global(), key);
    // A hit of a transient that queues is taken once the pattern's first
    // round trip has been delivered (MemoHitDelay): a deferred hit, or none.
    // None at all while events of the partition's links are not all indexed
    // (the store filled a moment ago): the pattern is recorded, a miss.
    const bool movable = IndexReady(partition);
    for (const auto* hit : {&match.steady, &match.ends})
    {
        if (!movable || !*hit)
        {
            continue;
        }
        const bool steady = hit == &match.steady;
        const int64_t delay = MemoHitDelay(*hit->record,
                                           hit->map,
                                           views,
                                           m_theta,
                                           HitMargin(*hit),
                                           LargestFrame(partition));
        if (delay > 0 && DeferMemoHit(partition, *hit, steady, delay))
        {
            return;
        }
        if (delay == 0 && (steady ? MemoHitSteady(partition, match, *hit, {})
                                  : MemoHitEnding(partition, match, *hit, key.drainRate)))
        {
            return;
        }
    }
    if (movable && match.flat && MemoHitFlatPrefix(partition, match, match.flat))
    {
        return;
    }
    NoteMemoMiss(match, key); // why-not
    MemoStartRecording(partition, std::move(key));
}

bool
WormholeSimulatorImpl::NothingLeftToSend(uint32_t partition) const
{
    const auto& flows = m_partitions.Get(partition).flows;
    return std::all_of(flows.begin(), flows.end(), [&](uint32_t flow) { return UnsentBeyond(flow, 0) <= 0; });
}

bool
WormholeSimulatorImpl::MemoHitSteady(uint32_t partition,
                                     const wormhole::MemoMatch& match,
                                     const wormhole::MemoMatch::Hit& hit,
                                     const HitFrom& from)
{
    const wormhole::MemoRecord& rec = *hit.record;
    const auto& map = hit.map;
    const size_t n = map.size();
    // What is left of the stored transient, and of each flow's bytes in it.
    const int64_t transientNs = rec.transientNs - from.into;
    if (transientNs <= 0)
    {
        return false;
    }
    // Deferred (from.into > 0): each flow is credited what makes it have
    // sent, at the transient's end, what its counterpart had (delivered plus
    // in flight), its frames in flight now standing for those.
    std::vector<double> bytes;
    const wormhole::MemoCheckpoint* end = from.into > 0 && rec.course && !rec.course->empty() ? &rec.course->back() : nullptr;
    for (uint32_t i = 0; i < n; ++i)
    {
        const double surplus = end ? end->inFlight[map[i]] - match.InFlight(i) : 0.0;
        bytes.push_back(std::max(0.0, rec.bytes[map[i]] - from.Done(i) + surplus));
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        // Every flow outlasts the transient, its end left to run packet by packet.
        if (bytes[i] > match.Creditable(i, hit))
        {
            return false;
        }
    }
    // After the transient the pattern is steady at the stored rates: a
    // flat one (every flow's window spread well under theta, e.g. flows
    // alone at line rate) goes straight on to the earliest completion,
    // as a fast-forward would (the paper's "directly to steady-state
    // processing"); a noisy one (every record was steady by its window
    // when stored) only skips the transient and is measured, unless
    // MemoDirectSteady: then it too goes on at the stored rates, at most
    // MaxExtrapolation times the stored transient.
    double steadyNs = 0;
    const bool flatRecord = rec.spread <= 0.2 * m_theta;
    // Flows back to back at line rate: the steady part is whole periods,
    // credited exactly; other flat ones: at the stored rates, to within
    // what the record's spread allows (as in TryFastForward).
    const auto rates = RatesOf(partition, rec, map);
    std::vector<std::pair<uint64_t, uint64_t>> periods;
    const uint64_t quantum = flatRecord ? LineRateQuantum(rates, periods) : 0;
    if (quantum > 0)
    {
        steadyNs = UntilCompletionExact(rates, periods, bytes);
    }
    else if (flatRecord)
    {
        steadyNs = UntilCompletionFlat(rates, rec.spread, bytes);
    }
    else if (m_memoDirectSteady)
    {
        steadyNs = std::numeric_limits<double>::infinity();
        for (uint32_t i = 0; i < n; ++i)
        {
            const double rate = rec.rate[map[i]];
            const double left = match.Creditable(i, hit) - bytes[i];
            steadyNs = rate > 0 ? std::min(steadyNs, left * 8e9 / rate) : 0;
        }
        steadyNs = std::min(steadyNs, m_maxExtrapolation * static_cast<double>(rec.transientNs));
    }
    steadyNs = std::max(0.0, steadyNs);
    // A stored transient is that of the pattern undisturbed: a flow known to
    // join before it ends means this one will not be it (a hit skipped back
    // at the join erred by up to 180%). The steady state after it ends at
    // the join, as a fast-forward's would.
    const double untilJoin = UntilKnownJoin(partition, static_cast<double>(m_currentTs + transientNs) + steadyNs);
    if (untilJoin <= static_cast<double>(transientNs))
    {
        return false;
    }
    steadyNs = std::min(steadyNs, untilJoin - static_cast<double>(transientNs));
    if (quantum > 0)
    {
        steadyNs = std::floor(steadyNs / static_cast<double>(quantum)) * static_cast<double>(quantum);
    }
    const auto more = static_cast<int64_t>(steadyNs);
    std::vector<double> credit;
    for (uint32_t i = 0; i < n; ++i)
    {
        credit.push_back(bytes[i] + (quantum > 0 ? WholePeriodsPayload(more, periods[i])
                                                 : rec.rate[map[i]] * static_cast<double>(more) / 8e9));
    }
    NS_LOG_INFO("memo hit: partition " << partition << " (" << n << " flows) skips " << transientNs << " ns of its "
                                       << rec.transientNs << " ns transient and " << more << " ns of steady state");
    ApplyMemoHit(partition, rec, map, transientNs + more, std::move(credit), true, more > 0, from);
    m_stats.memoTimeSavedNs += transientNs;
    m_stats.memoEventsSaved += static_cast<uint64_t>(static_cast<double>(rec.transientEvents) *
                                                     static_cast<double>(transientNs) /
                                                     static_cast<double>(rec.transientNs));
    return true;
}

bool
WormholeSimulatorImpl::MemoHitEnding(uint32_t partition,
                                     const wormhole::MemoMatch& match,
                                     const wormhole::MemoMatch::Hit& hit,
                                     const std::vector<double>& drainRate)
{
    // The stored transient ended when one flow completed: skip to just
    // before that completion (the margin at the flows' mean rates is
    // left to run packet by packet), in the state the flows had then.
    const wormhole::MemoRecord& rec = *hit.record;
    const auto& map = hit.map;
    const double marginNs = HitMargin(hit);
    std::vector<double> upTo;
    double back = 0;
    for (uint32_t i = 0; i < map.size(); ++i)
    {
        // Leave what the counterpart had left a margin before the end
        // (its mean rate times the margin).
        const double rate = rec.rate[map[i]];
        upTo.push_back(std::max(0.0, std::min(rec.bytes[map[i]], match.Remaining(i)) - rate * marginNs / 8e9));
        // A credit only shrinks what is still unsent. What is in flight now
        // (a first round trip sent at line rate: 2.5 MB on 50 us links) was
        // delivered early in the stored transient; here it is delivered
        // after the skip, mostly from the queue it fills, at the flow's
        // share of its bottleneck. Where the stored end leaves less than
        // that to go, the skip stops earlier by the time the excess takes
        // at that share, and every flow is credited that much less
        // (crediting it anyway left it in flight: each flow of a 4-to-1
        // incast on 50 us links finished 15 link delays late; draining it
        // at the transient's mean rate instead, 11% early).
        const double excess = upTo.back() - match.Unsent(i);
        if (excess > 0)
        {
            back = drainRate[i] > 0 ? std::max(back, excess * 8e9 / drainRate[i])
                                    : std::numeric_limits<double>::infinity();
        }
    }
    double skipNs = static_cast<double>(rec.transientNs) - marginNs - back;
    if (rec.course && !rec.course->empty() && skipNs > 0)
    {
        // End on a checkpoint of the course, whose congestion-control state
        // the hit restores (ApplyMemoHit): its timers belong to that time.
        const double at = static_cast<double>(CheckpointAt(*rec.course, static_cast<int64_t>(skipNs)).atNs);
        back += skipNs - at;
        skipNs = at;
    }
    if (!(skipNs >= static_cast<double>(m_minSkip.GetNanoSeconds())) ||
        UntilKnownJoin(partition, static_cast<double>(m_currentTs) + skipNs) < skipNs)
    {
        return false;
    }
    const auto skip = static_cast<int64_t>(skipNs);
    std::vector<double> credit;
    for (uint32_t i = 0; i < map.size(); ++i)
    {
        credit.push_back(std::max(0.0, upTo[i] - drainRate[i] * back / 8e9));
    }
    NS_LOG_INFO("memo hit (ends in a completion): partition " << partition << " skips " << skip << " ns ("
                                                              << static_cast<int64_t>(back)
                                                              << " ns short of the record, for what is in flight)");
    ApplyEndingHit(partition, rec, map, skip, std::move(credit), HitFrom{});
    return true;
}

void
WormholeSimulatorImpl::ApplyEndingHit(uint32_t partition,
                                      const wormhole::MemoRecord& rec,
                                      const std::vector<uint32_t>& map,
                                      int64_t skip,
                                      std::vector<double> credit,
                                      const HitFrom& from)
{
    ApplyMemoHit(partition, rec, map, skip, std::move(credit), true, true, from);
    m_stats.memoTimeSavedNs += skip;
    m_stats.memoEventsSaved += static_cast<uint64_t>(static_cast<double>(rec.transientEvents) *
                                                     static_cast<double>(skip) /
                                                     static_cast<double>(rec.transientNs));
}

bool
WormholeSimulatorImpl::MemoHitFlatPrefix(uint32_t partition,
                                         const wormhole::MemoMatch& match,
                                         const wormhole::MemoMatch::Hit& hit)
{
    // Too short for the whole stored transient, but that transient ran
    // at its converged rates from the start (flows alone on their
    // links): any prefix of it is those rates times its length, so the
    // flows skip straight to just before the earliest completion.
    const wormhole::MemoRecord& rec = *hit.record;
    const auto& map = hit.map;
    const double minSkip = static_cast<double>(m_minSkip.GetNanoSeconds());
    // Flows back to back at line rate skip whole periods up to one period
    // before their ends, credited exactly (as in TryFastForward); others,
    // or periods too long for the skip, at the stored rates to within the
    // record's spread.
    const auto rates = RatesOf(partition, rec, map);
    std::vector<std::pair<uint64_t, uint64_t>> periods;
    uint64_t quantum = LineRateQuantum(rates, periods);
    double skipNs = 0;
    if (quantum > 0)
    {
        skipNs = UntilCompletionExact(rates, periods);
        skipNs = std::min(skipNs, UntilKnownJoin(partition, static_cast<double>(m_currentTs) + skipNs));
        skipNs = std::floor(skipNs / static_cast<double>(quantum)) * static_cast<double>(quantum);
        quantum = skipNs >= minSkip ? quantum : 0;
    }
    if (quantum == 0)
    {
        skipNs = UntilCompletionFlat(rates, rec.spread);
        // Any prefix of a flat transient is exact: one ends at a known join.
        skipNs = std::min(skipNs, UntilKnownJoin(partition, static_cast<double>(m_currentTs) + skipNs));
    }
    if (!(skipNs >= minSkip))
    {
        return false;
    }
    const auto skip = static_cast<int64_t>(skipNs);
    std::vector<double> credit;
    for (uint32_t i = 0; i < map.size(); ++i)
    {
        credit.push_back(quantum > 0 ? WholePeriodsPayload(skip, periods[i])
                                     : rec.rate[map[i]] * static_cast<double>(skip) / 8e9);
    }
    NS_LOG_INFO("memo hit (flat prefix): partition " << partition << " skips " << skip << " ns");
    ApplyMemoHit(partition, rec, map, skip, std::move(credit), false, true, HitFrom{});
    m_stats.memoTimeSavedNs += skip;
    return true;
}

std::vector<std::pair<uint32_t, double>>
WormholeSimulatorImpl::RatesOf(uint32_t partition,
                               const wormhole::MemoRecord& rec,
                               const std::vector<uint32_t>& map) const
{
    const auto& flows = m_partitions.Get(partition).flows;
    std::vector<std::pair<uint32_t, double>> rates;
    rates.reserve(flows.size());
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        rates.emplace_back(flows[i], rec.rate[map[i]]);
    }
    return rates;
}

double
WormholeSimulatorImpl::WholePeriodsPayload(int64_t skipNs, const std::pair<uint64_t, uint64_t>& period)
{
    return static_cast<double>(skipNs / static_cast<int64_t>(period.first) * static_cast<int64_t>(period.second));
}

void
WormholeSimulatorImpl::ApplyMemoHit(uint32_t partition,
                                    const wormhole::MemoRecord& rec,
                                    const std::vector<uint32_t>& map,
                                    int64_t skip,
                                    std::vector<double> credit,
                                    bool restoreState,
                                    bool toCompletion,
                                    const HitFrom& from)
{
    PartitionState& st = StateOf(partition);
    const auto flows = m_partitions.Get(partition).flows;
    // The state is put in place when the skip ends (RestoreAtSkipEnd), as
    // the partition's first event there. A skip that ends before the record's end
    // (short of a completion, for what is in flight) takes the state its
    // course had there: a DCQCN flow that the record's end finds at its
    // minimum rate, having sent all its bytes, still ran at 73 Gb/s when the
    // skip ends, and restored at 1 Gb/s it crawled through what it had left
    // (240-450 us late on 50 us links).
    const wormhole::MemoCheckpoint* at =
        restoreState && rec.course && !rec.course->empty() ? &CheckpointAt(*rec.course, from.into + skip) : nullptr;
    auto cut = std::make_shared<MemoCut>();
    if (restoreState && rec.course && !rec.course->empty())
    {
        cut->course = rec.course;
        cut->flows = flows;
        cut->map = map;
        cut->startedAt = m_currentTs;
        cut->startedUid = m_currentUid;
        cut->steady = rec.completes < 0;
        cut->into = from.into;
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            cut->done.push_back(from.Done(i));
            cut->rate.push_back(rec.rate[map[i]]);
            cut->inFlight.push_back(static_cast<double>(FlowSeam::creditor->GetFlowInFlight(flows[i])));
        }
    }
    if (restoreState)
    {
        wormhole::RaggedRows states;
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            states.Append(at ? at->cc[map[i]] : rec.cc[map[i]]);
        }
        RestoreAtSkipEnd(partition, m_currentTs + static_cast<uint64_t>(skip), flows, std::move(states));
    }
    // The frames in flight now (a first round trip at line rate when the
    // pattern has just formed: 1 MB a flow on 20 us links) were delivered
    // early on in the stored course, and what their marks did is in the
    // congestion-control state restored above. Frozen by the shift, they
    // still take their wire time after it, which stands in for the bytes
    // the course had in flight there; but they reach the bottleneck
    // together, where in the reference they had drained long before: marked
    // or counted there they cut every DCQCN flow to its minimum rate, and
    // every wave a hit replayed on 20 us links ended 300-450 us late. The
    // echoes of marks they carried before the hit (CNPs and marked ACKs in
    // flight) are ignored too: arriving after the skip they cut rates the
    // restored state had already cut, and held back the flows' recovery.
    if (restoreState && from.into == 0)
    {
        FlowSeam::creditor->SetInFlightEcnExempt(flows, true);
    }
    ShiftPartition(partition, skip);
    if (restoreState && m_memoRestoreQueues)
    {
        const bool deferred = from.into > 0 && at;
        const std::vector<double> backlog =
            deferred ? ResumeQueuesAt(flows, map, *at, rec.rate, cut->inFlight, skip)
                     : RestoreBacklog(flows, rec.backlog, rec.rate, map, skip);
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            credit[i] = deferred ? std::max(credit[i], backlog[i]) : credit[i] + backlog[i];
        }
    }
    std::vector<std::pair<uint32_t, double>> rates;
    BeginCredit();
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const int64_t taken = Credit(flows[i], static_cast<int64_t>(credit[i]), skip);
        rates.emplace_back(flows[i], static_cast<double>(taken) * 8e9 / static_cast<double>(skip));
        cut->credited.push_back(taken);
    }
    BeginSkip(partition, skip, std::move(rates));
    if (cut->course)
    {
        st.memoCut = std::move(cut);
    }
    st.memoPending = false;
    // Skipped to just before a completion: nothing more until it changes.
    st.locked = toCompletion;
    if (toCompletion)
    {
        m_stats.fastForwards++;
    }
    m_stats.memoHits++;
    m_stats.timeSkippedNs += skip;
    EndCredit();
}

void
WormholeSimulatorImpl::MemoCutShort(uint32_t partition, int64_t back)
{
    // Something from outside (a flow nobody announced) reached the partition
    // e ns into a hit's skip; its events are back at now. The stored end
    // state is not the reference's at e, nor is the state before the hit:
    // resume from the course instead. The latest checkpoint at or before e
    // gives each flow's CC state and the ports' queues; each flow is
    // credited what the course had it deliver by e (interpolated), and what
    // it had in flight there less what it still has in flight from before
    // the hit, so that it has sent what its counterpart had. The partition
    // then lags the reference by at most the checkpoint spacing.
    PartitionState& st = StateOf(partition);
    const std::shared_ptr<const MemoCut> cut = std::move(st.memoCut);
    st.memoCut.reset();
    m_stats.memoHitsResumed++;
    // Resumed from a checkpoint, the frozen frames stand for what the course
    // had in flight there, which met the queues ahead of it and their marks;
    // those beyond it are waived below.
    FlowSeam::creditor->SetInFlightEcnExempt(cut->flows, false);
    const auto flows = m_partitions.Get(partition).flows;
    if (flows != cut->flows)
    {
        for (const auto& [flow, rate] : st.creditRates)
        {
            Credit(flow, -static_cast<int64_t>(rate * static_cast<double>(back) / 8e9), -back);
        }
        return;
    }
    const wormhole::MemoCourse& course = *cut->course;
    const auto e = static_cast<int64_t>(m_currentTs - cut->startedAt) + cut->into;
    const wormhole::MemoCheckpoint& at = CheckpointAt(course, e);
    const wormhole::MemoCheckpoint* next = &at + 1 == course.data() + course.size() ? nullptr : &at + 1;
    NS_LOG_INFO("memo hit cut short: partition " << partition << " at " << e << " ns of its transient, from the "
                                                 << at.atNs << " ns checkpoint");
    std::vector<double> backlog(flows.size(), 0.0);
    if (m_memoRestoreQueues)
    {
        DropRestoredBacklog(flows);
        std::vector<double> rate(flows.size(), 0.0); // by record vertex, as the backlog
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            rate[cut->map[i]] = cut->rate[i];
        }
        backlog = ResumeQueuesAt(flows, cut->map, at, rate, cut->inFlight, 0);
    }
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const uint32_t v = cut->map[i];
        const double since = static_cast<double>(e - at.atNs);
        double delivered = at.bytes[v];
        if (next)
        {
            delivered += (next->bytes[v] - at.bytes[v]) * since / static_cast<double>(next->atNs - at.atNs);
        }
        else if (cut->steady)
        {
            delivered += cut->rate[i] * since / 8e9; // the steady stretch after the transient
        }
        const double want = std::max(backlog[i], delivered - cut->done[i] + at.inFlight[v] - cut->inFlight[i]);
        Credit(flows[i], static_cast<int64_t>(want) - cut->credited[i], -back);
    }
    // After the credit has moved the flows' clocks back to now: the restored
    // state's timers start from now.
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        FlowSeam::creditor->RestoreFlowState(flows[i], at.cc[cut->map[i]]);
    }
}

std::vector<double>
WormholeSimulatorImpl::ResumeQueuesAt(const std::vector<uint32_t>& flows,
                                      const std::vector<uint32_t>& map,
                                      const wormhole::MemoCheckpoint& at,
                                      const std::vector<double>& rate,
                                      const std::vector<double>& inFlight,
                                      int64_t skip)
{
    // What each port has ahead of it beyond the checkpoint: the bytes its
    // flows hold in flight (frozen by the skip) beyond what their
    // counterparts held there, plus the queue put back below. Counting only
    // the frames already queued at the port left those still on the wire
    // towards it to arrive on top of the checkpoint's queue: on 10 us links
    // 0.5 MB over a 1.2 MB queue crossed the 1.6 MB marking threshold, marks
    // the reference never drew cut every flow and restarted its increase
    // timer, and the flows ended 11-16% late. Those bytes are waived: the
    // port sends them without wire time, as already delivered.
    std::vector<std::pair<uint64_t, uint64_t>> hops;
    std::vector<std::pair<uint64_t, double>> surplus; // first seen order: deterministic
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const uint32_t v = map[i];
        FlowSeam::creditor->GetPathBacklog(flows[i], hops);
        for (size_t h = 0; h < hops.size(); ++h)
        {
            const auto [port, now] = hops[h];
            if (port == 0)
            {
                continue;
            }
            auto it = std::find_if(surplus.begin(), surplus.end(), [port = port](const auto& s) {
                return s.first == port;
            });
            if (it == surplus.end())
            {
                const double want = h < at.backlog[v].size() ? at.backlog[v][h] : 0.0;
                const double add = std::max(0.0, want - static_cast<double>(now)); // as RestoreBacklog
                it = surplus.emplace(surplus.end(), port, add >= 1.0 ? add : 0.0);
            }
            it->second += inFlight[i] - at.inFlight[v];
        }
    }
    const std::vector<double> backlog = RestoreBacklog(flows, at.backlog, rate, map, skip);
    for (const auto& [port, bytes] : surplus)
    {
        const auto waived = static_cast<uint64_t>(std::max(0.0, bytes));
        FlowSeam::creditor->WaiveBytes(port, waived);
        m_stats.memoWaivedBytes += waived;
    }
    return backlog;
}

void
WormholeSimulatorImpl::RestoreAtSkipEnd(uint32_t partition,
                                        uint64_t at,
                                        std::vector<uint32_t> flows,
                                        wormhole::RaggedRows states)
{
    // Scheduled for the skip's end under the uid of the event the hit was
    // made in: that event has run, so the key is free, and it sorts before
    // every event of the partition moved there (all scheduled at or after
    // it). Not owned by a link: no later shift moves it; a skip-back cancels it.
    EventImpl* restore = MakeEvent([this, flows = std::move(flows), states = std::move(states)]() {
        for (size_t i = 0; i < flows.size(); ++i)
        {
            FlowSeam::creditor->RestoreFlowState(flows[i], states[i]);
        }
    });
    m_shifted.erase(m_currentUid); // the running event's, if it had been moved: not this one's time
    Scheduler::Event ev;
    ev.impl = restore;
    ev.key.m_ts = at;
    ev.key.m_context = m_currentContext;
    ev.key.m_uid = m_currentUid;
    m_unscheduledEvents++;
    m_stats.eventsScheduled++;
    m_events->Insert(ev);
    StateOf(partition).pendingRestore = EventId(restore, ev.key.m_ts, ev.key.m_context, ev.key.m_uid);
}

void
WormholeSimulatorImpl::DropRestoredBacklog(const std::vector<uint32_t>& flows)
{
    std::vector<std::pair<uint64_t, uint64_t>> hops;
    for (uint32_t flow : flows)
    {
        FlowSeam::creditor->GetPathBacklog(flow, hops);
        for (const auto& [port, bytes] : hops)
        {
            if (port != 0)
            {
                FlowSeam::creditor->DropBacklog(port);
                FlowSeam::creditor->WaiveBytes(port, 0); // a deferred hit's (ResumeQueuesAt)
            }
        }
    }
}

const wormhole::MemoCheckpoint&
WormholeSimulatorImpl::CheckpointAt(const wormhole::MemoCourse& course, int64_t e)
{
    // The latest checkpoint at or before e (the first if none is).
    const auto after = std::upper_bound(course.begin(), course.end(), e, [](int64_t t, const wormhole::MemoCheckpoint& c) {
        return t < c.atNs;
    });
    return *(after == course.begin() ? after : after - 1);
}

std::vector<double>
WormholeSimulatorImpl::RestoreBacklog(const std::vector<uint32_t>& flows,
                                      const wormhole::RaggedRows& backlog,
                                      const std::vector<double>& rate,
                                      const std::vector<uint32_t>& map,
                                      int64_t skip)
{
    // Each switch port of the partition gets the queue its counterpart had
    // at the end of the stored transient, less what it holds now. Those
    // bytes were sent by the port's flows in the stored run and are still
    // to be delivered: they become a frameless backlog the port sends first
    // (ECN counts it), and each flow using the port is credited its share,
    // by converged rate, which the port then "delivers" by being busy.
    std::vector<double> credit(flows.size(), 0.0);
    if (backlog.size() != rate.size())
    {
        return credit;
    }
    std::unordered_map<uint64_t, std::vector<uint32_t>> users;
    std::vector<std::pair<uint64_t, double>> ports; // first seen order: deterministic
    std::vector<std::pair<uint64_t, uint64_t>> hops;
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        FlowSeam::creditor->GetPathBacklog(flows[i], hops);
        const std::span<const double> stored = backlog[map[i]];
        for (size_t h = 0; h < hops.size(); ++h)
        {
            const auto [port, now] = hops[h];
            if (port == 0)
            {
                continue;
            }
            auto [it, fresh] = users.try_emplace(port);
            it->second.push_back(i);
            if (fresh)
            {
                const double want = h < stored.size() ? stored[h] : 0.0;
                ports.emplace_back(port, std::max(0.0, want - static_cast<double>(now)));
            }
        }
    }
    const int64_t from = static_cast<int64_t>(m_currentTs) + skip;
    for (const auto& [port, add] : ports)
    {
        if (add < 1.0)
        {
            continue;
        }
        const std::vector<uint32_t>& who = users[port];
        double total = 0;
        for (uint32_t i : who)
        {
            total += rate[map[i]];
        }
        // Whole bytes per flow, the last taking the rounding: the shares are
        // the backlog, and the model charges each to its flow's ingress.
        std::vector<std::pair<uint32_t, uint64_t>> shares;
        uint64_t given = 0;
        for (uint32_t i : who)
        {
            const double share = total > 0 ? add * rate[map[i]] / total : add / static_cast<double>(who.size());
            credit[i] += share;
            const uint64_t bytes = i == who.back() ? static_cast<uint64_t>(add) - given
                                                   : std::min(static_cast<uint64_t>(share), static_cast<uint64_t>(add) - given);
            given += bytes;
            shares.emplace_back(flows[i], bytes);
        }
        FlowSeam::creditor->AddBacklog(port, shares, from);
        m_stats.memoBacklogBytes += static_cast<uint64_t>(add);
    }
    return credit;
}

} // namespace ns3
