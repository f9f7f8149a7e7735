// Which links can be a bottleneck for a set of flows (see bottleneck.h).
#include "bottleneck.h"

#include <algorithm>

namespace ns3
{
namespace wormhole
{

std::vector<bool>
CanBeBottleneck(const LinkLoads& links, const std::vector<double>& lineRate)
{
    std::vector<double> bound(lineRate);
    for (size_t l = 0; l < links.Size(); ++l)
    {
        const uint32_t n = links.start[l + 1] - links.start[l];
        const double share = links.capacity[l] / static_cast<double>(std::max<uint32_t>(1, n));
        for (uint32_t k = links.start[l]; k < links.start[l + 1]; ++k)
        {
            bound[links.flows[k]] = std::min(bound[links.flows[k]], share);
        }
    }
    std::vector<bool> can(links.Size());
    for (size_t l = 0; l < links.Size(); ++l)
    {
        double demand = 0;
        for (uint32_t k = links.start[l]; k < links.start[l + 1]; ++k)
        {
            demand += bound[links.flows[k]];
        }
        can[l] = demand >= 0.99 * links.capacity[l];
    }
    return can;
}

} // namespace wormhole
} // namespace ns3
