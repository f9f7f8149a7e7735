// The accelerating half of WormholeSimulatorImpl: flow facts in, partitions
// tracked, steady partitions fast-forwarded by shifting their pending events
// and crediting their flows (Wormhole §5, §6.2-6.3).
//
// A skip of partition P by dT at time t0 moves every pending event owned by
// one of P's links to ts + dT, so P's whole state (queues, pauses, CC timers,
// packets on the wire) is frozen and resumes at t0 + dT exactly as it was,
// while each flow is credited rate x dT bytes. Other partitions' events never
// move. If something from outside touches P before t0 + dT (a new flow on one
// of its links, an event scheduled on one of its links), P is skipped back
// to that moment: events move back and credits shrink to the time really
// skipped.
#include "wormhole-simulator-impl.h"

#include "ns3/log.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeFastForward");

using wormhole::FlowSeam;
using wormhole::PartitionTracker;

bool
WormholeSimulatorImpl::IsPending(const TrackedEvent& e) const
{
    // Events are tracked without a reference: one still due is still held
    // by the scheduler (Remove() is recorded in m_removed), so its time alone
    // says whether the entry is live.
    return e.ts > m_currentTs || (e.ts == m_currentTs && e.uid > m_currentUid);
}

void
WormholeSimulatorImpl::Track(uint32_t owner, EventImpl* impl, uint64_t ts, uint32_t uid, uint32_t context)
{
    if (owner >= m_linkEvents.size())
    {
        m_linkEvents.resize(owner + 1);
        m_compactAt.resize(owner + 1, 16);
        m_linkScheduled.resize(owner + 1, 0);
    }
    // Something outside a skipped partition reached one of its links: bring
    // the partition back to now before the new event joins it.
    if (m_activeSkips > 0)
    {
        uint32_t partition = m_partitions.PartitionOfLink(owner);
        if (partition != PartitionTracker::kNone && IsSkipping(partition))
        {
            SkipBack(partition);
        }
    }
    ++m_linkScheduled[owner];
    auto& events = m_linkEvents[owner];
    events.push_back({impl, ts, uid, context});
    if (events.size() >= m_compactAt[owner])
    {
        CompactLink(owner);
    }
}

void
WormholeSimulatorImpl::CompactLink(uint32_t link)
{
    auto& events = m_linkEvents[link];
    std::erase_if(events, [this](const TrackedEvent& e) { return !IsPending(e); });
    m_compactAt[link] = std::max<size_t>(16, 2 * events.size());
}

void
WormholeSimulatorImpl::ShiftLinkEvents(uint32_t link, int64_t dt)
{
    if (link >= m_linkEvents.size())
    {
        return;
    }
    CompactLink(link);
    for (TrackedEvent& e : m_linkEvents[link])
    {
        if (dt < 0 && static_cast<int64_t>(e.ts) + dt < static_cast<int64_t>(m_currentTs))
        {
            // Scheduled during the skip, not moved by it: it stays put.
            continue;
        }
        if (!m_removed.empty() && m_removed.erase(e.uid))
        {
            e.impl = nullptr; // gone from the scheduler; dropped below
            continue;
        }
        Scheduler::Event ev;
        ev.impl = e.impl;
        ev.key.m_ts = e.ts;
        ev.key.m_context = e.context;
        ev.key.m_uid = e.uid;
        m_events->Remove(ev);
        e.ts = static_cast<uint64_t>(static_cast<int64_t>(e.ts) + dt);
        ev.key.m_ts = e.ts;
        m_events->Insert(ev);
        m_shifted[e.uid] = e.ts;
    }
    // Entries of removed events were skipped above: drop them too.
    std::erase_if(m_linkEvents[link], [](const TrackedEvent& e) { return e.impl == nullptr; });
}

void
WormholeSimulatorImpl::ShiftPartition(uint32_t partition, int64_t dt)
{
    for (uint32_t link : m_partitions.Get(partition).links)
    {
        ShiftLinkEvents(link, dt);
        if (FlowSeam::creditor)
        {
            FlowSeam::creditor->ShiftLink(link, dt);
        }
    }
}

WormholeSimulatorImpl::PartitionState&
WormholeSimulatorImpl::StateOf(uint32_t partition)
{
    if (partition >= m_partitionState.size())
    {
        m_partitionState.resize(partition + 1);
    }
    return m_partitionState[partition];
}

bool
WormholeSimulatorImpl::IsSkipping(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    if (st.skipping && m_currentTs >= st.skipEnd)
    {
        st.skipping = false; // the skip ran its course
        --m_activeSkips;
    }
    return st.skipping;
}

void
WormholeSimulatorImpl::SkipBack(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    const int64_t back = static_cast<int64_t>(st.skipEnd - m_currentTs);
    NS_LOG_INFO("skip-back partition " << partition << " by " << back << " ns");
    st.skipping = false;
    --m_activeSkips;
    ShiftPartition(partition, -back);
    for (const auto& [flow, rate] : st.creditRates)
    {
        auto it = m_flows.find(flow);
        const int64_t bytes = static_cast<int64_t>(rate * static_cast<double>(back) / 8e9);
        if (it != m_flows.end())
        {
            it->second.credited -= bytes;
        }
        m_flowSkipped[flow] -= back;
        if (FlowSeam::creditor)
        {
            FlowSeam::creditor->CreditFlow(flow, -bytes, -back);
        }
    }
    st.creditRates.clear();
    m_stats.skipBacks++;
    m_stats.timeSkippedNs -= back;
    ResetPartition(partition);
}

