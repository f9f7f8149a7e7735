// WormholeSimulatorImpl, transit links: which links join flows into one
// partition, and what a skip does to frames on the others
// (docs/coupling.md, "Transit links").
//
// A link couples the flows crossing it when it can be a bottleneck for
// them: in one of its directions, the flows whose data crosses it, at their
// max-min fair rates, plus the acknowledgements the other direction's flows
// send back, fill its capacity (re-judged as flows start and end). A host
// link always couples: its NIC port holds its flows' own state (queues,
// pacing, CC timers). Every other link in use is transit: in the steady
// state its queues stay short, so what crosses it does not shape anyone's
// rate, and partitions are joined over coupling links only.
//
// A transit link belongs to no partition, so a skip never freezes its
// ports: their service goes on for the other partitions' frames. A frame of
// a skipped flow is frozen on its wire instead. Its arrival at the link's
// far end is filed under its flow's first link (in its partition), so the
// skip moves it; a frame the transit port sends while its flow's partition
// skips arrives that skip's shift later, as if the partition's time had
// stood still while the port worked through the queue ahead of it. What
// this approximates: the other partitions' frames at that port no longer
// queue behind the skipped flows' sends of the skipped time (there are
// none), which matters only as far as the port's queue does, and a transit
// port's queue is short by definition.
#include "wormhole-simulator-impl.h"

#include "bottleneck.h"

#include "ns3/log.h"
#include "ns3/make-event.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeTransitLinks");

using wormhole::FlowSeam;
using wormhole::PartitionTracker;

namespace
{
using wormhole::kFillable;

void
EraseOne(std::vector<uint32_t>& v, uint32_t x)
{
    if (auto it = std::find(v.begin(), v.end(), x); it != v.end())
    {
        *it = v.back();
        v.pop_back();
    }
}

void
AddOnce(std::vector<uint32_t>& v, uint32_t x)
{
    if (std::find(v.begin(), v.end(), x) == v.end())
    {
        v.push_back(x);
    }
}
} // namespace

void
WormholeSimulatorImpl::FileTransitFrame(Scheduler::Event& ev)
{
    const auto it = m_flows.find(wormhole::g_currentFlow);
    if (it == m_flows.end())
    {
        // The flow has ended (its last acknowledgement): the link's own.
        Track(wormhole::g_currentOwner, ev.impl, ev.key.m_ts, ev.key.m_uid, ev.key.m_context);
        return;
    }
    const uint32_t home = it->second.firstLink;
    const uint32_t partition = m_partitions.PartitionOfLink(home);
    if (partition == m_partitions.PartitionOfLink(wormhole::g_currentOwner))
    {
        // A link held mixed for another partition's hit, coupling for this
        // frame's own: the link's event.
        Track(wormhole::g_currentOwner, ev.impl, ev.key.m_ts, ev.key.m_uid, ev.key.m_context);
        return;
    }
    MeetLink(home);
    if (m_activeSkips > 0 && partition != PartitionTracker::kNone && IsSkipping(partition))
    {
        // The frame moves on now, in the middle of its partition's skip, by
        // an event of the transit port it waited at (no event of a skipping
        // partition runs before the skip's end). It was frozen from here, so
        // its next step comes as long after the skip's end as it is due
        // after now. Moved by the whole skip instead, a frame that had waited
        // at a transit port until halfway through the skip reached its
        // receiver after the frames its flow sent behind it, frozen on the
        // flow's own links: the receiver saw a gap, and the flow went back N
        // (docs/coupling.md, "Transit links"). Frames the port sends one
        // after another all come due just after the skip's end, a frame's
        // transmission time apart at most: each comes after the one before
        // it, so that the flow's frames keep their order.
        FlowState& fs = it->second;
        ev.key.m_ts = std::max(ev.key.m_ts + (StateOf(partition).skipEnd - m_currentTs), fs.transitResumed + 1);
        fs.transitResumed = ev.key.m_ts;
        m_shifted[ev.key.m_uid] = ev.key.m_ts;
    }
    ++m_stats.transitFramesFiled;
    File(home, ev.impl, ev.key.m_ts, ev.key.m_uid, ev.key.m_context);
}

std::vector<uint32_t>
WormholeSimulatorImpl::CouplingLinks(const FlowState& fs) const
{
    if (!m_decoupleTransit || !FlowSeam::creditor)
    {
        return fs.links;
    }
    std::vector<uint32_t> coupling;
    for (uint32_t link : fs.links)
    {
        if (link >= m_linkUse.size() || m_linkUse[link].coupling)
        {
            coupling.push_back(link);
        }
    }
    return coupling;
}

