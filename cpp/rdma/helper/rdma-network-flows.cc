// RdmaNetwork flow manager: validating and scheduling flows, starting them
// on their NIC, their ideal (alone-on-path) FCT, and completion.
#include "rdma-network.h"

#include "rdma-network-input-error.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaNetworkFlows");

uint32_t
RdmaNetwork::AddQueuePair(const RdmaFlowSpec& s, int64_t startStep, uint32_t ecmpKey)
{
    const size_t index = m_flows.size();
    if (!m_built)
    {
        RdmaInputError("flow", index, "the network is not built");
    }
    const auto n = static_cast<uint32_t>(m_devices.size());
    if (s.src >= n || s.dst >= n)
    {
        RdmaInputError("flow", index, "unknown node " + std::to_string(std::max(s.src, s.dst)));
    }
    if (s.src == s.dst)
    {
        RdmaInputError("flow", index, "source and destination are both node " + std::to_string(s.src));
    }
    if (m_isSwitch[s.src] || m_isSwitch[s.dst])
    {
        RdmaInputError("flow", index,
             "node " + std::to_string(m_isSwitch[s.src] ? s.src : s.dst) + " is a switch");
    }
    if (s.bytes == 0)
    {
        RdmaInputError("flow", index, "size must be positive");
    }
    if (s.pg == 0 || s.pg >= RdmaSwitchMmu::kQueues)
    {
        RdmaInputError("flow", index, "priority group must be 1..7 (0 carries control frames)");
    }
    if (s.id >= wormhole::kFirstInterruptId)
    {
        RdmaInputError("flow", index, "flow ids from " + std::to_string(wormhole::kFirstInterruptId) + " on are reserved");
    }
    if (m_flowIndex.count(s.id))
    {
        RdmaInputError("flow", index, "duplicate flow id " + std::to_string(s.id));
    }
    if (m_devices[s.src]->GetNPorts() == 0)
    {
        RdmaInputError("flow", index, "host " + std::to_string(s.src) + " has no link");
    }
    if (!m_devices[s.src]->HasRoute(s.dst))
    {
        RdmaInputError("flow", index,
             "no path from " + std::to_string(s.src) + " to " + std::to_string(s.dst));
    }
    if (startStep < Simulator::Now().GetTimeStep())
    {
        RdmaInputError("flow", index, "start time is in the past");
    }
    auto qp = std::make_unique<RdmaQueuePair>();
    qp->index = static_cast<uint32_t>(index);
    qp->id = s.id;
    m_flowIds.push_back(s.id);
    qp->ecmpKey = ecmpKey;
    qp->src = s.src;
    qp->dst = s.dst;
    qp->pg = s.pg;
    qp->bytes = s.bytes;
    qp->size = s.bytes;
    qp->startStep = startStep;
    m_flows.push_back(std::move(qp));
    m_flowIndex.emplace(s.id, static_cast<uint32_t>(index));
    m_nextId = std::max(m_nextId, s.id + 1);
    return static_cast<uint32_t>(index);
}

void
RdmaNetwork::AddFlow(const RdmaFlowSpec& flow)
{
    // A listed flow is hashed by its place in the list.
    const auto place = static_cast<uint32_t>(m_flows.size());
    const uint32_t index =
        AddQueuePair(flow, NanoSeconds(static_cast<int64_t>(flow.startNs)).GetTimeStep(), place);
    m_pendingStarts++;
    m_counters.otherEvents++;
    // A start is a fact of the workload, not of any link: the kernel must not
    // shift it with a partition.
    wormhole::OwnerScope owner(wormhole::kNoOwner);
    Simulator::ScheduleWithContext(m_nodes[flow.src]->GetId(),
                                   TimeStep(m_flows[index]->startStep) - Simulator::Now(),
                                   &RdmaNetwork::StartFlowEvent,
                                   this,
                                   index);
    wormhole::FlowSeam::Scheduled(flow.id, flow.startNs, KernelLinks(index));
}

uint32_t
RdmaNetwork::StartFlowNow(uint32_t src, uint32_t dst, uint64_t bytes, uint32_t pg, uint32_t ecmpKey)
{
    const auto nowNs = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
    const RdmaFlowSpec spec{m_nextId, src, dst, pg, bytes, nowNs};
    const uint32_t index = AddQueuePair(spec, Simulator::Now().GetTimeStep(), ecmpKey);
    const uint32_t context = m_nodes[src]->GetId();
    if (Simulator::GetContext() == context && !wormhole::FlowSeam::replaying)
    {
        StartFlow(index);
    }
    else
    {
        // Run the start in the source node's context, so its timers inherit it.
        m_pendingStarts++;
        m_counters.otherEvents++;
        wormhole::OwnerScope owner(wormhole::kNoOwner);
        Simulator::ScheduleWithContext(context, Time(0), &RdmaNetwork::StartFlowEvent, this, index);
    }
    return spec.id;
}