void
WormholeSimulatorImpl::ResetPartition(uint32_t partition)
{
    // The partition's contention pattern changed (a flow joined or left, or
    // it was disturbed). Its flows keep their windows, so a change that does
    // not affect them (a flow alone at line rate next to a newcomer's ACKs)
    // costs only a short settling; one that does shows in their samples.
    // R-hat is measured afresh from now.
    PartitionState& st = StateOf(partition);
    st.locked = false;
    st.retryAfter = 0;
    st.skippedSinceAnchor = 0;
    st.steadyFlows = 0;
    for (uint32_t flow : m_partitions.Get(partition).flows)
    {
        FlowState& fs = m_flows[flow];
        fs.steady = false;
        fs.settle = 0;
        fs.anchorFinal = false;
        fs.memoCheck = m_memo;
        fs.alone = m_partitions.Get(partition).flows.size() == 1;
        fs.anchorTime = m_currentTs;
        fs.anchorAcked = fs.acked;
        fs.anchorCredited = fs.credited;
    }
}

void
WormholeSimulatorImpl::ClearWindows(uint32_t partition)
{
    StateOf(partition).steadyFlows = 0;
    for (uint32_t flow : m_partitions.Get(partition).flows)
    {
        FlowState& fs = m_flows[flow];
        fs.window.Clear();
        fs.steady = false;
    }
}

void
WormholeSimulatorImpl::FlowScheduled(uint32_t flowId, uint64_t startNs, const std::vector<uint32_t>& links)
{
    m_futureStarts.emplace(startNs, flowId);
    m_futureFlows[flowId] = {startNs, links};
}

double
WormholeSimulatorImpl::UntilKnownJoin(uint32_t partition, double horizonNs) const
{
    for (auto it = m_futureStarts.lower_bound(m_currentTs);
         it != m_futureStarts.end() && static_cast<double>(it->first) < horizonNs;
         ++it)
    {
        for (uint32_t link : m_futureFlows.at(it->second).second)
        {
            if (m_partitions.PartitionOfLink(link) == partition)
            {
                return static_cast<double>(it->first - m_currentTs);
            }
        }
    }
    return std::numeric_limits<double>::infinity();
}

void
WormholeSimulatorImpl::FlowStarted(uint32_t flowId,
                                   const std::vector<uint32_t>& links,
                                   uint32_t dataHops,
                                   uint64_t bytes)
{
    if (auto known = m_futureFlows.find(flowId); known != m_futureFlows.end())
    {
        auto [first, last] = m_futureStarts.equal_range(known->second.first);
        for (auto it = first; it != last; ++it)
        {
            if (it->second == flowId)
            {
                m_futureStarts.erase(it);
                break;
            }
        }
        m_futureFlows.erase(known);
    }
    for (uint32_t p : m_partitions.PartitionsOfLinks(links))
    {
        if (IsSkipping(p))
        {
            SkipBack(p);
        }
    }
    FlowState& fs = m_flows[flowId];
    fs = FlowState{};
    fs.bytes = bytes;
    fs.links = links;
    fs.dataHops = std::min<uint32_t>(dataHops, static_cast<uint32_t>(links.size()));
    fs.firstLink = links.empty() ? 0 : links.front();
    fs.window.SetCapacity(m_window);
    if (FlowSeam::creditor && !links.empty())
    {
        double payload = 0;
        FlowSeam::creditor->GetLinkCapacity(fs.firstLink, fs.ccRate, payload); // RDMA starts at line rate
        fs.lineRate = fs.ccRate;
    }
    m_flowSkipped.emplace(flowId, 0);
    const uint32_t partition = m_partitions.AddFlow(flowId, links);
    ResetPartition(partition);
}