void
WormholeSimulatorImpl::WaterFill(const std::vector<uint32_t>& flows)
{
    // Runs at every start and end over the footprint (up to a hundred flows
    // on a MoE step), so ports are taken once each by a per-call mark, not
    // by sorting: FairRates does not depend on the order of its links.
    const uint64_t call = ++m_waterFills;
    std::vector<FlowState*> states;
    std::vector<double> lineRate;
    states.reserve(flows.size());
    lineRate.reserve(flows.size());
    for (uint32_t f : flows)
    {
        FlowState& fs = m_flows.at(f);
        fs.fillIndex = static_cast<uint32_t>(states.size());
        states.push_back(&fs);
        lineRate.push_back(fs.lineRate);
    }
    wormhole::LinkLoads loads;
    for (const FlowState* fs : states)
    {
        for (uint32_t p : fs->portLoads)
        {
            PortLoad& port = m_portLoads[p];
            if (port.filled == call)
            {
                continue;
            }
            port.filled = call;
            loads.AddLink(port.capacity);
            for (uint32_t g : port.flows)
            {
                loads.AddFlow(m_flows.at(g).fillIndex); // a port's flows share its footprint
            }
        }
    }
    const std::vector<double> rate = wormhole::FairRates(loads, lineRate);
    for (size_t i = 0; i < states.size(); ++i)
    {
        states[i]->fairRate = rate[i];
    }
}

std::vector<uint32_t>
WormholeSimulatorImpl::LoadFlow(uint32_t flowId, const FlowState& fs, bool add)
{
    // A link couples the flows crossing it if a direction of it is full at
    // their max-min fair rates, acknowledgements of the other direction
    // counted. Max-min, not each flow's equal share of every link: a flow
    // held back elsewhere leaves its share to the others (two line-rate
    // flows beside two incasts fill a 400G uplink that equal shares of six
    // would call two-thirds full). The fair rates depend only on the flows
    // linked to this one through shared links, the footprint partition.
    std::vector<uint32_t> changed;
    if (!m_decoupleTransit || !FlowSeam::creditor || fs.links.empty())
    {
        return changed;
    }
    const uint32_t maxLink = *std::max_element(fs.links.begin(), fs.links.end());
    if (maxLink >= m_linkUse.size())
    {
        m_linkUse.resize(maxLink + 1);
        m_transit.resize(maxLink + 1, 0);
    }
    for (uint32_t link : fs.links)
    {
        add ? AddOnce(m_linkUse[link].users, flowId) : EraseOne(m_linkUse[link].users, flowId);
        m_linkUse[link].congested = false; // its flows changed: judged on its loads again
    }
    const int pin = add ? 1 : -1;
    m_linkUse[fs.links.front()].pins += pin;
    if (fs.dataHops > 1)
    {
        m_linkUse[fs.links[fs.dataHops - 1]].pins += pin;
    }
    if (add)
    {
        FlowState& named = m_flows.at(flowId);
        named.portLoads.clear();
        for (size_t h = 0; h < fs.dataPorts.size(); ++h)
        {
            const uint64_t key = fs.dataPorts[h].first;
            auto [it, fresh] = m_portIndex.try_emplace(key, static_cast<uint32_t>(m_portLoads.size()));
            if (fresh)
            {
                PortLoad port;
                port.capacity = fs.dataPorts[h].second;
                m_portLoads.push_back(std::move(port));
                m_linkUse[fs.links[h]].ports.push_back(it->second);
            }
            named.portLoads.push_back(it->second);
        }
    }
    for (uint32_t p : fs.portLoads)
    {
        add ? m_portLoads[p].flows.push_back(flowId) : EraseOne(m_portLoads[p].flows, flowId);
    }
    std::vector<uint32_t> footprints;
    if (add)
    {
        footprints.push_back(m_footprint.AddFlow(flowId, fs.links));
    }
    else
    {
        footprints = m_footprint.RemoveFlow(flowId);
    }
    std::vector<uint32_t> flows;
    std::vector<uint32_t> links(fs.links);
    for (uint32_t p : footprints)
    {
        const auto& part = m_footprint.Get(p);
        flows.insert(flows.end(), part.flows.begin(), part.flows.end());
        links.insert(links.end(), part.links.begin(), part.links.end());
    }
    WaterFill(flows);
    std::sort(links.begin(), links.end());
    links.erase(std::unique(links.begin(), links.end()), links.end());
    for (uint32_t link : links)
    {
        for (uint32_t p : m_linkUse[link].ports)
        {
            PortLoad& port = m_portLoads[p];
            port.demand = 0;
            port.ackDemand = 0;
            for (uint32_t g : port.flows)
            {
                const FlowState& gs = m_flows.at(g);
                port.demand += gs.fairRate;
                port.ackDemand += gs.fairRate * gs.ackRatio;
            }
        }
    }
    for (uint32_t link : links)
    {
        LinkUse& use = m_linkUse[link];
        bool coupling = use.pins > 0 || use.congested;
        for (uint32_t p : use.ports)
        {
            const PortLoad& port = m_portLoads[p];
            double acks = 0; // sent back over the link's other direction's port
            for (uint32_t other : use.ports)
            {
                acks += other == p ? 0.0 : m_portLoads[other].ackDemand;
            }
            coupling = coupling || port.demand + acks >= kFillable * port.capacity;
        }
        if (use.users.empty())
        {
            use.coupling = true;
        }
        else
        {
            ++(coupling ? m_stats.couplingJudgements : m_stats.transitJudgements);
            const size_t others = use.users.size() - (add ? 1 : 0);
            if (coupling != use.coupling && others > 0)
            {
                changed.push_back(link);
            }
            use.coupling = coupling;
        }
        UpdateTransit(link);
    }
    return changed;
}