void
RdmaNetwork::StartFlowEvent(uint32_t index)
{
    m_pendingStarts--;
    StartFlow(index);
}

void
RdmaNetwork::StartFlow(uint32_t index)
{
    RdmaQueuePair& qp = *m_flows[index];
    NS_LOG_FUNCTION(this << qp.id);
    qp.cc = m_ccPrototype->Fork();
    qp.telemetryBytes = qp.cc->GetTelemetryBytes();
    qp.links = DataLinks(index);
    if (std::vector<uint32_t> path; m_linkEvents > 0 && !TryDataLinks(index, path))
    {
        m_stalled.push_back(index); // starts cut off by a failed link
    }
    qp.idealFctNs = IdealFctNs(qp);
    qp.baseRtt = BaseRttSteps(qp);
    // Partitions the flow joins come up to now before its sender changes:
    // a memo hit's is replayed, and must not see the new flow.
    wormhole::FlowSeam::Joining(KernelLinks(index));
    m_activeFlows++;
    m_nics[qp.src]->StartFlow(qp);
    // The kernel hears of the flow once its first frame is scheduled (so a
    // skip of its partition moves that frame too).
    wormhole::FlowSeam::Started(qp.id, KernelLinks(index), static_cast<uint32_t>(qp.links.size()), qp.bytes);
    StartSamplers();
}


double
RdmaNetwork::IdealFctNs(const RdmaQueuePair& qp) const
{
    // Alone on its path, store-and-forward. Full frames leave hop h at
    // sum_{i<=h}(tx_i) + sum_{i<h}(delay_i) + (k-1) * max_{i<=h}(tx_i), the
    // departure law of identical frames through a tandem of servers; the last,
    // possibly shorter frame may queue behind the one before it. Then its ACK
    // comes back over the same links. With a full last frame this is
    // (frames-1)*wire/bottleneck + sum_h(wire/rate_h + delay_h) + ACK path.
    const RdmaNic& nic = *m_nics[qp.src];
    const uint64_t mtu = nic.GetMtu();
    const uint64_t frames = (qp.bytes + mtu - 1) / mtu;
    const uint32_t header = nic.GetHeaderBytes() + qp.telemetryBytes;
    const double fullBits = 8e9 * static_cast<double>(mtu + header);
    const double lastBits = 8e9 * static_cast<double>(qp.bytes - (frames - 1) * mtu + header);
    const double ackBits = 8e9 * static_cast<double>(kRdmaControlBytes + qp.telemetryBytes);
    double sumTx = 0;
    double maxTx = 0;
    double sumDelay = 0;
    double last = 0; // the last frame's departure from the previous hop, plus its delay
    double ack = 0;
    for (uint32_t id : qp.links)
    {
        const auto rate = static_cast<double>(m_links[id].rateBps);
        const auto delay = static_cast<double>(m_links[id].delayNs);
        sumTx += fullBits / rate;
        maxTx = std::max(maxTx, fullBits / rate);
        const double previous =
            frames > 1 ? sumTx + sumDelay + static_cast<double>(frames - 2) * maxTx : 0;
        last = std::max(previous, last) + lastBits / rate + delay;
        sumDelay += delay;
        ack += ackBits / rate + delay;
    }
    return last + ack;
}

int64_t
RdmaNetwork::BaseRttSteps(const RdmaQueuePair& qp) const
{
    // One full frame store-and-forwarded to the receiver, its ACK back.
    const RdmaNic& nic = *m_nics[qp.src];
    const double dataBits = 8.0 * (nic.GetMtu() + nic.GetHeaderBytes() + qp.telemetryBytes);
    const double ackBits = 8.0 * (kRdmaControlBytes + qp.telemetryBytes);
    double seconds = 0;
    for (uint32_t id : qp.links)
    {
        const auto rate = static_cast<double>(m_links[id].rateBps);
        seconds += (dataBits + ackBits) / rate + 2e-9 * static_cast<double>(m_links[id].delayNs);
    }
    return Seconds(seconds).GetTimeStep();
}

void
RdmaNetwork::FlowDone(RdmaQueuePair& qp)
{
    m_activeFlows--;
    m_completedFlows++;
    wormhole::FlowSeam::Finished(qp.id);
    m_flowCompleteTrace(qp.id);
    if (m_flowCompleteHook)
    {
        m_flowCompleteHook(qp.id);
    }
}

} // namespace ns3
