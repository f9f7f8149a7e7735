// Colour refinement (1-WL) of a flow conflict graph: the step that both the
// memo's structural hash (FlowConflictGraph::Hash, memo-store.cc) and its
// exact match (fcg-isomorphism.cc) take, so the two agree on what a colour is.
#ifndef NS3_WORMHOLE_COLOUR_REFINEMENT_H
#define NS3_WORMHOLE_COLOUR_REFINEMENT_H

#include "memo-store.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{
namespace wormhole
{

/// Neighbour lists of a graph, each sorted by (neighbour, weight).
struct FcgAdjacency
{
    std::vector<uint32_t> start; ///< neighbours of v: next[start[v] .. start[v + 1])
    std::vector<std::pair<uint32_t, uint32_t>> next; ///< (neighbour, weight)
};

FcgAdjacency BuildAdjacency(const FlowConflictGraph& g);

/// One round: a vertex's new colour is its colour with the multiset of
/// (neighbour's colour, edge weight) around it. `scratch` is working space.
void RefineColours(const FcgAdjacency& adj, std::vector<uint64_t>& colour, std::vector<uint64_t>& scratch);

/// How many distinct colours `colour` holds.
size_t CountColours(const std::vector<uint64_t>& colour);

} // namespace wormhole
} // namespace ns3

#endif