void
WormholeSimulatorImpl::LinkQueued(uint32_t link, uint64_t queuedBytes, uint64_t frameBytes)
{
    // Max-min fair rates say where queues stand in the steady state; the
    // port's queue says where one stands here and now. A transit port is
    // decoupled on the premise that its queue is short: flows paced below
    // its capacity meet there by coincidence, at most a frame of each queued
    // at once. More frames queued than flows cross it means some flow queues
    // behind its own frames: the port is offered more than it serves, and it
    // delays, marks or (paused by PFC for what stands downstream) stops every
    // flow crossing it. Line-rate flows starting together burst into a
    // fabric port their fair rates leave half empty; a lone flow there lost
    // 26 us behind such a burst without being marked, which a skip of it
    // alone never saw. So the flows crossing it are coupled, as at a full
    // link: their partitions are joined, and what had skipped past now is
    // skipped back to it (Relink), as when a start fills a link. The link
    // stays coupling until the flows crossing it change; it is then judged
    // on its fair loads again, and its queue makes it coupling again if it
    // still stands.
    if (!m_decoupleTransit || link >= m_linkUse.size())
    {
        return;
    }
    LinkUse& use = m_linkUse[link];
    if (use.coupling || use.users.empty() ||
        queuedBytes <= static_cast<uint64_t>(use.users.size() + 1) * frameBytes)
    {
        return;
    }
    NS_LOG_INFO("link " << link << " queues " << queuedBytes << " bytes: coupling");
    use.congested = true;
    use.coupling = true;
    UpdateTransit(link);
    ++m_stats.transitCongested;
    for (uint32_t p : Relink({link}, std::numeric_limits<uint32_t>::max()))
    {
        if (m_partitions.Get(p).alive)
        {
            ResetPartition(p);
        }
    }
}

