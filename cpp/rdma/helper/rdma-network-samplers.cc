// RdmaNetwork samplers: periodic switch egress queue and per-flow rate samples
// while flows are active or pending.
#include "rdma-network.h"

#include "ns3/simulator.h"

namespace ns3
{

bool
RdmaNetwork::SamplersShouldRun() const
{
    return m_activeFlows + m_pendingStarts > 0;
}

void
RdmaNetwork::StartSamplers()
{
    if (m_queueSampleInterval.IsStrictlyPositive() && !m_queueSamplerRunning)
    {
        m_queueSamplerRunning = true;
        SampleQueues();
    }
    if (m_rateSampleInterval.IsStrictlyPositive() && !m_rateSamplerRunning)
    {
        m_rateSamplerRunning = true;
        SampleRates();
    }
}

void
RdmaNetwork::SampleQueues()
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    for (const auto& sw : m_switches)
    {
        if (!sw)
        {
            continue;
        }
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            if (const uint64_t bytes = sw->GetQueueBytes(p))
            {
                m_queueSamples.push_back({now, sw->GetPort(p).linkId, sw->GetIndex(), bytes});
            }
        }
    }
    m_queueSamplerRunning = SamplersShouldRun();
    if (m_queueSamplerRunning)
    {
        m_counters.otherEvents++;
        wormhole::OwnerScope owner(wormhole::kNoOwner);
        Simulator::Schedule(m_queueSampleInterval, &RdmaNetwork::SampleQueues, this);
    }
}

void
RdmaNetwork::SampleRates()
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    for (const auto& qp : m_flows)
    {
        if (qp->cc && !qp->IsFinished())
        {
            m_rateSamples.push_back({now, qp->id, qp->rate, qp->sndUna + qp->creditedBytes});
        }
    }
    m_rateSamplerRunning = SamplersShouldRun();
    if (m_rateSamplerRunning)
    {
        m_counters.otherEvents++;
        wormhole::OwnerScope owner(wormhole::kNoOwner);
        Simulator::Schedule(m_rateSampleInterval, &RdmaNetwork::SampleRates, this);
    }
}

} // namespace ns3
