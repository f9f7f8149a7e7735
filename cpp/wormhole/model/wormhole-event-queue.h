// An ns-3 event queue (Scheduler) for packet-level runs: a 4-ary min-heap
// in one array, ordered by (time, uid) as every ns-3 scheduler is, so a run
// executes the same events in the same order as on ns-3's MapScheduler. It
// allocates nothing per event (MapScheduler allocates a tree node for each)
// and removes lazily: a removed event's entry stays in the heap, marked,
// and is dropped when it reaches the top. Removal is rare (the kernel moves
// a partition's events when it skips it); insertion and extraction are the
// hot path of every event.
#ifndef NS3_WORMHOLE_EVENT_QUEUE_H
#define NS3_WORMHOLE_EVENT_QUEUE_H

#include "ns3/scheduler.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ns3
{

class WormholeEventQueue : public Scheduler
{
  public:
    static TypeId GetTypeId();

    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    void Remove(const Event& ev) override;

  private:
    struct Entry
    {
        uint64_t ts;
        uint32_t uid;
        uint32_t context;
        EventImpl* impl;
    };

    static bool Before(const Entry& a, const Entry& b)
    {
        return a.ts < b.ts || (a.ts == b.ts && a.uid < b.uid);
    }

    /// Drops removed entries from the top, so the top is a live event.
    void DropRemovedTop() const;
    void PopTop() const;
    void SiftDown(size_t i) const;

    static uint64_t RemovedKey(uint64_t ts, uint32_t uid)
    {
        // Distinct events have distinct uids; an event moved and moved back
        // has the same (time, uid) twice, hence the counts.
        return ts * 0x9e3779b97f4a7c15ULL ^ uid;
    }

    mutable std::vector<Entry> m_heap;
    /// (time, uid) of removed entries still in the heap: a hash of the pair,
    /// each with the pair itself (collisions compared exactly) and a count.
    struct Removed
    {
        uint64_t ts;
        uint32_t uid;
        uint32_t count;
    };
    mutable std::unordered_multimap<uint64_t, Removed> m_removed;
    mutable size_t m_removedCount = 0;
};

} // namespace ns3

#endif
