// An ns-3 event queue (Scheduler) for packet-level runs: a binary min-heap
// in one array, ordered by (time, uid) as every ns-3 scheduler is, so a run
// executes the same events in the same order as on ns-3's MapScheduler. It
// allocates nothing per event (MapScheduler allocates a tree node for each)
// and removes lazily: a removed event's entry stays in the heap and is
// dropped when it reaches the top. Insertion and extraction are the hot
// path of every event; removal comes in bursts (the kernel moves a
// partition's events when it skips it), and while removed entries wait in
// the heap every extraction asks whether the top is one of them.
#ifndef NS3_WORMHOLE_EVENT_QUEUE_H
#define NS3_WORMHOLE_EVENT_QUEUE_H

#include "ns3/scheduler.h"

#include <cstdint>
#include <utility>
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

    mutable std::vector<Entry> m_heap;
    /// (time, uid) of the removed entries still in the heap, a min-heap of
    /// its own. A removed entry leaves the heap only at its top, so removed
    /// keys leave in (time, uid) order: the top is live unless it equals the
    /// least removed key: one comparison per extraction, where a hash
    /// lookup costs a cache miss. An event moved and moved back has its
    /// (time, uid) twice in the heap, one entry removed: the two entries
    /// are alike, and whichever comes up first is dropped.
    using Key = std::pair<uint64_t, uint32_t>;
    mutable std::vector<Key> m_removed;
};

} // namespace ns3

#endif