void
WormholeSimulatorImpl::FlowProgress(uint32_t flowId, double ccRateBps, uint64_t ackedBytes, uint64_t sentBytes)
{
    auto it = m_flows.find(flowId);
    if (it == m_flows.end())
    {
        return;
    }
    FlowState& fs = it->second;
    fs.acked = ackedBytes;
    fs.sent = sentBytes;
    fs.ccRate = ccRateBps;
    if (fs.memoCheck)
    {
        // The pattern is looked up at its first acknowledgement, not at each
        // join: a collective's flows start together, and one lookup of the
        // whole pattern replaces one per flow of ever larger partial ones.
        const uint32_t formed = m_partitions.PartitionOfFlow(flowId);
        for (uint32_t f : m_partitions.Get(formed).flows)
        {
            m_flows[f].memoCheck = false;
        }
        MemoOnFormation(formed);
        if (IsSkipping(formed))
        {
            return; // skipped by a memo hit: this flow's state just moved on
        }
    }
    // A sample is the delivered payload rate over the (up to) l
    // acknowledgements before this one: a per-packet CC rate swings by tens
    // of percent under DCQCN's sawtooth, while a rate measured over l packets
    // adapts its time scale to the flow's speed (160 us for a lone 100G flow,
    // about 1 ms for one of eight sharing it).
    //
    // A flow alone in its partition whose congestion control never cut it
    // runs at line rate by construction; it needs no l-packet averaging, and
    // short flows (pipeline sends) could never fill a full window. It is
    // judged on a window of l/4 samples spanning l/8 acknowledgements each,
    // until its first cut or a neighbour, which put it back on the full one.
    fs.everCut = fs.everCut || ccRateBps < fs.lineRate;
    const bool quick = fs.alone && !fs.everCut;
    if (quick != fs.quick)
    {
        fs.quick = quick;
        fs.window.SetCapacity(quick ? std::max<uint32_t>(2, m_window / 4) : m_window);
    }
    const uint32_t span = quick ? std::max<uint32_t>(1, m_window / 8) : m_window;
    const uint64_t need = quick ? m_window / 4 + span : 2 * static_cast<uint64_t>(m_window);
    if (fs.window.Size() == 0)
    {
        fs.window.Push(m_currentTs, 0.0, ackedBytes);
        return;
    }
    const auto& oldest = fs.window.At(fs.window.Size() > span ? fs.window.Size() - span : 0);
    if (m_currentTs <= oldest.timeNs)
    {
        return;
    }
    const double rate =
        static_cast<double>(ackedBytes - oldest.acked) * 8e9 / static_cast<double>(m_currentTs - oldest.timeNs);
    fs.window.Push(m_currentTs, rate, ackedBytes);
    ++fs.settle;
    // Steady needs a window of samples that each span their share of
    // acknowledgements, l/4 of them taken since the partition last changed.
    if (fs.window.Pushed() < need || 4 * fs.settle < m_window)
    {
        return;
    }
    const uint32_t partition = m_partitions.PartitionOfFlow(flowId);
    PartitionState& st = StateOf(partition);
    const bool steady = fs.window.Spread() < m_theta;
    if (steady != fs.steady)
    {
        fs.steady = steady;
        st.steadyFlows += steady ? 1 : -1;
    }
    if (steady && !fs.anchorFinal)
    {
        // Measure R-hat from the start of the first steady window, if that
        // lies after the change: the transient before it is not the rate.
        const auto& first = fs.window.Oldest();
        if (first.timeNs > fs.anchorTime)
        {
            fs.anchorTime = first.timeNs;
            fs.anchorAcked = first.acked;
            fs.anchorCredited = fs.credited;
        }
        fs.anchorFinal = true;
    }
    if (steady && !st.locked && !st.skipping && m_currentTs >= st.retryAfter &&
        st.steadyFlows == m_partitions.Get(partition).flows.size())
    {
        TryFastForward(partition);
    }
}

double
WormholeSimulatorImpl::SpreadSinceAnchor(const FlowState& fs) const
{
    // How noisy the rate is now: the delivered rate over four equal slices
    // of the time since the last change (the window's own samples each
    // reach l acknowledgements back, across the change: a neighbour's ACKs
    // joining a link take 6% from a flow at line rate).
    uint32_t first = fs.window.Size();
    while (first > 0 && fs.window.At(first - 1).timeNs >= fs.anchorTime)
    {
        --first;
    }
    const uint32_t n = fs.window.Size() - first;
    if (n < 8)
    {
        return fs.window.Spread();
    }
    const auto& a = fs.window.At(first);
    const auto& z = fs.window.Newest();
    double lo = std::numeric_limits<double>::infinity();
    double hi = 0;
    uint32_t k = first;
    uint64_t t0 = a.timeNs;
    uint64_t b0 = a.acked;
    for (int slice = 1; slice <= 4; ++slice)
    {
        const uint64_t until = a.timeNs + (z.timeNs - a.timeNs) * slice / 4;
        while (k + 1 < fs.window.Size() && fs.window.At(k).timeNs < until)
        {
            ++k;
        }
        const auto& e = fs.window.At(k);
        if (e.timeNs <= t0)
        {
            return fs.window.Spread();
        }
        const double rate = static_cast<double>(e.acked - b0) / static_cast<double>(e.timeNs - t0);
        lo = std::min(lo, rate);
        hi = std::max(hi, rate);
        t0 = e.timeNs;
        b0 = e.acked;
    }
    const double mean = static_cast<double>(z.acked - a.acked) / static_cast<double>(z.timeNs - a.timeNs);
    return mean > 0 ? (hi - lo) / mean : fs.window.Spread();
}

bool
WormholeSimulatorImpl::WorkConserving(uint32_t partition, const std::vector<std::pair<uint32_t, double>>& rates) const
{
    if (!FlowSeam::creditor)
    {
        return true; // a model that cannot tell capacities: trust the window
    }
    const auto& flows = m_partitions.Get(partition).flows;
    std::unordered_map<uint32_t, double> load;
    for (const auto& [flow, rate] : rates)
    {
        for (uint32_t link : m_flows.at(flow).links)
        {
            load[link] += rate;
        }
    }
    for (uint32_t flow : flows)
    {
        const FlowState& fs = m_flows.at(flow);
        double line = 0;
        double payload = 0;
        FlowSeam::creditor->GetLinkCapacity(fs.firstLink, line, payload);
        if (fs.ccRate >= (1 - m_theta) * line)
        {
            continue;
        }
        bool bottlenecked = false;
        for (uint32_t link : fs.links)
        {
            FlowSeam::creditor->GetLinkCapacity(link, line, payload);
            if (load[link] >= (1 - m_theta) * payload)
            {
                bottlenecked = true;
                break;
            }
        }
        if (!bottlenecked)
        {
            return false;
        }
    }
    return true;
}

