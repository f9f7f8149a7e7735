// RdmaNetwork link failures and recoveries: scheduling them (announced to the
// Wormhole kernel as known interrupts), taking a link's ports down or up,
// recomputing routes, moving flows to their new paths and keeping the list of
// flows left without one (HPCC's LINK_DOWN semantics).
#include "rdma-network.h"
#include "rdma-network-input-error.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <numeric>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaNetworkLinkEvents");

void
RdmaNetwork::ScheduleLinkEvent(uint32_t linkId, uint64_t atNs, bool up)
{
    const uint32_t index = m_linkEvents;
    if (!m_built)
    {
        RdmaInputError("link event", index, "the network is not built");
    }
    if (linkId >= m_links.size())
    {
        RdmaInputError("link event", index, "unknown link " + std::to_string(linkId));
    }
    const int64_t at = NanoSeconds(static_cast<int64_t>(atNs)).GetTimeStep();
    if (at < Simulator::Now().GetTimeStep())
    {
        RdmaInputError("link event", index, "time is in the past");
    }
    m_linkEvents++;
    m_counters.otherEvents++;
    // A fact of the scenario, not of any link: never shifted with a partition.
    wormhole::OwnerScope owner(wormhole::kNoOwner);
    Simulator::Schedule(TimeStep(at) - Simulator::Now(), &RdmaNetwork::SetLinkState, this, linkId, up);
    // Routes may change anywhere, so every partition's skip ends there.
    std::vector<uint32_t> all(m_links.size());
    std::iota(all.begin(), all.end(), 0);
    wormhole::FlowSeam::Interrupt(atNs, all);
}

void
RdmaNetwork::SetLinkState(uint32_t linkId, bool up)
{
    NS_LOG_FUNCTION(this << linkId << up);
    if (m_linkDown[linkId] == !up)
    {
        return;
    }
    m_linkDown[linkId] = !up;
    for (const auto& [node, port] : m_linkEnds[linkId])
    {
        m_devices[node]->SetPortUp(port, up);
    }
    ComputeRoutes();
    Reroute();
}

bool
RdmaNetwork::TryDataLinks(uint32_t index, std::vector<uint32_t>& links) const
{
    const RdmaQueuePair& qp = *m_flows[index];
    links.clear();
    for (uint32_t node = qp.src; node != qp.dst;)
    {
        const RdmaDevice& dev = *m_devices[node];
        if (!dev.HasRoute(qp.dst) || links.size() > m_links.size())
        {
            return false;
        }
        const RdmaPort& port = dev.GetPort(dev.SelectPort(qp.src, qp.dst, qp.ecmpKey));
        if (m_linkDown[port.linkId])
        {
            return false; // a cut-off host's fallback route
        }
        links.push_back(port.linkId);
        node = port.peer->GetIndex();
    }
    return true;
}

void
RdmaNetwork::Reroute()
{
    m_stalled.clear();
    std::vector<uint32_t> links;
    for (const auto& qp : m_flows)
    {
        if (!qp->cc || qp->IsFinished())
        {
            continue; // not started yet (it takes the routes of its start) or done
        }
        if (!TryDataLinks(qp->index, links))
        {
            m_stalled.push_back(qp->index);
            continue;
        }
        NS_LOG_LOGIC("flow " << qp->id << (links != qp->links ? " rerouted" : " keeps its path"));
        qp->links = links;
        qp->baseRtt = BaseRttSteps(*qp); // window-based and INT controllers scale by it
        // Every flow is re-partitioned, moved or not: the skip the event cut
        // short left its partition locked until its pattern changes.
        wormhole::FlowSeam::Rerouted(qp->id, KernelLinks(qp->index), static_cast<uint32_t>(links.size()));
    }
}

std::vector<uint32_t>
RdmaNetwork::GetStalledFlows() const
{
    std::vector<uint32_t> ids;
    for (uint32_t index : m_stalled)
    {
        if (!m_flows[index]->IsFinished())
        {
            ids.push_back(m_flows[index]->id);
        }
    }
    return ids;
}

} // namespace ns3
