// Isomorphism of flow conflict graphs (FlowConflictGraph::IsomorphicTo): the
// memo's exact match, by individualization and refinement.
//
// Why not a vertex-by-vertex search (VF2, which this replaced): the patterns
// a training step repeats are all-to-alls and rings, graphs in which most
// vertices are alike to colour refinement. VF2 extends a partial mapping one
// vertex at a time and learns little from each choice: on MoE's all-to-alls
// it took a millisecond or more a match, and now and then ran out of its
// budget (a miss) after tens of milliseconds.
//
// The search here works on both graphs at once, with one colouring shared
// by the two:
//
// 1. Refine: a vertex's new colour is its old colour with the multiset of
//    (neighbour's colour, edge weight) around it, numbered alike in both
//    graphs, until the number of colours stops growing. If a colour then
//    has another number of vertices in one graph than in the other, no
//    isomorphism respects the colouring.
// 2. Pair the vertices of each colour in the order they are numbered in.
//    Once every colour holds one vertex in each graph that pairing is the
//    only candidate; before, it is the mapping that keeps the order the
//    flows are listed in, which holds at once when a pattern forms again
//    with its flows listed alike. It is checked edge by edge.
// 3. If it fails, take the smallest colour with more than one vertex, give the
//    first of its vertices in graph 1 a colour of its own, and try it
//    against each vertex of that colour in graph 2 (given the same new
//    colour), refining and recursing. In a symmetric pattern the first try
//    succeeds (the vertices of a class are interchangeable), so a match
//    costs a few refinements; distinct patterns are told apart by the
//    refinement right after a choice.
//
// Every answer is checked against the edges, so a hash collision in the
// colour numbering can cost a miss, never a wrong mapping. The search has a
// budget of refinement work; past it the answer is "no" (a memo miss, as a
// VF2 search past its budget was): deterministic, and never a wrong hit.
#include "colour-refinement.h"
#include "memo-store.h"
#include "mix64.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace ns3
{
namespace wormhole
{

namespace
{

/// Neighbour visits a search may spend before it gives up: thousands of
/// refinements of MoE's 50-flow patterns; a relabelled all-to-all among 32
/// GPUs (992 flows) is found well within it.
constexpr uint64_t kWorkBudget = 20'000'000;

/// Edges as sorted (low, high, weight) triples: equal lists, equal graphs.
std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>
NormalEdges(const FlowConflictGraph& g, const std::vector<uint32_t>* map)
{
    std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> out;
    out.reserve(g.edges.size());
    for (const auto& e : g.edges)
    {
        const uint32_t a = map ? (*map)[e.a] : e.a;
        const uint32_t b = map ? (*map)[e.b] : e.b;
        out.emplace_back(std::min(a, b), std::max(a, b), e.weight);
    }
    std::sort(out.begin(), out.end());
    return out;
}

class IsomorphismSearch
{
  public:
    IsomorphismSearch(const FlowConflictGraph& g1, const FlowConflictGraph& g2)
        : m_g1(g1),
          m_g2(g2),
          m_adj1(BuildAdjacency(g1)),
          m_adj2(BuildAdjacency(g2)),
          m_edges2(NormalEdges(g2, nullptr))
    {
    }

    bool Run(std::vector<uint32_t>& map)
    {
        std::vector<uint64_t> c1(m_g1.vertexLabel);
        std::vector<uint64_t> c2(m_g2.vertexLabel);
        return Search(c1, c2, 0, map);
    }

  private:
    /// Refines both colourings to a stable one; false if they differ in the
    /// number of vertices of some colour (or the budget ran out).
    bool Refine(std::vector<uint64_t>& c1, std::vector<uint64_t>& c2)
    {
        size_t classes = CountColours(c1);
        for (;;)
        {
            m_work += m_adj1.next.size() + m_adj2.next.size() + c1.size() + c2.size();
            if (m_work > kWorkBudget)
            {
                return false;
            }
            RefineColours(m_adj1, c1, m_scratch);
            RefineColours(m_adj2, c2, m_scratch);
            const size_t now = ClassesIfAlike(c1, c2);
            if (now == 0 || now == classes)
            {
                return now != 0;
            }
            classes = now;
        }
    }

    /// Does `map` carry every edge of graph 1 onto an edge of graph 2 with
    /// its weight? A wrong pairing usually fails within a few edges, so they
    /// are looked up one by one in graph 2's sorted neighbour lists; only a
    /// pairing that passes is compared as a whole (which also counts
    /// repeated edges).
    bool Carries(const std::vector<uint32_t>& map)
    {
        for (const auto& e : m_g1.edges)
        {
            ++m_work;
            const uint32_t a = map[e.a];
            const auto first = m_adj2.next.begin() + m_adj2.start[a];
            const auto last = m_adj2.next.begin() + m_adj2.start[a + 1];
            const std::pair<uint32_t, uint32_t> want{map[e.b], e.weight};
            if (!std::binary_search(first, last, want))
            {
                return false;
            }
        }
        m_work += 4 * m_g1.edges.size();
        return NormalEdges(m_g1, &map) == m_edges2;
    }

    /// The number of colours, if every colour has as many vertices in one
    /// colouring as in the other; else 0.
    static size_t ClassesIfAlike(const std::vector<uint64_t>& c1, const std::vector<uint64_t>& c2)
    {
        std::vector<uint64_t> a(c1);
        std::vector<uint64_t> b(c2);
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        if (a != b)
        {
            return 0;
        }
        return static_cast<size_t>(std::unique(a.begin(), a.end()) - a.begin());
    }

    bool Search(std::vector<uint64_t>& c1, std::vector<uint64_t>& c2, uint32_t depth, std::vector<uint32_t>& map)
    {
        if (!Refine(c1, c2))
        {
            return false;
        }
        // The colour to split: fewest vertices above one, then lowest value
        // (the same choice in both graphs, as their classes are equal).
        std::vector<std::pair<uint64_t, uint32_t>> byColour1(c1.size());
        std::vector<std::pair<uint64_t, uint32_t>> byColour2(c2.size());
        for (uint32_t v = 0; v < c1.size(); ++v)
        {
            byColour1[v] = {c1[v], v};
            byColour2[v] = {c2[v], v};
        }
        std::sort(byColour1.begin(), byColour1.end());
        std::sort(byColour2.begin(), byColour2.end());
        size_t bestAt = 0;
        size_t bestSize = 0;
        for (size_t i = 0; i < byColour1.size();)
        {
            size_t j = i;
            while (j < byColour1.size() && byColour1[j].first == byColour1[i].first)
            {
                ++j;
            }
            if (j - i > 1 && (bestSize == 0 || j - i < bestSize))
            {
                bestAt = i;
                bestSize = j - i;
            }
            i = j;
        }
        // Pair the vertices of each colour in the order they are numbered in
        // (the k-th of a colour in graph 1 with the k-th in graph 2): the one
        // candidate left once every colour holds one vertex; before that, the
        // mapping that keeps the order the flows are listed in, which holds
        // at once when a pattern forms again with its flows listed alike.
        map.assign(c1.size(), 0);
        for (size_t i = 0; i < byColour1.size(); ++i)
        {
            map[byColour1[i].second] = byColour2[i].second;
        }
        if (Carries(map))
        {
            return true;
        }
        if (bestSize == 0 || m_work > kWorkBudget)
        {
            return false;
        }
        // Individualize the first vertex of the class in graph 1 and try
        // each vertex of the class in graph 2 against it.
        const uint32_t v = byColour1[bestAt].second;
        const uint64_t own = Mix64(byColour1[bestAt].first ^ (0x5851f42d4c957f2dULL + depth));
        for (size_t k = bestAt; k < bestAt + bestSize; ++k)
        {
            const uint32_t w = byColour2[k].second;
            std::vector<uint64_t> d1(c1);
            std::vector<uint64_t> d2(c2);
            d1[v] = own;
            d2[w] = own;
            if (Search(d1, d2, depth + 1, map))
            {
                return true;
            }
            if (m_work > kWorkBudget)
            {
                return false;
            }
        }
        return false;
    }

    const FlowConflictGraph& m_g1;
    const FlowConflictGraph& m_g2;
    FcgAdjacency m_adj1;
    FcgAdjacency m_adj2;
    std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> m_edges2;
    std::vector<uint64_t> m_scratch;
    uint64_t m_work = 0;
};

} // namespace

bool
FlowConflictGraph::IsomorphicTo(const FlowConflictGraph& other, std::vector<uint32_t>& map) const
{
    if (vertexLabel.size() != other.vertexLabel.size() || edges.size() != other.edges.size())
    {
        return false;
    }
    return IsomorphismSearch(*this, other).Run(map);
}

} // namespace wormhole
} // namespace ns3