void
WormholeSimulatorImpl::TryFastForward(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    const auto& flows = m_partitions.Get(partition).flows;
    const double marginNs = static_cast<double>(m_completionMargin.GetNanoSeconds());
    const double minSkip = static_cast<double>(m_minSkip.GetNanoSeconds());
    std::vector<std::pair<uint32_t, double>> rates;
    rates.reserve(flows.size());
    double untilCompletion = std::numeric_limits<double>::infinity();
    double untilDrift = std::numeric_limits<double>::infinity();
    uint64_t latestAnchor = 0;
    double spread = 0;
    for (uint32_t flow : flows)
    {
        const FlowState& fs = m_flows[flow];
        // A flow that has been silent (paused, blocked) for a while has a
        // stale window: not steady in any useful sense.
        if (m_currentTs - fs.window.Newest().timeNs > static_cast<uint64_t>(minSkip))
        {
            return;
        }
        // R-hat: payload delivered since the anchor (credit included) over
        // the time since. It includes header overhead, pauses and pacing
        // gaps, unlike the CC rate; and it averages over all the steady time
        // seen, not one window: per-flow shares under DCQCN wander by +-5%
        // from one millisecond to the next around a persistent mean.
        const double since = static_cast<double>(m_currentTs - fs.anchorTime);
        const double delivered = static_cast<double>(fs.acked - fs.anchorAcked) +
                                 static_cast<double>(fs.credited - fs.anchorCredited);
        const double rate = since > 0 ? delivered * 8e9 / since : 0;
        latestAnchor = std::max(latestAnchor, fs.anchorTime);
        spread = std::max(spread, SpreadSinceAnchor(fs));
        if (rate <= 0)
        {
            st.locked = true;
            return;
        }
        const double remaining = static_cast<double>(fs.bytes) - static_cast<double>(fs.acked) -
                                 static_cast<double>(fs.credited);
        const double margin = static_cast<double>(fs.sent - fs.acked) + rate * marginNs / 8e9;
        untilCompletion = std::min(untilCompletion, (remaining - margin) * 8e9 / rate);
        rates.emplace_back(flow, rate);
    }
    // Extrapolate a noisy rate at most MaxExtrapolation times what was
    // simulated since the anchor; a flat one (a flow alone at line rate,
    // spread well under theta) is exact and needs no such bound.
    if (spread > 0.2 * m_theta)
    {
        const double observed =
            static_cast<double>(m_currentTs - latestAnchor) - static_cast<double>(st.skippedSinceAnchor);
        untilDrift =
            std::min(untilDrift, m_maxExtrapolation * observed - static_cast<double>(st.skippedSinceAnchor));
    }
    if (!WorkConserving(partition, rates))
    {
        // Still ramping towards capacity (DCQCN's additive increase after a
        // competitor left): a window can look flat while the rate climbs.
        untilDrift = 0;
    }
    else if (st.memoPending)
    {
        MemoRecordTransient(partition, rates);
    }
    bool driftLimited = untilDrift < untilCompletion;
    double dt = std::min(untilDrift, untilCompletion);
    // A flow known to start on the partition's links ends the skip there
    // (the paper's predetermined interrupts); an unforeseen one skips it back.
    const double untilJoin = UntilKnownJoin(partition, static_cast<double>(m_currentTs) + dt);
    const bool joinLimited = untilJoin < dt;
    if (joinLimited)
    {
        dt = untilJoin;
        driftLimited = false;
    }
    if (!(dt >= minSkip))
    {
        if (driftLimited)
        {
            // Still ramping, or extrapolated far enough for now: look again
            // after more time simulated packet by packet.
            const auto& w = m_flows[flows.front()].window;
            st.retryAfter = m_currentTs + std::max<uint64_t>((w.Newest().timeNs - w.Oldest().timeNs) / 4,
                                                             static_cast<uint64_t>(minSkip));
        }
        else
        {
            // Too close to a completion to be worth it; wait for the change.
            st.locked = true;
        }
        return;
    }
    const auto skip = static_cast<int64_t>(dt);
    if (g_log.IsEnabled(LOG_LEVEL_DEBUG))
    {
        double total = 0;
        for (const auto& r : rates)
        {
            total += r.second;
        }
        NS_LOG_DEBUG("rates (Gbps): total " << total / 1e9 << " over " << rates.size() << " flows"
                                            << (driftLimited ? ", drift-limited" : ""));
    }
    NS_LOG_INFO("fast-forward partition " << partition << " (" << flows.size() << " flows) by "
                                          << skip << " ns at " << m_currentTs);
    ShiftPartition(partition, skip);
    for (const auto& [flow, rate] : rates)
    {
        const auto bytes = static_cast<int64_t>(rate * static_cast<double>(skip) / 8e9);
        m_flows[flow].credited += bytes;
        m_flowSkipped[flow] += skip;
        if (FlowSeam::creditor)
        {
            FlowSeam::creditor->CreditFlow(flow, bytes, skip);
        }
    }
    BeginSkip(partition, skip, std::move(rates));
    PartitionState& after = StateOf(partition);
    // A skip that ends just before a completion or at a join leaves nothing
    // to gain until a flow leaves or joins; a drift-limited one may be
    // followed by another.
    after.locked = !driftLimited;
    m_stats.skipsToKnownStart += joinLimited ? 1 : 0;
    m_stats.fastForwards++;
    m_stats.timeSkippedNs += skip;
}

