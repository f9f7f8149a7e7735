// Which links can be a bottleneck for a set of flows (see bottleneck.h).
#include "bottleneck.h"

#include <algorithm>
#include <limits>

namespace ns3
{
namespace wormhole
{

std::vector<double>
FairRates(const LinkLoads& links, const std::vector<double>& lineRate)
{
    // Progressive filling: every flow not yet held rises at the same rate
    // until it reaches its line rate or one of its links fills; those flows
    // are held there, and the others go on.
    const size_t n = lineRate.size();
    // Each flow's links, flattened: flow f's are linksOf[first[f] .. first[f+1]).
    std::vector<uint32_t> first(n + 1, 0);
    for (uint32_t f : links.flows)
    {
        ++first[f + 1];
    }
    for (size_t f = 0; f < n; ++f)
    {
        first[f + 1] += first[f];
    }
    std::vector<uint32_t> linksOf(links.flows.size());
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (uint32_t l = 0; l < links.Size(); ++l)
    {
        for (uint32_t k = links.start[l]; k < links.start[l + 1]; ++k)
        {
            linksOf[fill[links.flows[k]]++] = l;
        }
    }
    std::vector<double> left(links.capacity);
    std::vector<uint32_t> rising(links.Size());
    for (uint32_t l = 0; l < links.Size(); ++l)
    {
        rising[l] = links.start[l + 1] - links.start[l];
    }
    std::vector<double> rate(n, 0.0);
    std::vector<uint32_t> flows(n);
    for (uint32_t f = 0; f < n; ++f)
    {
        flows[f] = f;
    }
    std::vector<uint32_t> still;
    std::vector<uint32_t> held;
    double level = 0;
    while (!flows.empty())
    {
        double step = std::numeric_limits<double>::infinity();
        for (uint32_t f : flows)
        {
            step = std::min(step, lineRate[f] - level);
        }
        for (uint32_t l = 0; l < links.Size(); ++l)
        {
            step = rising[l] > 0 ? std::min(step, left[l] / rising[l]) : step;
        }
        step = std::max(step, 0.0);
        level += step;
        for (uint32_t l = 0; l < links.Size(); ++l)
        {
            left[l] -= step * rising[l];
        }
        still.clear();
        held.clear();
        for (uint32_t f : flows)
        {
            bool full = lineRate[f] - level <= 1e-9 * lineRate[f];
            for (uint32_t k = first[f]; k < first[f + 1]; ++k)
            {
                full = full || left[linksOf[k]] <= 1e-9 * links.capacity[linksOf[k]];
            }
            (full ? held : still).push_back(f);
        }
        if (held.empty())
        {
            break; // nothing left to fill (zero capacities): the rest stay at 0
        }
        for (uint32_t f : held)
        {
            rate[f] = level;
            for (uint32_t k = first[f]; k < first[f + 1]; ++k)
            {
                --rising[linksOf[k]];
            }
        }
        flows.swap(still);
    }
    return rate;
}

std::vector<bool>
CanBeBottleneck(const LinkLoads& links, const std::vector<double>& lineRate)
{
    const std::vector<double> rate = FairRates(links, lineRate);
    std::vector<bool> can(links.Size());
    for (size_t l = 0; l < links.Size(); ++l)
    {
        double demand = 0;
        for (uint32_t k = links.start[l]; k < links.start[l + 1]; ++k)
        {
            demand += rate[links.flows[k]];
        }
        can[l] = demand >= kFillable * links.capacity[l];
    }
    return can;
}

} // namespace wormhole
} // namespace ns3
