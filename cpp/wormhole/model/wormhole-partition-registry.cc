// WormholeSimulatorImpl, partition registry: flow facts in (scheduled,
// started, finished), each flow's and partition's bookkeeping created,
// reset when its contention pattern changes, and forgotten when it ends.
#include "wormhole-simulator-impl.h"

#include "ns3/log.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholePartitionRegistry");

using wormhole::FlowSeam;
using wormhole::PartitionTracker;

WormholeSimulatorImpl::PartitionState&
WormholeSimulatorImpl::StateOf(uint32_t partition)
{
    if (partition >= m_partitionState.size())
    {
        m_partitionState.resize(partition + 1);
    }
    return m_partitionState[partition];
}

void
WormholeSimulatorImpl::ResetPartition(uint32_t partition)
{
    // The partition's contention pattern changed (a flow joined or left, or
    // it was disturbed). Its flows keep their windows, so a change that does
    // not affect them (a flow alone at line rate next to a newcomer's ACKs)
    // costs only a short settling; one that does shows in their samples.
    // R-hat is measured afresh from now.
    OpenEpisode(partition); // why-not: the pattern changed
    DropDeferredHit(partition); // found for the pattern that was
    PartitionState& st = StateOf(partition);
    st.locked = st.relinkPending; // its flows join others first (RelinkAfterHit)
    st.retryAfter = 0;
    st.steadyFlows = 0;
    // Calm: no congestion control of the partition has ever acted, and no
    // egress port is offered more than it can send (the line rates of the
    // flows whose data crosses it add up to at most its capacity), so every
    // flow sends at a constant line rate (steady detector, quick window).
    // An oversubscribed egress is not calm even before any cut: its frames
    // queue and PFC, not congestion control, may be what holds them back (a
    // step-marked incast whose PFC band lies below kmax: no mark, no cut,
    // sends equal to deliveries over a standing queue), a control loop the
    // quick window cannot see. A ring's flows cross each other's links only
    // with acknowledgements; flows that merely share a faster fabric port
    // do not queue there.
    bool calm = FlowSeam::creditor != nullptr;
    std::unordered_map<uint64_t, std::pair<double, double>> offered; // egress -> (line rates, capacity)
    for (uint32_t flow : m_partitions.Get(partition).flows)
    {
        const FlowState& fs = m_flows[flow];
        if (!calm || fs.everCut)
        {
            calm = false;
            break;
        }
        for (const auto& [port, line] : fs.dataPorts)
        {
            auto [it, fresh] = offered.try_emplace(port, 0.0, line);
            it->second.first += fs.lineRate;
            calm = calm && it->second.first <= it->second.second * (1 + 1e-9);
        }
    }
    for (uint32_t flow : m_partitions.Get(partition).flows)
    {
        FlowState& fs = m_flows[flow];
        fs.steady = false;
        fs.settle = 0;
        fs.anchorFinal = false;
        fs.memoCheck = m_memo;
        fs.calm = calm;
        fs.AnchorAt(m_currentTs);
        fs.formedTime = m_currentTs;
        fs.formedAcked = fs.acked;
        fs.formedSkipped = m_flowSkipped[flow];
    }
    IndexFor(partition);
}

void
WormholeSimulatorImpl::EndPattern(uint32_t partition)
{
    CloseEpisode(partition); // why-not: its pattern ends here
    if (IsSkipping(partition))
    {
        SkipBack(partition);
    }
}

void
WormholeSimulatorImpl::IndexFor(uint32_t partition)
{
    // A skip needs every pending event of the partition's links indexed.
    // Indexing costs at every event, so links are indexed only where a skip
    // may come before the partition changes again: every pattern, once the
    // store holds a record (a hit may come at formation); otherwise a pattern
    // one of whose flows has half a steady window (a fast-forward needs every
    // flow's window full). Events scheduled before a link was indexed delay
    // the skip until they have run (IndexReady), never move it.
    IndexAllIfStoreHolds();
    if (m_indexAll)
    {
        return;
    }
    const auto& flows = m_partitions.Get(partition).flows;
    const bool near = std::any_of(flows.begin(), flows.end(), [this](uint32_t f) { return m_flows[f].HalfWindow(); });
    for (uint32_t flow : flows)
    {
        m_flows[flow].indexRequested = near;
    }
    if (near)
    {
        IndexLinks(partition);
    }
    else if (!IsSkipping(partition))
    {
        UnindexLinks(partition);
    }
}

void
WormholeSimulatorImpl::ClearWindows(uint32_t partition)
{
    StateOf(partition).steadyFlows = 0;
    for (uint32_t flow : m_partitions.Get(partition).flows)
    {
        FlowState& fs = m_flows[flow];
        fs.window.Clear();
        fs.steady = false;
    }
}

void
WormholeSimulatorImpl::FlowScheduled(uint32_t flowId, uint64_t startNs, const std::vector<uint32_t>& links)
{
    // Interrupts (link events, a workload's foreseen starts) never start, so
    // nothing else removes them; UntilKnownJoin looks only from now on, so
    // what is past is dropped here (a flow of a list that has not started by
    // its time is no longer ahead either; FlowStarted finds it gone).
    while (!m_futureStarts.empty() && m_futureStarts.begin()->first < m_currentTs)
    {
        const auto [at, id] = *m_futureStarts.begin();
        if (auto known = m_futureFlows.find(id); known != m_futureFlows.end() && known->second.first == at)
        {
            m_futureFlows.erase(known);
        }
        m_futureStarts.erase(m_futureStarts.begin());
    }
    m_futureStarts.emplace(startNs, flowId);
    m_futureFlows[flowId] = {startNs, links};
}

