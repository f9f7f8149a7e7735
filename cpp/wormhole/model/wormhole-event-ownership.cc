// WormholeSimulatorImpl, event ownership: which pending events belong to
// which link, and moving a partition's events (and its ports' timestamps) in
// time. A skip of partition P by dT at time t0 moves every pending event
// owned by one of P's links to ts + dT, so P's whole state (queues, pauses,
// CC timers, packets on the wire) is frozen and resumes at t0 + dT exactly as
// it was; other partitions' events never move. An event scheduled from
// outside onto a skipping partition's link skips that partition back first.
// Links are indexed only while a skip of their partition may come
// (IndexLinks); a skip waits until every event scheduled on them before they
// were has run (IndexReady). docs/why-not.md, "Back-off".
#include "wormhole-simulator-impl.h"

#include "memo-store.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeEventOwnership");

using wormhole::FlowSeam;
using wormhole::PartitionTracker;

void
WormholeSimulatorImpl::MeetLink(uint32_t link)
{
    if (link >= m_linkEvents.size())
    {
        // A store filled before the run can hit at the first pattern's
        // formation: index from the first event.
        IndexAllIfStoreHolds();
        GrowLinkIndex(link + 1);
    }
}

void
WormholeSimulatorImpl::TrackSlow(uint32_t owner)
{
    MeetLink(owner);
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
}

void
WormholeSimulatorImpl::CompactLink(uint32_t link)
{
    LinkIndex& index = m_linkEvents[link];
    std::erase_if(index.events, [this](const TrackedEvent& e) { return !IsPending(e); });
    // Scan again once 3x as many entries were added as are live: each
    // append pays for 4/3 liveness checks (2 with a 2x threshold).
    index.compactAt = std::max<size_t>(16, 4 * index.events.size());
}

void
WormholeSimulatorImpl::GrowLinkIndex(size_t links)
{
    const size_t first = m_linkEvents.size();
    if (links <= first)
    {
        return;
    }
    m_linkEvents.resize(links);
    for (size_t link = first; link < links; ++link)
    {
        m_linkEvents[link].indexed = m_indexAll;
    }
}

void
WormholeSimulatorImpl::IndexLinks(uint32_t partition)
{
    if (partition == PartitionTracker::kNone)
    {
        return;
    }
    for (uint32_t link : m_partitions.Get(partition).links)
    {
        GrowLinkIndex(link + 1);
        m_linkEvents[link].indexed = true;
    }
}

void
WormholeSimulatorImpl::UnindexLinks(uint32_t partition)
{
    NS_ASSERT_MSG(!IsSkipping(partition), "a skipping partition's events must stay indexed");
    // What is indexed stays: with what is counted (untrackedUntil) it is
    // still every pending event of the link, as IndexReady needs.
    for (uint32_t link : m_partitions.Get(partition).links)
    {
        if (link < m_linkEvents.size())
        {
            m_linkEvents[link].indexed = false;
        }
    }
}

void
WormholeSimulatorImpl::IndexAllLinks()
{
    m_indexAll = true;
    for (LinkIndex& index : m_linkEvents)
    {
        index.indexed = true;
    }
}

void
WormholeSimulatorImpl::IndexAllIfStoreHolds()
{
    if (!m_indexAll && m_memo && wormhole::MemoStore::Global().Size() != 0)
    {
        IndexAllLinks();
    }
}

bool
WormholeSimulatorImpl::IndexReady(uint32_t partition, uint64_t* readyAt)
{
    // An event scheduled while its link was not indexed is not in the index:
    // a skip would leave it where it is. Once the latest of them has run
    // (strictly before now: one due now may not have), the index is whole.
    bool ready = true;
    uint64_t at = 0;
    for (uint32_t link : m_partitions.Get(partition).links)
    {
        if (link >= m_linkEvents.size())
        {
            continue; // no event was ever scheduled on it
        }
        const LinkIndex& index = m_linkEvents[link];
        if (!index.indexed || index.untrackedUntil >= m_currentTs)
        {
            ready = false;
            at = std::max(at, index.untrackedUntil + 1);
        }
    }
    if (!ready)
    {
        IndexLinks(partition);
        if (readyAt)
        {
            *readyAt = std::max(at, m_currentTs + 1);
        }
    }
    return ready;
}

void
WormholeSimulatorImpl::ShiftLinkEvents(uint32_t link, int64_t dt)
{
    if (link >= m_linkEvents.size())
    {
        return;
    }
    CompactLink(link);
    auto& events = m_linkEvents[link].events;
    for (TrackedEvent& e : events)
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
        if (m_replayUntil != 0 && e.ts < m_replayUntil)
        {
            m_replayEvents.emplace(std::make_pair(e.ts, e.uid), ev); // back before the present: replayed
        }
        else
        {
            m_events->Insert(ev);
        }
        m_shifted[e.uid] = e.ts;
    }
    // Entries of removed events were skipped above: drop them too.
    std::erase_if(events, [](const TrackedEvent& e) { return e.impl == nullptr; });
    if (m_shifted.size() >= m_shiftedPurgeAt) [[unlikely]]
    {
        PurgeShifted();
    }
}

void
WormholeSimulatorImpl::PurgeShifted()
{
    std::erase_if(m_shifted, [this](const auto& entry) { return entry.second < m_currentTs; });
    m_shiftedPurgeAt = std::max<size_t>(1024, 2 * m_shifted.size());
}

void
WormholeSimulatorImpl::ShiftPartition(uint32_t partition, int64_t dt)
{
    if (dt > 0)
    {
        StateOf(partition).episodeSkipped = true; // for why-not: this pattern was skipped
    }
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
