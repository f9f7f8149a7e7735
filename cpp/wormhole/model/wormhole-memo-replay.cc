// WormholeSimulatorImpl, memo replay: a flow nobody announced joins a
// partition while a memo hit is skipping it. Neither the stored end state
// nor any checkpoint of the stored course is the reference's state at the
// join (the frames the hit froze in flight are not the course's), so the
// hit is undone and the partition is simulated packet by packet from the
// hit to the join, in the past, before the join proceeds (docs/memo.md).
//
// This is sound because the partition was isolated for the whole skip:
// nothing outside it touched its links (that would have ended the skip), so
// its events between the hit and the join depend only on its own state at
// the hit, which the undo restores. The replay runs those events from a
// private queue in time order with the clock set to each; an event they
// schedule on the partition's links before the join joins the replay, and
// anything else (a completion's successors, an announcement) is deferred to
// the present.
#include "wormhole-simulator-impl.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeMemoReplay");

using wormhole::FlowSeam;

bool
WormholeSimulatorImpl::ReplayOwns(uint32_t owner) const
{
    return owner < m_replayLinks.size() && m_replayLinks[owner];
}

void
WormholeSimulatorImpl::FlowJoining(const std::vector<uint32_t>& links)
{
    if (m_activeSkips == 0)
    {
        return;
    }
    for (uint32_t p : m_partitions.PartitionsOfLinks(links))
    {
        if (!IsSkipping(p))
        {
            continue;
        }
        // A replay runs the partition's own events only: its frames on
        // transit ports, served by other partitions' events, would wait for
        // the present. Such a hit resumes from its stored course instead.
        if (StateOf(p).memoCut && m_memoReplayJoins && m_replayUntil == 0 && FlowSeam::creditor &&
            !UsesTransit(p))
        {
            ReplayCutHit(p);
        }
        else
        {
            SkipBack(p);
        }
    }
}

void
WormholeSimulatorImpl::ReplayCutHit(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    const auto flows = m_partitions.Get(partition).flows;
    if (flows != st.memoCut->flows)
    {
        SkipBack(partition); // the partition changed since the hit (cannot happen while it skips)
        return;
    }
    const std::shared_ptr<const MemoCut> cut = std::move(st.memoCut);
    st.memoCut.reset();
    const uint64_t now = m_currentTs;
    const uint32_t context = m_currentContext;
    const uint32_t uid = m_currentUid;
    const auto skip = static_cast<int64_t>(st.skipEnd - cut->startedAt);
    NS_LOG_INFO("memo hit of partition " << partition << " undone " << now - cut->startedAt
                                         << " ns in: replayed from " << cut->startedAt);
    st.skipping = false;
    --m_activeSkips;
    // Undo the hit (ApplyMemoHit): its CC state was not put in place yet
    // (RestoreAtSkipEnd), so the flows still hold theirs from the hit; then
    // the exemption of the frames it froze, the queues it put back, and the
    // credit, which moves the flows' clocks back with the events below.
    st.pendingRestore.Cancel();
    FlowSeam::creditor->SetInFlightEcnExempt(flows, false);
    if (m_memoRestoreQueues)
    {
        DropRestoredBacklog(flows);
    }
    BeginCredit();
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        Credit(flows[i], -cut->credited[i], -skip);
    }
    EndCredit();
    m_replayUntil = now;
    m_replayLinks.assign(m_linkEvents.size(), false);
    for (uint32_t link : m_partitions.Get(partition).links)
    {
        if (link >= m_replayLinks.size())
        {
            m_replayLinks.resize(link + 1, false);
        }
        m_replayLinks[link] = true;
    }
    m_currentTs = cut->startedAt;
    m_currentUid = cut->startedUid;
    ShiftPartition(partition, -skip);
    FlowSeam::replaying = true;
    while (!m_replayEvents.empty())
    {
        auto node = m_replayEvents.extract(m_replayEvents.begin());
        Scheduler::Event& next = node.mapped();
        m_unscheduledEvents--;
        m_stats.eventsExecuted++;
        m_stats.eventsReplayed++;
        m_currentTs = next.key.m_ts;
        m_currentContext = next.key.m_context;
        m_currentUid = next.key.m_uid;
        next.impl->Invoke();
        next.impl->Unref();
    }
    FlowSeam::replaying = false;
    m_replayUntil = 0;
    m_currentTs = now;
    m_currentContext = context;
    m_currentUid = uid;
    st.creditRates.clear();
    m_stats.skipBacks++;
    m_stats.memoHitsReplayed++;
    m_stats.timeSkippedNs -= skip;
    m_stats.memoTimeSavedNs -= skip;
    // A flow that finished in the replay has already reset what is left.
    if (std::all_of(flows.begin(), flows.end(), [this](uint32_t f) { return m_flows.contains(f); }))
    {
        ResetPartition(partition);
    }
}

} // namespace ns3
