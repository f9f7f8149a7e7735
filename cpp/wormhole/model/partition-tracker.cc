#include "partition-tracker.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace ns3
{
namespace wormhole
{

std::vector<uint32_t>
PartitionTracker::PartitionsOfLinks(const std::vector<uint32_t>& links) const
{
    std::vector<uint32_t> out;
    for (uint32_t link : links)
    {
        uint32_t p = PartitionOfLink(link);
        if (p != kNone && std::find(out.begin(), out.end(), p) == out.end())
        {
            out.push_back(p);
        }
    }
    return out;
}

uint32_t
PartitionTracker::NewPartition()
{
    Partition p;
    p.id = static_cast<uint32_t>(m_partitions.size());
    p.alive = true;
    m_partitions.push_back(std::move(p));
    ++m_alive;
    return m_partitions.back().id;
}

void
PartitionTracker::Assign(uint32_t partition, uint32_t flow)
{
    Partition& p = m_partitions[partition];
    p.flows.push_back(flow);
    m_flowPartition[flow] = partition;
    for (uint32_t link : m_flowLinks[flow])
    {
        if (m_linkPartition[link] != partition)
        {
            m_linkPartition[link] = partition;
            p.links.push_back(link);
        }
    }
}

uint32_t
PartitionTracker::AddFlow(uint32_t flow, std::vector<uint32_t> links)
{
    if (HasFlow(flow))
    {
        throw std::logic_error("PartitionTracker: flow added twice");
    }
    std::sort(links.begin(), links.end());
    links.erase(std::unique(links.begin(), links.end()), links.end());
    if (!links.empty() && links.back() >= m_linkPartition.size())
    {
        m_linkPartition.resize(links.back() + 1, kNone);
        m_linkFlowCount.resize(links.back() + 1, 0);
    }
    const std::vector<uint32_t> touched = PartitionsOfLinks(links);
    for (uint32_t link : links)
    {
        ++m_linkFlowCount[link];
    }
    m_flowLinks[flow] = std::move(links);

    uint32_t target;
    if (touched.empty())
    {
        target = NewPartition();
        ++m_counters.formed;
    }
    else if (touched.size() == 1)
    {
        target = touched.front();
    }
    else
    {
        // Bridged: everything touched plus the new flow is one component.
        target = NewPartition();
        ++m_counters.merged;
        for (uint32_t old : touched)
        {
            Partition& p = m_partitions[old];
            for (uint32_t link : p.links)
            {
                m_linkPartition[link] = kNone;
            }
            std::vector<uint32_t> flows = std::move(p.flows);
            p.flows.clear();
            p.links.clear();
            p.alive = false;
            --m_alive;
            for (uint32_t f : flows)
            {
                Assign(target, f);
            }
        }
    }
    Assign(target, flow);
    return target;
}

std::vector<uint32_t>
PartitionTracker::RemoveFlow(uint32_t flow)
{
    auto fp = m_flowPartition.find(flow);
    if (fp == m_flowPartition.end())
    {
        return {};
    }
    const uint32_t id = fp->second;
    m_flowPartition.erase(fp);
    Partition& p = m_partitions[id];
    p.flows.erase(std::find(p.flows.begin(), p.flows.end(), flow));
    for (uint32_t link : m_flowLinks[flow])
    {
        if (--m_linkFlowCount[link] == 0)
        {
            m_linkPartition[link] = kNone;
            p.links.erase(std::find(p.links.begin(), p.links.end(), link));
        }
    }
    m_flowLinks.erase(flow);

    if (p.flows.empty())
    {
        p.alive = false;
        --m_alive;
        return {};
    }
    if (p.flows.size() == 1)
    {
        return {id};
    }

    // Connected components of the remaining flows: union-find, each flow
    // joined to the first flow seen on each of its links. Runs at every
    // departure from a shared partition, so the link marks are a scratch
    // array indexed by link (reset over the partition's links, which hold
    // every remaining flow's), not a hash map.
    const std::vector<uint32_t> flows = p.flows;
    const auto n = static_cast<uint32_t>(flows.size());
    std::vector<uint32_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&parent](uint32_t x) {
        while (parent[x] != x)
        {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        return x;
    };
    m_firstFlowOnLink.resize(m_linkPartition.size(), kNone);
    for (uint32_t i = 0; i < n; ++i)
    {
        for (uint32_t link : m_flowLinks[flows[i]])
        {
            uint32_t& first = m_firstFlowOnLink[link];
            if (first == kNone)
            {
                first = i;
            }
            else
            {
                parent[find(i)] = find(first);
            }
        }
    }
    for (uint32_t link : p.links)
    {
        m_firstFlowOnLink[link] = kNone;
    }
    // Components in the order of their first flow (deterministic ids).
    std::vector<uint32_t> componentOf(n, kNone);
    std::vector<std::vector<uint32_t>> ordered;
    for (uint32_t i = 0; i < n; ++i)
    {
        uint32_t& c = componentOf[find(i)];
        if (c == kNone)
        {
            c = static_cast<uint32_t>(ordered.size());
            ordered.emplace_back();
        }
        ordered[c].push_back(flows[i]);
    }
    if (ordered.size() == 1)
    {
        return {id};
    }

    ++m_counters.split;
    for (uint32_t link : p.links)
    {
        m_linkPartition[link] = kNone;
    }
    p.flows.clear();
    p.links.clear();
    p.alive = false;
    --m_alive;
    std::vector<uint32_t> out;
    for (const auto& component : ordered)
    {
        uint32_t target = NewPartition();
        for (uint32_t f : component)
        {
            Assign(target, f);
        }
        out.push_back(target);
    }
    return out;
}

bool
PartitionTracker::HasFlow(uint32_t flow) const
{
    return m_flowPartition.count(flow) != 0;
}

uint32_t
PartitionTracker::PartitionOfFlow(uint32_t flow) const
{
    auto it = m_flowPartition.find(flow);
    return it == m_flowPartition.end() ? kNone : it->second;
}

uint32_t
PartitionTracker::PartitionOfLink(uint32_t link) const
{
    return link < m_linkPartition.size() ? m_linkPartition[link] : kNone;
}

const PartitionTracker::Partition&
PartitionTracker::Get(uint32_t id) const
{
    return m_partitions.at(id);
}

const std::vector<uint32_t>&
PartitionTracker::LinksOfFlow(uint32_t flow) const
{
    return m_flowLinks.at(flow);
}

uint32_t
PartitionTracker::AliveCount() const
{
    return m_alive;
}

const PartitionTracker::Counters&
PartitionTracker::GetCounters() const
{
    return m_counters;
}

} // namespace wormhole
} // namespace ns3