std::vector<uint32_t>
WormholeSimulatorImpl::Relink(const std::vector<uint32_t>& changed, uint32_t except)
{
    if (changed.empty())
    {
        return {};
    }
    m_stats.linkKindChanges += changed.size();
    std::vector<uint32_t> flows;
    for (uint32_t link : changed)
    {
        NS_LOG_INFO("link " << link << " is now " << (m_linkUse[link].coupling ? "coupling" : "transit"));
        for (uint32_t f : m_linkUse[link].users)
        {
            if (f != except && m_partitions.HasFlow(f))
            {
                AddOnce(flows, f);
            }
        }
        if (!m_linkUse[link].coupling && link < m_linkEvents.size())
        {
            // Frames filed under the link while it coupled are not moved by
            // their flows' skips: a skip waits until they have arrived.
            const LinkIndex& index = m_linkEvents[link];
            uint64_t latest = index.untrackedUntil;
            for (const TrackedEvent& e : index.events)
            {
                latest = IsPending(e) ? std::max(latest, e.ts) : latest;
            }
            for (uint32_t f : flows)
            {
                const uint32_t home = m_flows.at(f).firstLink;
                MeetLink(home);
                m_linkEvents[home].untrackedUntil = std::max(m_linkEvents[home].untrackedUntil, latest);
            }
        }
    }
    std::vector<uint32_t> before;
    for (uint32_t f : flows)
    {
        AddOnce(before, m_partitions.PartitionOfFlow(f));
    }
    std::vector<uint32_t> held;
    for (uint32_t p : before)
    {
        PartitionState& st = StateOf(p);
        if (IsSkipping(p) && st.memoCut)
        {
            // A memo hit cut short resumes from its stored course, which
            // errs (docs/memo.md), and a replay cannot run a partition's
            // frames through transit ports that others' frames use now. The
            // hit runs its course apart from the partitions the link now
            // joins; its flows join them when it ends. Till then the link
            // stays mixed: its frames of the hit's flows move with the hit.
            held.push_back(p);
            for (uint32_t link : changed)
            {
                if (m_linkUse[link].coupling && std::find(st.mixedLinks.begin(), st.mixedLinks.end(), link) ==
                                                    st.mixedLinks.end())
                {
                    st.mixedLinks.push_back(link);
                    ++m_linkUse[link].mixed;
                    UpdateTransit(link);
                }
            }
            ScheduleRelink(p, st.skipEnd);
            continue;
        }
        EndPattern(p);
    }
    // A skip-back's credit may have ended a flow.
    std::erase_if(flows, [this, &held](uint32_t f) {
        return !m_partitions.HasFlow(f) || !m_flows.count(f) ||
               std::find(held.begin(), held.end(), m_partitions.PartitionOfFlow(f)) != held.end();
    });
    return Repartition(flows);
}

std::vector<uint32_t>
WormholeSimulatorImpl::Repartition(const std::vector<uint32_t>& flows)
{
    std::vector<uint32_t> partitions;
    for (uint32_t f : flows)
    {
        for (uint32_t p : m_partitions.RemoveFlow(f))
        {
            AddOnce(partitions, p);
        }
    }
    for (uint32_t f : flows)
    {
        AddOnce(partitions, m_partitions.AddFlow(f, CouplingLinks(m_flows.at(f))));
    }
    std::erase_if(partitions, [this](uint32_t p) { return !m_partitions.Get(p).alive; });
    return partitions;
}

void
WormholeSimulatorImpl::UpdateTransit(uint32_t link)
{
    const LinkUse& use = m_linkUse[link];
    m_transit[link] = !use.users.empty() && (!use.coupling || use.mixed > 0) ? 1 : 0;
}

void
WormholeSimulatorImpl::ScheduleRelink(uint32_t partition, uint64_t at)
{
    PartitionState& st = StateOf(partition);
    st.relinkPending = true;
    st.locked = true; // no new skip before its flows have joined
    wormhole::OwnerScope none(wormhole::kNoOwner);
    Insert(MakeEvent(&WormholeSimulatorImpl::RelinkAfterHit, this, partition), std::max(at, m_currentTs),
           m_currentContext);
}

void
WormholeSimulatorImpl::RelinkAfterHit(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    if (!st.relinkPending)
    {
        return; // done already (a skip-back scheduled it again for now)
    }
    if (IsSkipping(partition))
    {
        SkipBack(partition); // cut short and restarted since: not a hit's skip
    }
    st.relinkPending = false;
    for (uint32_t link : st.mixedLinks)
    {
        --m_linkUse[link].mixed;
        UpdateTransit(link);
    }
    st.mixedLinks.clear();
    if (!m_partitions.Get(partition).alive)
    {
        return;
    }
    // Its pattern and those of the partitions its flows now join end here.
    std::vector<uint32_t> flows = m_partitions.Get(partition).flows;
    std::vector<uint32_t> ending{partition};
    for (uint32_t f : flows)
    {
        for (uint32_t p : m_partitions.PartitionsOfLinks(CouplingLinks(m_flows.at(f))))
        {
            AddOnce(ending, p);
        }
    }
    for (uint32_t p : ending)
    {
        EndPattern(p);
    }
    // A skip-back's credit may have ended a flow.
    std::erase_if(flows, [this](uint32_t f) { return !m_partitions.HasFlow(f) || !m_flows.count(f); });
    for (uint32_t p : Repartition(flows))
    {
        ResetPartition(p);
    }
}

bool
WormholeSimulatorImpl::UsesTransit(uint32_t partition) const
{
    for (uint32_t f : m_partitions.Get(partition).flows)
    {
        for (uint32_t link : m_flows.at(f).links)
        {
            if (link < m_transit.size() && m_transit[link])
            {
                return true;
            }
        }
    }
    return false;
}

} // namespace ns3
