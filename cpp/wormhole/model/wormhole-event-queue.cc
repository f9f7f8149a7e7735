// WormholeEventQueue: a 4-ary heap with lazy removal (see the header).
#include "wormhole-event-queue.h"

#include "ns3/assert.h"
#include "ns3/environment-variable.h"
#include "ns3/global-value.h"
#include "ns3/log.h"
#include "ns3/string.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeEventQueue");
NS_OBJECT_ENSURE_REGISTERED(WormholeEventQueue);

TypeId
WormholeEventQueue::GetTypeId()
{
    static TypeId tid = TypeId("ns3::WormholeEventQueue")
                            .SetParent<Scheduler>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<WormholeEventQueue>();
    return tid;
}

void
WormholeEventQueue::Insert(const Event& ev)
{
    Entry e{ev.key.m_ts, ev.key.m_uid, ev.key.m_context, ev.impl};
    size_t i = m_heap.size();
    m_heap.push_back(e);
    while (i > 0)
    {
        const size_t parent = (i - 1) / 2;
        if (!Before(e, m_heap[parent]))
        {
            break;
        }
        m_heap[i] = m_heap[parent];
        i = parent;
    }
    m_heap[i] = e;
}

bool
WormholeEventQueue::IsEmpty() const
{
    return m_heap.size() == m_removedCount;
}

void
WormholeEventQueue::SiftDown(size_t i) const
{
    const size_t n = m_heap.size();
    const Entry e = m_heap[i];
    while (true)
    {
        const size_t first = 2 * i + 1;
        if (first >= n)
        {
            break;
        }
        size_t best = first;
        const size_t last = std::min(first + 2, n);
        for (size_t c = first + 1; c < last; ++c)
        {
            if (Before(m_heap[c], m_heap[best]))
            {
                best = c;
            }
        }
        if (!Before(m_heap[best], e))
        {
            break;
        }
        m_heap[i] = m_heap[best];
        i = best;
    }
    m_heap[i] = e;
}

void
WormholeEventQueue::PopTop() const
{
    m_heap.front() = m_heap.back();
    m_heap.pop_back();
    if (!m_heap.empty())
    {
        SiftDown(0);
    }
}

void
WormholeEventQueue::DropRemovedTop() const
{
    while (m_removedCount != 0 && !m_heap.empty())
    {
        const Entry& top = m_heap.front();
        auto [first, last] = m_removed.equal_range(RemovedKey(top.ts, top.uid));
        auto it = first;
        while (it != last && (it->second.ts != top.ts || it->second.uid != top.uid))
        {
            ++it;
        }
        if (it == last)
        {
            return;
        }
        if (--it->second.count == 0)
        {
            m_removed.erase(it);
        }
        --m_removedCount;
        PopTop();
    }
}

Scheduler::Event
WormholeEventQueue::PeekNext() const
{
    DropRemovedTop();
    NS_ASSERT(!m_heap.empty());
    const Entry& top = m_heap.front();
    Event ev;
    ev.impl = top.impl;
    ev.key.m_ts = top.ts;
    ev.key.m_uid = top.uid;
    ev.key.m_context = top.context;
    return ev;
}

Scheduler::Event
WormholeEventQueue::RemoveNext()
{
    Event ev = PeekNext();
    PopTop();
    return ev;
}

void
WormholeEventQueue::Remove(const Event& ev)
{
    const uint64_t key = RemovedKey(ev.key.m_ts, ev.key.m_uid);
    auto [first, last] = m_removed.equal_range(key);
    for (auto it = first; it != last; ++it)
    {
        if (it->second.ts == ev.key.m_ts && it->second.uid == ev.key.m_uid)
        {
            ++it->second.count;
            ++m_removedCount;
            return;
        }
    }
    m_removed.emplace(key, Removed{ev.key.m_ts, ev.key.m_uid, 1});
    ++m_removedCount;
}

namespace
{
/// ns-3 reads NS_GLOBAL_VALUE when it builds its own globals, before this
/// library has registered the queue's TypeId, and drops a SchedulerType that
/// names it: bind it again once the TypeId exists (NS_GLOBAL_VALUE as
/// `ns3-wormhole config --env` prints it).
struct BindQueueFromEnvironment
{
    BindQueueFromEnvironment()
    {
        const auto [found, value] = EnvironmentVariable::Get("NS_GLOBAL_VALUE", "SchedulerType");
        if (found && value == "ns3::WormholeEventQueue")
        {
            WormholeEventQueue::GetTypeId();
            GlobalValue::BindFailSafe("SchedulerType", StringValue(value));
        }
    }
} g_bindQueueFromEnvironment;
} // namespace

} // namespace ns3
