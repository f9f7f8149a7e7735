// Colour refinement of a flow conflict graph (see colour-refinement.h).
#include "colour-refinement.h"

#include "mix64.h"

#include <algorithm>

namespace ns3
{
namespace wormhole
{

FcgAdjacency
BuildAdjacency(const FlowConflictGraph& g)
{
    const size_t n = g.vertexLabel.size();
    FcgAdjacency adj;
    adj.start.assign(n + 1, 0);
    for (const auto& e : g.edges)
    {
        ++adj.start[e.a + 1];
        ++adj.start[e.b + 1];
    }
    for (size_t v = 0; v < n; ++v)
    {
        adj.start[v + 1] += adj.start[v];
    }
    adj.next.resize(adj.start[n]);
    std::vector<uint32_t> fill(adj.start.begin(), adj.start.end() - 1);
    for (const auto& e : g.edges)
    {
        adj.next[fill[e.a]++] = {e.b, e.weight};
        adj.next[fill[e.b]++] = {e.a, e.weight};
    }
    for (size_t v = 0; v < n; ++v)
    {
        std::sort(adj.next.begin() + adj.start[v], adj.next.begin() + adj.start[v + 1]);
    }
    return adj;
}

void
RefineColours(const FcgAdjacency& adj, std::vector<uint64_t>& colour, std::vector<uint64_t>& scratch)
{
    const size_t n = colour.size();
    scratch.resize(n);
    for (size_t v = 0; v < n; ++v)
    {
        // The multiset as a sum of mixed (colour, weight) pairs: the same for
        // any order of the neighbours, so it needs no sorting.
        uint64_t around = 0;
        for (uint32_t k = adj.start[v]; k < adj.start[v + 1]; ++k)
        {
            const auto [u, w] = adj.next[k];
            around += Mix64(colour[u] ^ (static_cast<uint64_t>(w) * 0x9e3779b97f4a7c15ULL));
        }
        scratch[v] = Mix64(Mix64(colour[v] + 0x243f6a8885a308d3ULL) ^ around);
    }
    colour.swap(scratch);
}

size_t
CountColours(const std::vector<uint64_t>& colour)
{
    std::vector<uint64_t> sorted(colour);
    std::sort(sorted.begin(), sorted.end());
    return static_cast<size_t>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
}

} // namespace wormhole
} // namespace ns3
