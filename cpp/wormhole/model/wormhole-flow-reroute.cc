// A flow changing path under the Wormhole kernel (a link failed or came
// back): it leaves its partition and joins the partition of its new links.
#include "wormhole-simulator-impl.h"

namespace ns3
{

void
WormholeSimulatorImpl::FlowRerouted(uint32_t flowId, const std::vector<uint32_t>& links, uint32_t dataHops)
{
    const auto it = m_flows.find(flowId);
    const uint32_t partition = m_partitions.PartitionOfFlow(flowId);
    if (it == m_flows.end() || partition == wormhole::PartitionTracker::kNone)
    {
        return;
    }
    if (IsSkipping(partition))
    {
        SkipBack(partition);
    }
    // A leave that is not a completion: the pattern forming is not memoized.
    StateOf(partition).memoPending = false;
    const FlowState kept = it->second;
    FlowFinished(flowId);
    FlowStarted(flowId, links, dataHops, kept.bytes);
    FlowState& fs = m_flows[flowId];
    fs.startedAt = kept.startedAt;
    fs.acked = kept.acked;
    fs.sent = kept.sent;
    fs.credited = kept.credited;
    fs.ccRate = kept.ccRate;
}

} // namespace ns3