void
WormholeSimulatorImpl::BeginSkip(uint32_t partition, int64_t skip, std::vector<std::pair<uint32_t, double>> rates)
{
    // The windows now straddle a gap of dT without progress: start them
    // afresh, and measure the next R-hat only from when the partition
    // resumes. Under DCQCN each flow's share wanders around a slowly moving
    // mean; estimates from successive stretches err independently and
    // average out over many skips, where one long-run average would carry
    // the early unfairness into every later skip.
    ClearWindows(partition);
    const uint64_t end = m_currentTs + static_cast<uint64_t>(skip);
    for (uint32_t flow : m_partitions.Get(partition).flows)
    {
        FlowState& fs = m_flows[flow];
        fs.anchorTime = end;
        fs.anchorAcked = fs.acked;
        fs.anchorCredited = fs.credited;
    }
    PartitionState& st = StateOf(partition);
    st.skippedSinceAnchor = 0;
    st.creditRates = std::move(rates); // what a skip-back takes back
    st.skipping = true;
    st.skipEnd = end;
    ++m_activeSkips;
}

void
WormholeSimulatorImpl::FlowFinished(uint32_t flowId)
{
    const uint32_t partition = m_partitions.PartitionOfFlow(flowId);
    if (partition == PartitionTracker::kNone)
    {
        return;
    }
    if (IsSkipping(partition))
    {
        SkipBack(partition);
    }
    if (StateOf(partition).memoPending)
    {
        MemoRecordCompletion(partition, flowId);
    }
    m_flows.erase(flowId);
    for (uint32_t p : m_partitions.RemoveFlow(flowId))
    {
        ResetPartition(p);
    }
}

} // namespace ns3

