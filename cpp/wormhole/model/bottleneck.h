// Which links can be a bottleneck for a set of flows: the test that decides
// whether flows sharing a link contend there (memo keys; the coupling
// statistics of docs/coupling.md). Knows nothing of events or of RDMA.
#ifndef NS3_WORMHOLE_BOTTLENECK_H
#define NS3_WORMHOLE_BOTTLENECK_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ns3
{
namespace wormhole
{

/// Links (or directions of links) some of the flows' data crosses: link l
/// has line rate capacity[l] and carries flows[start[l]] .. flows[start[l+1]-1]
/// (flow indices), so start has one entry more than capacity.
struct LinkLoads
{
    std::vector<double> capacity;
    std::vector<uint32_t> start{0};
    std::vector<uint32_t> flows;

    std::size_t Size() const
    {
        return capacity.size();
    }
    /// Opens the next link; its flows are the ones added until the next call.
    void AddLink(double lineBps)
    {
        capacity.push_back(lineBps);
        start.push_back(start.back());
    }
    /// Adds a flow to the link opened last.
    void AddFlow(uint32_t flow)
    {
        flows.push_back(flow);
        ++start.back();
    }
};

/// A link whose flows fill this share of its capacity can be their bottleneck.
constexpr double kFillable = 0.99;

/// The flows' max-min fair rates: each at most its line rate, and on every
/// link a flow that could go faster gets at least what any other there gets.
/// Not an equal share of each link: a flow held back elsewhere leaves its
/// share to the others.
std::vector<double> FairRates(const LinkLoads& links, const std::vector<double>& lineRate);

/// For each link, whether it can shape the rates of its flows: the flows
/// crossing it fill it (kFillable) at their max-min fair rates. A link
/// they cannot fill, such as a 400G spine port under three 100G flows,
/// shapes nobody's rate.
std::vector<bool> CanBeBottleneck(const LinkLoads& links, const std::vector<double>& lineRate);

} // namespace wormhole
} // namespace ns3

#endif