double
WormholeSimulatorImpl::UntilKnownJoin(uint32_t partition, double horizonNs) const
{
    for (auto it = m_futureStarts.lower_bound(m_currentTs);
         it != m_futureStarts.end() && static_cast<double>(it->first) < horizonNs;
         ++it)
    {
        for (uint32_t link : m_futureFlows.at(it->second).second)
        {
            if (m_partitions.PartitionOfLink(link) == partition)
            {
                return static_cast<double>(it->first - m_currentTs);
            }
        }
    }
    return std::numeric_limits<double>::infinity();
}

void
WormholeSimulatorImpl::FlowStarted(uint32_t flowId,
                                   const std::vector<uint32_t>& links,
                                   uint32_t dataHops,
                                   uint64_t bytes)
{
    if (auto known = m_futureFlows.find(flowId); known != m_futureFlows.end())
    {
        auto [first, last] = m_futureStarts.equal_range(known->second.first);
        for (auto it = first; it != last; ++it)
        {
            if (it->second == flowId)
            {
                m_futureStarts.erase(it);
                break;
            }
        }
        m_futureFlows.erase(known);
    }
    for (uint32_t p : m_partitions.PartitionsOfLinks(links))
    {
        EndPattern(p);
    }
    FlowState& fs = m_flows[flowId];
    fs = FlowState{};
    fs.startedAt = m_currentTs;
    fs.bytes = bytes;
    fs.links = links;
    fs.dataHops = std::min<uint32_t>(dataHops, static_cast<uint32_t>(links.size()));
    fs.firstLink = links.empty() ? 0 : links.front();
    fs.window.SetCapacity(m_window);
    if (FlowSeam::creditor && !links.empty())
    {
        double payload = 0;
        FlowSeam::creditor->GetLinkCapacity(fs.firstLink, fs.ccRate, payload); // RDMA starts at line rate
        fs.lineRate = fs.ccRate;
        fs.ackRatio = FlowSeam::creditor->GetAckWireRatio(flowId);
        NameDataPorts(flowId, fs);
    }
    m_flowSkipped.emplace(flowId, 0);
    // Its load may turn links it shares with others coupling (or transit):
    // their flows join the partitions of their coupling links anew.
    const std::vector<uint32_t> relinked = Relink(LoadFlow(flowId, fs, true), flowId);
    const uint32_t partition = m_partitions.AddFlow(flowId, CouplingLinks(fs));
    ResetPartition(partition);
    for (uint32_t p : relinked)
    {
        if (p != partition && m_partitions.Get(p).alive)
        {
            ResetPartition(p);
        }
    }
}

void
WormholeSimulatorImpl::NameDataPorts(uint32_t flowId, FlowState& fs) const
{
    // Each direction of a link is its own port: a flow's acknowledgements
    // and another's data on one cable do not contend.
    std::vector<std::pair<uint64_t, uint64_t>> hops;
    wormhole::FlowSeam::creditor->GetPathBacklog(flowId, hops); // hop h leaves through data link h
    const size_t dataHops = std::min<size_t>(hops.size(), fs.dataHops);
    fs.dataPorts.clear();
    for (size_t h = 0; h < dataHops; ++h)
    {
        // A host NIC's hop has key 0: name it by the sender's link.
        const uint64_t key = hops[h].first != 0 ? hops[h].first : FlowState::kNicPortBit | fs.links[h];
        double line = 0;
        double payload = 0;
        wormhole::FlowSeam::creditor->GetLinkCapacity(fs.links[h], line, payload);
        fs.dataPorts.emplace_back(key, line);
    }
    fs.dataPortsWhole = hops.size() == fs.dataHops;
}

void
WormholeSimulatorImpl::FlowFinished(uint32_t flowId)
{
    if (m_crediting > 0)
    {
        NS_LOG_INFO("flow " << flowId << " completed by a credit: finished once the skip is in place");
        m_finishedWhileCrediting.push_back(flowId);
        return;
    }
    const uint32_t partition = m_partitions.PartitionOfFlow(flowId);
    if (partition == PartitionTracker::kNone)
    {
        return;
    }
    EndPattern(partition);
    if (StateOf(partition).memoPending)
    {
        MemoRecordCompletion(partition, flowId);
    }
    const std::vector<uint32_t> changed = LoadFlow(flowId, m_flows.at(flowId), false);
    m_flows.erase(flowId);
    std::vector<uint32_t> reset = m_partitions.RemoveFlow(flowId);
    for (uint32_t p : Relink(changed, flowId))
    {
        if (std::find(reset.begin(), reset.end(), p) == reset.end())
        {
            reset.push_back(p);
        }
    }
    for (uint32_t p : reset)
    {
        if (m_partitions.Get(p).alive)
        {
            ResetPartition(p);
        }
    }
}

} // namespace ns3