namespace ns3
{

uint64_t
WormholeSimulatorImpl::ScheduledOnLinks(uint32_t partition) const
{
    uint64_t n = 0;
    for (uint32_t link : m_partitions.Get(partition).links)
    {
        n += link < m_linkScheduled.size() ? m_linkScheduled[link] : 0;
    }
    return n;
}

void
WormholeSimulatorImpl::MemoOnFormation(uint32_t partition)
{
    if (!m_memo || !FlowSeam::creditor)
    {
        return;
    }
    PartitionState& st = StateOf(partition);
    const auto& flows = m_partitions.Get(partition).flows;
    // The pattern: each flow labelled by its quantized rate and the
    // capacities along its path (the paper's FCG ignores them; a memo scoped
    // to one fabric configuration still sees several link speeds), edges
    // weighted by the number of links two flows' data share where they can
    // contend. Acknowledgements travel in the strict-priority control queue
    // and a link whose flows together cannot exceed it (a 400G spine link
    // under three 100G flows) shapes nobody's rate: counting either would
    // make every ECMP placement of one all-to-all a pattern of its own.
    wormhole::FlowConflictGraph g;
    struct LinkUse
    {
        double line = 0;             ///< capacity of the link (bps)
        std::vector<uint32_t> flows; ///< vertices whose data crosses it
    };
    std::unordered_map<uint32_t, LinkUse> onLink;
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const FlowState& fs = m_flows[flows[i]];
        uint64_t label = static_cast<uint64_t>(std::llround(fs.ccRate / m_memoRateQuantum));
        for (uint32_t h = 0; h < fs.dataHops; ++h)
        {
            double line = 0;
            double payload = 0;
            FlowSeam::creditor->GetLinkCapacity(fs.links[h], line, payload);
            label = label * 1000003u + static_cast<uint64_t>(line / 1e6) * 31u + static_cast<uint64_t>(payload / 1e6);
            LinkUse& use = onLink[fs.links[h]];
            use.line = line;
            use.flows.push_back(i);
        }
        g.vertexLabel.push_back(label);
    }
    // Each flow's rate is at most its line rate and an equal share of each
    // link on its data path; a link can be a bottleneck only if those
    // bounds of its flows add up to its capacity.
    std::vector<double> bound(flows.size());
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const FlowState& fs = m_flows[flows[i]];
        bound[i] = fs.lineRate;
        for (uint32_t h = 0; h < fs.dataHops; ++h)
        {
            const LinkUse& use = onLink[fs.links[h]];
            bound[i] = std::min(bound[i], use.line / static_cast<double>(use.flows.size()));
        }
    }
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> shared;
    for (const auto& [link, use] : onLink)
    {
        const std::vector<uint32_t>& vs = use.flows;
        double demand = 0;
        for (uint32_t i : vs)
        {
            demand += bound[i];
        }
        if (vs.size() < 2 || demand < 0.99 * use.line)
        {
            continue;
        }
        for (size_t a = 0; a < vs.size(); ++a)
        {
            for (size_t b = a + 1; b < vs.size(); ++b)
            {
                ++shared[{std::min(vs[a], vs[b]), std::max(vs[a], vs[b])}];
            }
        }
    }
    for (const auto& [pair, weight] : shared)
    {
        g.edges.push_back({pair.first, pair.second, weight});
    }

    const double marginNs = static_cast<double>(m_completionMargin.GetNanoSeconds());
    const double minSkipNs = static_cast<double>(m_minSkip.GetNanoSeconds());
    using Map = std::vector<uint32_t>;
    auto remaining = [&](uint32_t i) {
        const FlowState& fs = m_flows[flows[i]];
        return static_cast<double>(fs.bytes) - static_cast<double>(fs.acked) - static_cast<double>(fs.credited);
    };
    // Bytes flow i may still be credited: what is left, less what is in
    // flight and the margin at the stored rate (its end runs packet by packet).
    auto creditable = [&](uint32_t i, const wormhole::MemoRecord& rec, const Map& map) {
        const FlowState& fs = m_flows[flows[i]];
        return remaining(i) - rec.rate[map[i]] * marginNs / 8e9 - static_cast<double>(fs.sent - fs.acked);
    };
    // The stored transient's flows (but the one it ends with) must not
    // finish during it here.
    auto othersFit = [&](const wormhole::MemoRecord& rec, const Map& map) {
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            if (static_cast<int32_t>(map[i]) != rec.completes && creditable(i, rec, map) <= rec.bytes[map[i]])
            {
                return false;
            }
        }
        return rec.transientNs > 0;
    };
    // How a transient ends in a completion depends on where each flow
    // stands, not only on the pattern. If every flow started with the
    // pattern (delivered at most ~5 us at 100 Gbps), the pattern says it
    // all: such records are keyed by the graph. Otherwise they are keyed by
    // the graph with each flow's remaining bytes (8 KB steps) in its label,
    // so they match only flows with what their counterparts had left (an
    // all-to-all repeated from the same staggered start). Measured: reusing
    // one for a short flow joining long DCQCN flows, whose state the graph
    // does not show, erred by 14%.
    constexpr double kFreshBytes = 64000;
    bool fresh = true;
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const FlowState& fs = m_flows[flows[i]];
        fresh = fresh && static_cast<double>(fs.acked) + static_cast<double>(fs.credited) <= kFreshBytes;
    }
    wormhole::FlowConflictGraph ending; // fresh: no cached hash of g's labels
    ending.vertexLabel = g.vertexLabel;
    ending.edges = g.edges;
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        ending.vertexLabel[i] = ending.vertexLabel[i] * 1000003u +
                                static_cast<uint64_t>(std::llround(std::max(0.0, remaining(i)) / 8192.0));
    }
    // A record ending in a completion applies when the flow it ends with
    // has what its counterpart had left (a flow's end is where it ends),
    // and every other flow has at least what its counterpart delivered.
    auto endsAlike = [&](const wormhole::MemoRecord& rec, const Map& map) {
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            const double want = rec.bytes[map[i]];
            const double tolerance = std::max(4000.0, 0.002 * want);
            const double gap = remaining(i) - want;
            if (gap < -tolerance || (static_cast<int32_t>(map[i]) == rec.completes && gap > tolerance))
            {
                return false;
            }
        }
        return rec.transientNs > 0;
    };

    const wormhole::MemoRecord* steady = nullptr; // a steady record whose transient fits
    const wormhole::MemoRecord* flat = nullptr;   // a flat steady record, for a prefix
    const wormhole::MemoRecord* ends = nullptr;   // a record ending in a completion
    Map steadyMap;
    Map flatMap;
    Map endsMap;
    auto fitsEnding = [&](const wormhole::MemoRecord& rec, const Map& map) {
        return rec.completes >= 0 && endsAlike(rec, map) &&
               static_cast<double>(rec.transientNs) - marginNs >= minSkipNs;
    };
    // Stop at the first steady record that fits or record that ends alike:
    // each candidate costs a VF2 run.
    wormhole::MemoStore::Global().Visit(g, [&](const wormhole::MemoRecord& rec, const Map& map) {
        if (rec.completes < 0 && othersFit(rec, map))
        {
            steady = &rec;
            steadyMap = map;
        }
        else if (rec.completes < 0 && !flat && FlatThroughout(rec))
        {
            flat = &rec;
            flatMap = map;
        }
        else if (fresh && fitsEnding(rec, map))
        {
            ends = &rec;
            endsMap = map;
        }
        return steady != nullptr || ends != nullptr;
    });
    if (!steady && !ends && !fresh)
    {
        wormhole::MemoStore::Global().Visit(ending, [&](const wormhole::MemoRecord& rec, const Map& map) {
            if (!fitsEnding(rec, map))
            {
                return false;
            }
            ends = &rec;
            endsMap = map;
            return true;
        });
    }

    if (steady)
    {
        const wormhole::MemoRecord& rec = *steady;
        const Map& map = steadyMap;
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
        if (flatRecord || m_memoDirectSteady)
        {
            steadyNs = std::numeric_limits<double>::infinity();
            for (uint32_t i = 0; i < flows.size(); ++i)
            {
                const double rate = rec.rate[map[i]];
                const double left = creditable(i, rec, map) - rec.bytes[map[i]];
                steadyNs = rate > 0 ? std::min(steadyNs, left * 8e9 / rate) : 0;
            }
            if (!flatRecord)
            {
                steadyNs = std::min(steadyNs, m_maxExtrapolation * static_cast<double>(rec.transientNs));
            }
            steadyNs = std::max(0.0, steadyNs);
        }
        const auto more = static_cast<int64_t>(steadyNs);
        std::vector<double> credit;
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            credit.push_back(rec.bytes[map[i]] + rec.rate[map[i]] * static_cast<double>(more) / 8e9);
        }
        NS_LOG_INFO("memo hit: partition " << partition << " (" << flows.size() << " flows) skips its "
                                           << rec.transientNs << " ns transient and " << more
                                           << " ns of steady state");
        ApplyMemoHit(partition, rec, map, rec.transientNs + more, std::move(credit), true, more > 0);
        m_stats.memoTimeSavedNs += rec.transientNs;
        m_stats.memoEventsSaved += rec.transientEvents;
        return;
    }
    if (ends)
    {
        // The stored transient ended when one flow completed: skip to just
        // before that completion (the margin at the flows' mean rates is
        // left to run packet by packet), in the state the flows had then.
        const wormhole::MemoRecord& rec = *ends;
        const Map& map = endsMap;
        const auto skip = static_cast<int64_t>(static_cast<double>(rec.transientNs) - marginNs);
        std::vector<double> credit;
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            // Leave what the counterpart had left a margin before the end
            // (its mean rate times the margin): what is in flight here is
            // part of that, as it was there.
            const double upTo = std::min(rec.bytes[map[i]], remaining(i)) - rec.rate[map[i]] * marginNs / 8e9;
            credit.push_back(std::max(0.0, upTo));
        }
        NS_LOG_INFO("memo hit (ends in a completion): partition " << partition << " skips " << skip << " ns");
        ApplyMemoHit(partition, rec, map, skip, std::move(credit), true, true);
        m_stats.memoTimeSavedNs += skip;
        m_stats.memoEventsSaved += static_cast<uint64_t>(static_cast<double>(rec.transientEvents) *
                                                         static_cast<double>(skip) /
                                                         static_cast<double>(rec.transientNs));
        return;
    }
    if (flat)
    {
        // Too short for the whole stored transient, but that transient ran
        // at its converged rates from the start (flows alone on their
        // links): any prefix of it is those rates times its length, so the
        // flows skip straight to just before the earliest completion.
        const wormhole::MemoRecord& rec = *flat;
        const Map& map = flatMap;
        double skipNs = std::numeric_limits<double>::infinity();
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            skipNs = std::min(skipNs, std::max(0.0, creditable(i, rec, map)) * 8e9 / rec.rate[map[i]]);
        }
        if (skipNs >= minSkipNs)
        {
            const auto skip = static_cast<int64_t>(skipNs);
            std::vector<double> credit;
            for (uint32_t i = 0; i < flows.size(); ++i)
            {
                credit.push_back(rec.rate[map[i]] * static_cast<double>(skip) / 8e9);
            }
            NS_LOG_INFO("memo hit (flat prefix): partition " << partition << " skips " << skip << " ns");
            ApplyMemoHit(partition, rec, map, skip, std::move(credit), false, true);
            m_stats.memoTimeSavedNs += skip;
            return;
        }
    }

    // A miss: the pattern as it formed, stored when it turns steady or when
    // one of its flows completes first (unless a record of that kind is in
    // the store by then).
    m_stats.memoMisses++;
    st.memoPending = true;
    st.fcg = std::move(g);
    st.fcgEnding = fresh ? wormhole::FlowConflictGraph{} : std::move(ending);
    st.fcgFlows = flows;
    st.formedAt = m_currentTs;
    st.eventsAtFormation = ScheduledOnLinks(partition);
    st.deliveredAtFormation.clear();
    for (uint32_t f : flows)
    {
        const FlowState& fs = m_flows[f];
        st.deliveredAtFormation.push_back(static_cast<double>(fs.acked) + static_cast<double>(fs.credited));
    }
}

