// RdmaNetwork as the Wormhole kernel's FlowCreditor: crediting skipped bytes,
// shifting a link's pending events, capacities, congestion-control state
// save/restore and path backlog.
#include "rdma-network.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

int64_t
RdmaNetwork::CreditFlow(uint32_t flowId, int64_t bytes, int64_t dtNs)
{
    const RdmaQueuePair& qp = FlowById(flowId);
    return m_nics[qp.src]->CreditFlow(*m_flows[qp.index], bytes, NanoSeconds(dtNs).GetTimeStep());
}

void
RdmaNetwork::ShiftLink(uint32_t linkId, int64_t dtNs)
{
    const int64_t dt = NanoSeconds(dtNs).GetTimeStep();
    for (const auto& [node, port] : m_linkEnds.at(linkId))
    {
        m_devices[node]->ShiftPort(port, dt);
    }
}

void
RdmaNetwork::GetLinkCapacity(uint32_t linkId, double& lineBps, double& payloadBps) const
{
    lineBps = static_cast<double>(m_links.at(linkId).rateBps);
    // Every host NIC shares the same MTU and header size (ns-3 attribute defaults).
    auto it = std::find_if(m_nics.begin(), m_nics.end(), [](const Ptr<RdmaNic>& n) { return n != nullptr; });
    const RdmaNic* nic = it == m_nics.end() ? nullptr : PeekPointer(*it);
    const double mtu = nic ? nic->GetMtu() : 1000.0;
    const double header = (nic ? nic->GetHeaderBytes() : 48.0) +
                          (m_ccPrototype ? m_ccPrototype->GetTelemetryBytes() : 0);
    // What a steady state fills: the payload share, times the utilisation
    // the congestion control aims at (HPCC holds links at UTarget).
    const double target = m_ccPrototype ? m_ccPrototype->GetTargetUtilisation() : 1.0;
    payloadBps = lineBps * mtu / (mtu + header) * target;
}

void
RdmaNetwork::GetLinkWire(uint32_t linkId, uint64_t& delayNs, double& lossRate) const
{
    delayNs = m_links.at(linkId).delayNs;
    lossRate = m_links.at(linkId).errorRate;
}

std::vector<double>
RdmaNetwork::SaveFlowState(uint32_t flowId) const
{
    const RdmaQueuePair& qp = FlowById(flowId);
    return qp.cc ? qp.cc->SaveState() : std::vector<double>{qp.rate};
}

void
RdmaNetwork::RestoreFlowState(uint32_t flowId, const std::vector<double>& state)
{
    const RdmaQueuePair& qp = FlowById(flowId);
    if (qp.cc && !qp.IsFinished())
    {
        qp.cc->RestoreState(state);
    }
}

void
RdmaNetwork::GetPathBacklog(uint32_t flowId, std::vector<std::pair<uint64_t, uint64_t>>& hops) const
{
    const RdmaQueuePair& qp = FlowById(flowId);
    hops.clear();
    // Walk the data path again (the flow keeps links, not ports); a host's
    // NIC paces its flows and has no switch queue: key 0.
    ForEachHop(qp.src, qp.dst, qp.index, [&](uint32_t node, uint32_t port) {
        const Ptr<RdmaSwitch>& sw = m_switches[node];
        if (sw)
        {
            hops.emplace_back((static_cast<uint64_t>(node) + 1) << 32 | port, sw->GetQueueBytes(port));
        }
        else
        {
            hops.emplace_back(0, 0);
        }
    });
}

void
RdmaNetwork::AddBacklog(uint64_t portKey, uint64_t bytes, int64_t fromNs)
{
    const auto node = static_cast<uint32_t>((portKey >> 32) - 1);
    const auto port = static_cast<uint32_t>(portKey & 0xffffffffU);
    NS_ASSERT_MSG(portKey >> 32 && node < m_switches.size() && m_switches[node], "not a switch port");
    m_switches[node]->AddBacklog(port, bytes, NanoSeconds(fromNs).GetTimeStep());
}

uint64_t
RdmaNetwork::GetFlowInFlight(uint32_t flowId) const
{
    const RdmaQueuePair& qp = FlowById(flowId);
    return qp.IsFinished() || qp.sndNxt < qp.sndUna ? 0 : qp.sndNxt - qp.sndUna;
}

void
RdmaNetwork::DropBacklog(uint64_t portKey)
{
    const auto node = static_cast<uint32_t>((portKey >> 32) - 1);
    const auto port = static_cast<uint32_t>(portKey & 0xffffffffU);
    NS_ASSERT_MSG(portKey >> 32 && node < m_switches.size() && m_switches[node], "not a switch port");
    m_switches[node]->DropBacklog(port, Simulator::Now().GetTimeStep());
}

} // namespace ns3
