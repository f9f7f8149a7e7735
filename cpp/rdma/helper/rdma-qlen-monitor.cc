#include "rdma-qlen-monitor.h"

#include "flow-seam.h"

#include "ns3/simulator.h"

namespace ns3
{

void
RdmaQlenMonitor::Configure(Time start, Time end, Time interval, Time dump)
{
    m_start = start;
    m_end = end;
    m_interval = interval;
    m_dump = dump;
}

bool
RdmaQlenMonitor::Enabled() const
{
    return m_end.IsStrictlyPositive() && m_interval.IsStrictlyPositive() && m_end >= m_start;
}

void
RdmaQlenMonitor::Start(const std::vector<Ptr<RdmaSwitch>>& switches, uint64_t* eventCounter)
{
    if (!Enabled())
    {
        return;
    }
    m_switches = &switches;
    m_events = eventCounter;
    ++*m_events;
    // Sampling belongs to no link: the Wormhole kernel must not shift it.
    wormhole::OwnerScope owner(wormhole::kNoOwner);
    Simulator::Schedule(m_start - Simulator::Now(), &RdmaQlenMonitor::Tick, this);
}

void
RdmaQlenMonitor::Tick()
{
    for (const auto& sw : *m_switches)
    {
        if (!sw)
        {
            continue;
        }
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            auto& counts = m_hist[{sw->GetIndex(), p}];
            const uint64_t kb = sw->GetQueueBytes(p) / 1000;
            if (counts.size() <= kb)
            {
                counts.resize(kb + 1, 0);
            }
            counts[kb]++;
        }
    }
    const Time now = Simulator::Now();
    if (m_dump.IsStrictlyPositive() && now.GetTimeStep() % m_dump.GetTimeStep() == 0)
    {
        for (const auto& [key, counts] : m_hist)
        {
            m_dumps.push_back({now.GetNanoSeconds(), key.first, key.second, counts});
        }
    }
    if (now < m_end)
    {
        ++*m_events;
        wormhole::OwnerScope owner(wormhole::kNoOwner);
        Simulator::Schedule(m_interval, &RdmaQlenMonitor::Tick, this);
    }
}

const std::vector<RdmaQlenHistogram>&
RdmaQlenMonitor::GetDumps() const
{
    return m_dumps;
}

} // namespace ns3