void
WormholeSimulatorImpl::ApplyMemoHit(uint32_t partition,
                                    const wormhole::MemoRecord& rec,
                                    const std::vector<uint32_t>& map,
                                    int64_t skip,
                                    std::vector<double> credit,
                                    bool restoreState,
                                    bool toCompletion)
{
    PartitionState& st = StateOf(partition);
    const auto flows = m_partitions.Get(partition).flows;
    // Restore first: the timers the restored state starts then move with
    // the rest of the partition.
    if (restoreState)
    {
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            FlowSeam::creditor->RestoreFlowState(flows[i], rec.cc[map[i]]);
        }
    }
    ShiftPartition(partition, skip);
    if (restoreState && m_memoRestoreQueues)
    {
        const std::vector<double> backlog = RestoreBacklog(flows, rec, map, skip);
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            credit[i] += backlog[i];
        }
    }
    std::vector<std::pair<uint32_t, double>> rates;
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        FlowState& fs = m_flows[flows[i]];
        const auto bytes = static_cast<int64_t>(credit[i]);
        fs.credited += bytes;
        m_flowSkipped[flows[i]] += skip;
        FlowSeam::creditor->CreditFlow(flows[i], bytes, skip);
        rates.emplace_back(flows[i], static_cast<double>(bytes) * 8e9 / static_cast<double>(skip));
    }
    BeginSkip(partition, skip, std::move(rates));
    st.memoPending = false;
    // Skipped to just before a completion: nothing more until it changes.
    st.locked = toCompletion;
    if (toCompletion)
    {
        m_stats.fastForwards++;
    }
    m_stats.memoHits++;
    m_stats.timeSkippedNs += skip;
}

bool
WormholeSimulatorImpl::FlatThroughout(const wormhole::MemoRecord& rec) const
{
    // Steady windows at the end flat well under theta, and the transient's
    // mean rate (bytes over duration) within theta of the converged rate.
    if (rec.spread > 0.2 * m_theta || rec.transientNs <= 0)
    {
        return false;
    }
    for (size_t v = 0; v < rec.rate.size(); ++v)
    {
        const double mean = rec.bytes[v] * 8e9 / static_cast<double>(rec.transientNs);
        if (!(rec.rate[v] > 0) || std::abs(mean - rec.rate[v]) > m_theta * rec.rate[v])
        {
            return false;
        }
    }
    return true;
}

