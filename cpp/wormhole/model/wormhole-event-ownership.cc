// WormholeSimulatorImpl, event ownership: which pending events belong to
// which link, and moving a partition's events (and its ports' timestamps) in
// time. A skip of partition P by dT at time t0 moves every pending event
// owned by one of P's links to ts + dT, so P's whole state (queues, pauses,
// CC timers, packets on the wire) is frozen and resumes at t0 + dT exactly as
// it was; other partitions' events never move. An event scheduled from
// outside onto a skipping partition's link skips that partition back first.
#include "wormhole-simulator-impl.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeEventOwnership");

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

} // namespace ns3
