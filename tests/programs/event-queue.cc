// WormholeEventQueue against ns-3's MapScheduler: the same random mix of
// insertions, extractions, removals and moves (a removal and a re-insertion
// at another time, as a skip moves an event; sometimes moved back to where it
// was) applied to both must give the same events in the same order. Prints
// "same N" (N events extracted) or the first difference.
#include "ns3/core-module.h"
#include "ns3/map-scheduler.h"
#include "wormhole-event-queue.h"

#include <iostream>
#include <random>
#include <vector>

using namespace ns3;

int
main(int argc, char* argv[])
{
    uint32_t ops = 200000;
    uint32_t seed = 1;
    CommandLine cmd;
    cmd.AddValue("ops", "operations", ops);
    cmd.AddValue("seed", "random seed", seed);
    cmd.Parse(argc, argv);

    Ptr<Scheduler> map = CreateObject<MapScheduler>();
    Ptr<Scheduler> heap = CreateObject<WormholeEventQueue>();
    std::mt19937_64 rng(seed);
    std::vector<Scheduler::Event> pending; // what both hold
    uint64_t now = 0;
    uint32_t uid = 0;
    uint64_t extracted = 0;
    auto insert = [&](Scheduler::Event ev) {
        map->Insert(ev);
        heap->Insert(ev);
        pending.push_back(ev);
    };
    for (uint32_t i = 0; i < ops; ++i)
    {
        const uint64_t r = rng() % 100;
        if (r < 45 || pending.empty())
        {
            Scheduler::Event ev;
            ev.key.m_ts = now + rng() % 50; // ties are common: the uid decides
            ev.key.m_uid = uid++;
            ev.key.m_context = static_cast<uint32_t>(rng() % 4);
            ev.impl = reinterpret_cast<EventImpl*>(static_cast<uintptr_t>(ev.key.m_uid + 1) * 16);
            insert(ev);
        }
        else if (r < 85)
        {
            if (map->IsEmpty() != heap->IsEmpty())
            {
                std::cout << "IsEmpty differs at op " << i << "\n";
                return 1;
            }
            const Scheduler::Event a = map->RemoveNext();
            const Scheduler::Event b = heap->RemoveNext();
            if (a.key.m_ts != b.key.m_ts || a.key.m_uid != b.key.m_uid || a.key.m_context != b.key.m_context ||
                a.impl != b.impl)
            {
                std::cout << "differ at op " << i << ": map (" << a.key.m_ts << "," << a.key.m_uid << ") queue ("
                          << b.key.m_ts << "," << b.key.m_uid << ")\n";
                return 1;
            }
            now = a.key.m_ts;
            std::erase_if(pending, [&a](const Scheduler::Event& e) { return e.key.m_uid == a.key.m_uid; });
            ++extracted;
        }
        else
        {
            // Move a pending event (remove it, insert it again later, or
            // earlier but not before now), sometimes back where it was.
            const size_t k = rng() % pending.size();
            Scheduler::Event ev = pending[k];
            map->Remove(ev);
            heap->Remove(ev);
            pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
            if (rng() % 4 == 0)
            {
                continue; // removed for good
            }
            const uint64_t old = ev.key.m_ts;
            ev.key.m_ts = std::max(now, old + rng() % 200 - 50);
            insert(ev);
            if (rng() % 3 == 0 && ev.key.m_ts != old && old >= now)
            {
                map->Remove(ev);
                heap->Remove(ev);
                pending.pop_back();
                ev.key.m_ts = old; // moved back: the same (time, uid) as the entry removed first
                insert(ev);
            }
        }
    }
    while (!map->IsEmpty())
    {
        if (heap->IsEmpty())
        {
            std::cout << "queue empty early\n";
            return 1;
        }
        const Scheduler::Event a = map->RemoveNext();
        const Scheduler::Event b = heap->RemoveNext();
        if (a.key.m_ts != b.key.m_ts || a.key.m_uid != b.key.m_uid || a.impl != b.impl)
        {
            std::cout << "differ while draining\n";
            return 1;
        }
        ++extracted;
    }
    if (!heap->IsEmpty())
    {
        std::cout << "queue holds more\n";
        return 1;
    }
    std::cout << "same " << extracted << "\n";
    return 0;
}