std::vector<double>
WormholeSimulatorImpl::RestoreBacklog(const std::vector<uint32_t>& flows,
                                      const wormhole::MemoRecord& rec,
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
    if (rec.backlog.size() != rec.rate.size())
    {
        return credit;
    }
    std::unordered_map<uint64_t, std::vector<uint32_t>> users;
    std::vector<std::pair<uint64_t, double>> ports; // first seen order: deterministic
    std::vector<std::pair<uint64_t, uint64_t>> hops;
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        FlowSeam::creditor->GetPathBacklog(flows[i], hops);
        const std::vector<double>& stored = rec.backlog[map[i]];
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
            total += rec.rate[map[i]];
        }
        for (uint32_t i : who)
        {
            credit[i] += total > 0 ? add * rec.rate[map[i]] / total : add / static_cast<double>(who.size());
        }
        FlowSeam::creditor->AddBacklog(port, static_cast<uint64_t>(add), from);
        m_stats.memoBacklogBytes += static_cast<uint64_t>(add);
    }
    return credit;
}

void
WormholeSimulatorImpl::MemoRecordTransient(uint32_t partition,
                                           const std::vector<std::pair<uint32_t, double>>& rates)
{
    MemoRecord(partition, -1, [&](uint32_t i, uint32_t f, const FlowState&) {
        return rates[i].first == f ? rates[i].second : 0.0;
    });
}

void
WormholeSimulatorImpl::MemoRecordCompletion(uint32_t partition, uint32_t flowId)
{
    const PartitionState& st = StateOf(partition);
    const auto it = std::find(st.fcgFlows.begin(), st.fcgFlows.end(), flowId);
    if (it == st.fcgFlows.end())
    {
        return;
    }
    // No steady rate was ever measured: each flow's mean rate over the
    // transient (what a hit's margin before the completion is sized by).
    const double ns = static_cast<double>(m_currentTs - st.formedAt);
    if (ns < static_cast<double>((m_minSkip + m_completionMargin).GetNanoSeconds()))
    {
        StateOf(partition).memoPending = false;
        return; // too short to be worth skipping next time
    }
    MemoRecord(partition, static_cast<int32_t>(it - st.fcgFlows.begin()),
               [&](uint32_t i, uint32_t, const FlowState& fs) {
                   const double delivered = static_cast<double>(fs.acked) + static_cast<double>(fs.credited) -
                                            st.deliveredAtFormation[i];
                   return ns > 0 ? delivered * 8e9 / ns : 0.0;
               });
}

void
WormholeSimulatorImpl::MemoRecord(uint32_t partition,
                                  int32_t completes,
                                  const std::function<double(uint32_t, uint32_t, const FlowState&)>& rateOf)
{
    PartitionState& st = StateOf(partition);
    st.memoPending = false;
    if (st.fcgFlows != m_partitions.Get(partition).flows)
    {
        return; // the partition changed without a formation call: not this pattern
    }
    wormhole::MemoRecord r;
    r.fcg = completes < 0 || st.fcgEnding.vertexLabel.empty() ? st.fcg : st.fcgEnding;
    r.completes = completes;
    r.transientNs = static_cast<int64_t>(m_currentTs - st.formedAt);
    r.transientEvents = ScheduledOnLinks(partition) - st.eventsAtFormation;
    for (uint32_t i = 0; i < st.fcgFlows.size(); ++i)
    {
        const uint32_t f = st.fcgFlows[i];
        const FlowState& fs = m_flows[f];
        r.bytes.push_back(static_cast<double>(fs.acked) + static_cast<double>(fs.credited) -
                          st.deliveredAtFormation[i]);
        r.rate.push_back(rateOf(i, f, fs));
        r.cc.push_back(FlowSeam::creditor->SaveFlowState(f));
        r.spread = std::max(r.spread, SpreadSinceAnchor(fs));
        std::vector<std::pair<uint64_t, uint64_t>> hops;
        FlowSeam::creditor->GetPathBacklog(f, hops);
        std::vector<double>& backlog = r.backlog.emplace_back();
        for (const auto& [port, bytes] : hops)
        {
            backlog.push_back(static_cast<double>(bytes));
        }
    }
    // Partitions of one collective form the same pattern at once and all
    // miss; the first to settle (or end) stores it. A pattern keeps one
    // steady record, and one record per size of the flow it ends with.
    bool known = false;
    wormhole::MemoStore::Global().Visit(r.fcg, [&](const wormhole::MemoRecord& other, const std::vector<uint32_t>&) {
        // One steady record per pattern; one record per size of the flow a
        // transient ends with (which of several alike flows ends it first
        // is a coin flip in symmetric patterns, so not the mapping).
        if (completes < 0)
        {
            known = other.completes < 0;
        }
        else if (other.completes >= 0)
        {
            const double mine = r.bytes[completes];
            known = std::abs(other.bytes[other.completes] - mine) <= std::max(4000.0, 0.002 * mine);
        }
        return known;
    });
    if (known)
    {
        return;
    }
    wormhole::MemoStore::Global().Insert(std::move(r));
    m_stats.memoInserts++;
}

} // namespace ns3
