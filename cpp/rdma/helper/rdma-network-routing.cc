// RdmaNetwork routing: BFS shortest paths to every host with equal-cost port
// sets (ECMP tables per device), and the hop walk along a flow's route
// (data links, links the kernel is told about), and the links any route
// between two hosts may take (foreseen flow starts).
#include "rdma-network.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

namespace ns3
{

void
RdmaNetwork::ComputeRoutes()
{
    // Shortest paths by BFS from every destination host over the links that
    // are up; only the destination and switches forward, so no path transits
    // another host. Each device gets a CSR table: its equal-cost ports towards
    // each destination. A host cut off from d keeps its ports towards d (what
    // it sends is lost on its failed link), so it never lacks a route.
    const auto n = static_cast<uint32_t>(m_devices.size());
    m_hopsTo.assign(n, {});
    std::vector<std::vector<uint32_t>> offsets(n, std::vector<uint32_t>(n + 1, 0));
    std::vector<std::vector<uint16_t>> ports(n);
    std::vector<uint32_t> dist(n);
    std::vector<uint32_t> frontier;
    constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();
    for (uint32_t d = 0; d < n; ++d)
    {
        if (!m_isSwitch[d])
        {
            std::fill(dist.begin(), dist.end(), kUnreached);
            dist[d] = 0;
            frontier.assign(1, d);
            for (size_t k = 0; k < frontier.size(); ++k)
            {
                const uint32_t u = frontier[k];
                if (u != d && !m_isSwitch[u])
                {
                    continue;
                }
                for (uint32_t p = 0; p < m_devices[u]->GetNPorts(); ++p)
                {
                    const uint32_t v = m_devices[u]->GetPort(p).peer->GetIndex();
                    if (dist[v] == kUnreached && !m_linkDown[m_devices[u]->GetPort(p).linkId])
                    {
                        dist[v] = dist[u] + 1;
                        frontier.push_back(v);
                    }
                }
            }
            for (uint32_t u = 0; u < n; ++u)
            {
                if (u == d)
                {
                    continue;
                }
                const size_t before = ports[u].size();
                for (uint32_t p = 0; p < m_devices[u]->GetNPorts() && dist[u] != kUnreached; ++p)
                {
                    if (IsRoutePort(u, p, d, dist))
                    {
                        ports[u].push_back(static_cast<uint16_t>(p));
                    }
                }
                if (ports[u].size() == before && !m_isSwitch[u] && m_linkEvents > 0)
                {
                    for (uint32_t p = 0; p < m_devices[u]->GetNPorts(); ++p)
                    {
                        ports[u].push_back(static_cast<uint16_t>(p));
                    }
                }
            }
        }
        for (uint32_t u = 0; u < n; ++u)
        {
            offsets[u][d + 1] = static_cast<uint32_t>(ports[u].size());
        }
        if (!m_isSwitch[d])
        {
            m_hopsTo[d] = dist; // kept for RouteLinks
        }
    }
    for (uint32_t u = 0; u < n; ++u)
    {
        const uint64_t own = m_switches[u] ? m_switches[u]->GetEcmpSeed() : 0;
        const uint64_t seed = wormhole::Mix64(m_seed ^ wormhole::Mix64(own ^ wormhole::Mix64(u)));
        m_devices[u]->SetRoutes(std::move(offsets[u]), std::move(ports[u]), seed);
    }
}

bool
RdmaNetwork::IsRoutePort(uint32_t u, uint32_t p, uint32_t d, const std::vector<uint32_t>& dist) const
{
    const RdmaPort& port = m_devices[u]->GetPort(p);
    const uint32_t v = port.peer->GetIndex();
    return (v == d || m_isSwitch[v]) && dist[v] + 1 == dist[u] && !m_linkDown[port.linkId];
}

std::vector<uint32_t>
RdmaNetwork::RouteLinks(uint32_t src, uint32_t dst) const
{
    // Every link of every equal-cost path from src to dst and back (a flow's
    // ACKs take the reverse route, hashed on their own): whichever path ECMP
    // gives the flow, and whatever id it gets, its links are among these.
    // Where a route is missing (a host cut off by failures), every link: an
    // announcement that touches too much costs speed, one that misses a link
    // costs accuracy.
    std::vector<uint8_t> used(m_links.size(), 0);
    std::vector<uint32_t> stack;
    for (auto [from, to] : {std::pair{src, dst}, std::pair{dst, src}})
    {
        if (to >= m_hopsTo.size() || m_hopsTo[to].empty() || from >= m_devices.size() ||
            m_hopsTo[to][from] == std::numeric_limits<uint32_t>::max())
        {
            std::vector<uint32_t> all(m_links.size());
            std::iota(all.begin(), all.end(), 0);
            return all;
        }
        const std::vector<uint32_t>& dist = m_hopsTo[to];
        std::vector<uint8_t> seen(m_devices.size(), 0);
        stack.assign(1, from);
        seen[from] = 1;
        while (!stack.empty())
        {
            const uint32_t u = stack.back();
            stack.pop_back();
            if (u == to)
            {
                continue;
            }
            for (uint32_t p = 0; p < m_devices[u]->GetNPorts(); ++p)
            {
                if (!IsRoutePort(u, p, to, dist))
                {
                    continue;
                }
                const RdmaPort& port = m_devices[u]->GetPort(p);
                used[port.linkId] = 1;
                const uint32_t v = port.peer->GetIndex();
                if (!seen[v])
                {
                    seen[v] = 1;
                    stack.push_back(v);
                }
            }
        }
    }
    std::vector<uint32_t> links;
    for (uint32_t l = 0; l < used.size(); ++l)
    {
        if (used[l])
        {
            links.push_back(l);
        }
    }
    return links;
}

std::vector<uint32_t>
RdmaNetwork::DataLinks(uint32_t index) const
{
    const RdmaQueuePair& qp = *m_flows[index];
    std::vector<uint32_t> links;
    ForEachHop(qp.src, qp.dst, qp.ecmpKey, [&](uint32_t node, uint32_t port) {
        links.push_back(m_devices[node]->GetPort(port).linkId);
    });
    return links;
}

void
RdmaNetwork::ForEachHop(uint32_t from,
                        uint32_t to,
                        uint32_t ecmpKey,
                        const std::function<void(uint32_t, uint32_t)>& visit) const
{
    for (uint32_t node = from; node != to;)
    {
        if (!m_devices[node]->HasRoute(to))
        {
            return; // cut off by link failures: the route ends here
        }
        const uint32_t port = m_devices[node]->SelectPort(from, to, ecmpKey);
        visit(node, port);
        node = m_devices[node]->GetPort(port).peer->GetIndex();
    }
}

std::vector<uint32_t>
RdmaNetwork::KernelLinks(uint32_t index) const
{
    // Every link the flow's frames use: the data path, then any link only
    // its ACKs take (ECMP may hash them onto another spine).
    const RdmaQueuePair& qp = *m_flows[index];
    std::vector<uint32_t> links = DataLinks(index);
    ForEachHop(qp.dst, qp.src, qp.ecmpKey, [&](uint32_t node, uint32_t port) {
        const uint32_t link = m_devices[node]->GetPort(port).linkId;
        if (std::find(links.begin(), links.end(), link) == links.end())
        {
            links.push_back(link);
        }
    });
    return links;
}

} // namespace ns3
