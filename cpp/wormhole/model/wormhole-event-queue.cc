// WormholeEventQueue: a binary heap with lazy removal (see the header).
#include "wormhole-event-queue.h"

#include <algorithm>
#include <functional>

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
    return m_heap.size() == m_removed.size();
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
    while (!m_removed.empty() && !m_heap.empty())
    {
        const Entry& top = m_heap.front();
        if (Key{top.ts, top.uid} != m_removed.front())
        {
            return; // below every removed key: live
        }
        std::pop_heap(m_removed.begin(), m_removed.end(), std::greater<>());
        m_removed.pop_back();
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
    m_removed.emplace_back(ev.key.m_ts, ev.key.m_uid);
    std::push_heap(m_removed.begin(), m_removed.end(), std::greater<>());
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
