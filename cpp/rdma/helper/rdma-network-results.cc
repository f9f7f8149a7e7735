// RdmaNetwork results: flow records, PFC counts, samples, counters and
// accessors to nodes and devices (valid during and after the run).
#include "rdma-network.h"

#include <stdexcept>

namespace ns3
{

namespace
{

int64_t
StepsToNs(int64_t steps)
{
    return TimeStep(steps).GetNanoSeconds();
}

} // namespace


const RdmaQueuePair&
RdmaNetwork::FlowById(uint32_t flowId) const
{
    const auto it = m_flowIndex.find(flowId);
    if (it == m_flowIndex.end())
    {
        throw std::invalid_argument("unknown flow id " + std::to_string(flowId));
    }
    return *m_flows[it->second];
}

std::vector<RdmaFlowRecord>
RdmaNetwork::GetFlowRecords() const
{
    std::vector<RdmaFlowRecord> out;
    out.reserve(m_flows.size());
    for (const auto& qp : m_flows)
    {
        const int64_t start = StepsToNs(qp->startStep);
        const int64_t finish = qp->IsFinished() ? StepsToNs(qp->finishStep) : -1;
        out.push_back({qp->id,
                       qp->src,
                       qp->dst,
                       qp->pg,
                       qp->bytes,
                       start,
                       finish,
                       qp->IsFinished() ? finish - start : -1,
                       qp->idealFctNs,
                       qp->dataPackets,
                       qp->retransmitted,
                       qp->timeouts,
                       qp->creditedBytes});
    }
    return out;
}

std::vector<RdmaPfcRecord>
RdmaNetwork::GetPfcRecords() const
{
    std::vector<RdmaPfcRecord> out;
    for (const auto& sw : m_switches)
    {
        if (!sw)
        {
            continue;
        }
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            out.push_back({sw->GetIndex(),
                           p,
                           sw->GetPort(p).linkId,
                           sw->GetPausesSent(p),
                           sw->GetResumesSent(p)});
        }
    }
    return out;
}

const std::vector<RdmaPfcEvent>&
RdmaNetwork::GetPfcEvents() const
{
    return m_pfcEvents;
}

const std::vector<RdmaQlenHistogram>&
RdmaNetwork::GetQlenHistograms() const
{
    return m_qlen.GetDumps();
}

const std::vector<RdmaQueueSample>&
RdmaNetwork::GetQueueSamples() const
{
    return m_queueSamples;
}

const std::vector<RdmaRateSample>&
RdmaNetwork::GetRateSamples() const
{
    return m_rateSamples;
}

const RdmaCounters&
RdmaNetwork::GetCounters() const
{
    return m_counters;
}

uint32_t
RdmaNetwork::GetNFlows() const
{
    return static_cast<uint32_t>(m_flows.size());
}

uint32_t
RdmaNetwork::GetNCompletedFlows() const
{
    return m_completedFlows;
}

std::vector<uint32_t>
RdmaNetwork::GetFlowPath(uint32_t flowId) const
{
    return FlowById(flowId).links;
}

Ptr<RdmaCongestionControl>
RdmaNetwork::GetFlowCongestionControl(uint32_t flowId) const
{
    return FlowById(flowId).cc;
}

uint32_t
RdmaNetwork::GetNNodes() const
{
    return static_cast<uint32_t>(m_nodes.size());
}

Ptr<Node>
RdmaNetwork::GetNode(uint32_t i) const
{
    return m_nodes.at(i);
}

Ptr<RdmaNic>
RdmaNetwork::GetNic(uint32_t i) const
{
    return m_nics.at(i);
}

Ptr<RdmaSwitch>
RdmaNetwork::GetSwitch(uint32_t i) const
{
    return m_switches.at(i);
}

} // namespace ns3
