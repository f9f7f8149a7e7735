// Memo key: building a partition's flow conflict graph (see memo-key.h).
#include "memo-key.h"

#include "bottleneck.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <vector>

namespace ns3
{
namespace wormhole
{

namespace
{

/// A link some of the pattern's flows send data over.
struct LinkUse
{
    double line = 0;             ///< capacity of the link (bps)
    double payload = 0;          ///< payload capacity (bps)
    double drain = 0;            ///< payload rate at which it empties a queue (bps)
    std::vector<uint32_t> flows; ///< vertices whose data crosses it
};

/// Vertices labelled by quantized rate and the capacity, delay and loss rate
/// of each hop of the data path.
FlowConflictGraph
LabelVertices(const std::vector<MemoFlowView>& flows,
              double rateQuantum,
              const FlowCreditor& model,
              std::unordered_map<uint32_t, LinkUse>& onLink)
{
    FlowConflictGraph g;
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const MemoFlowView& fs = flows[i];
        uint64_t label = static_cast<uint64_t>(std::llround(fs.ccRate / rateQuantum));
        for (uint32_t link : fs.dataLinks)
        {
            double line = 0;
            double payload = 0;
            model.GetLinkCapacity(link, line, payload);
            label = label * 1000003u + static_cast<uint64_t>(line / 1e6) * 31u + static_cast<uint64_t>(payload / 1e6);
            // The hop's propagation delay: the base RTT sets how much a
            // flow has in flight when the pattern forms and how late its
            // congestion control hears of the queue (a record from 1 us
            // links replayed on 100 us links erred by 82%). And its loss
            // rate (in units of 1e-9): losses stall a go-back-N flow.
            uint64_t delayNs = 0;
            double loss = 0;
            model.GetLinkWire(link, delayNs, loss);
            label = label * 1000003u + delayNs;
            label = label * 1000003u + static_cast<uint64_t>(std::llround(loss * 1e9));
            LinkUse& use = onLink[link];
            use.line = line;
            use.payload = payload;
            use.drain = model.GetQueueDrainBps(link);
            use.flows.push_back(i);
        }
        g.vertexLabel.push_back(label);
    }
    return g;
}

/// Edges between flows whose data share links that can be bottlenecks.
void
AddContentionEdges(const std::vector<MemoFlowView>& flows,
                   const std::unordered_map<uint32_t, LinkUse>& onLink,
                   FlowConflictGraph& g)
{
    LinkLoads loads;
    for (const auto& [link, use] : onLink)
    {
        loads.AddLink(use.line);
        for (uint32_t f : use.flows)
        {
            loads.AddFlow(f);
        }
    }
    std::vector<double> lineRate;
    for (const MemoFlowView& fs : flows)
    {
        lineRate.push_back(fs.lineRate);
    }
    const std::vector<bool> contended = CanBeBottleneck(loads, lineRate);
    // Each pair of flows once per contended link they share, as (low, high)
    // packed in one word; sorted, a pair's run length is its weight.
    std::vector<uint64_t> pairs;
    for (size_t l = 0; l < loads.Size(); ++l)
    {
        const uint32_t* vs = loads.flows.data() + loads.start[l];
        const size_t n = loads.start[l + 1] - loads.start[l];
        if (n < 2 || !contended[l])
        {
            continue;
        }
        for (size_t a = 0; a < n; ++a)
        {
            for (size_t b = a + 1; b < n; ++b)
            {
                pairs.push_back(static_cast<uint64_t>(std::min(vs[a], vs[b])) << 32 | std::max(vs[a], vs[b]));
            }
        }
    }
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < pairs.size();)
    {
        size_t j = i;
        while (j < pairs.size() && pairs[j] == pairs[i])
        {
            ++j;
        }
        g.edges.push_back({static_cast<uint32_t>(pairs[i] >> 32), static_cast<uint32_t>(pairs[i]), static_cast<uint32_t>(j - i)});
        i = j;
    }
}

} // namespace

MemoKey
BuildMemoKey(const std::vector<MemoFlowView>& flows, double rateQuantum, const FlowCreditor& model)
{
    // The pattern: each flow labelled by its quantized rate and the
    // capacity and delay of each hop of its path (the paper's FCG ignores
    // them; a memo scoped to one fabric configuration still sees several
    // link speeds and delays), edges
    // weighted by the number of links two flows' data share where they can
    // contend. Acknowledgements travel in the strict-priority control queue
    // and a link whose flows together cannot exceed it (a 400G spine link
    // under three 100G flows) shapes nobody's rate: counting either would
    // make every ECMP placement of one all-to-all a pattern of its own.
    MemoKey key;
    std::unordered_map<uint32_t, LinkUse> onLink;
    key.graph = LabelVertices(flows, rateQuantum, model, onLink);
    AddContentionEdges(flows, onLink, key.graph);
    for (const MemoFlowView& fs : flows)
    {
        double share = fs.dataLinks.empty() ? 0.0 : std::numeric_limits<double>::infinity();
        for (uint32_t link : fs.dataLinks)
        {
            const LinkUse& use = onLink.at(link);
            // What a flow has in flight when a hit is taken drains from the
            // queue it fills at the line's pace, not at the utilisation the
            // controller aims for (HPCC's 95%): counted at the lower rate, a
            // hit stopped short of a stored completion credited the in-flight
            // bytes too long a drain, and every flow of a 4-to-1 HPCC incast
            // on 50 us links ended 3.4% early.
            share = std::min(share, use.drain / static_cast<double>(use.flows.size()));
        }
        key.drainRate.push_back(share);
    }

    // How a transient ends in a completion depends on where each flow
    // stands, not only on the pattern. If every flow started with the
    // pattern (within ~5 us of each other, having delivered at most that
    // long at 100 Gbps), the pattern says it all: such records are keyed by
    // the graph. Otherwise they are keyed by the graph with each flow's
    // remaining and unsent bytes (8 KB steps) in its label, so they match
    // only flows with what their counterparts had left (an all-to-all
    // repeated from the same staggered start). Measured: reusing one for a
    // short flow joining long DCQCN flows, whose state the graph does not
    // show, erred by 14%. Delivered bytes alone do not tell a flow that
    // started with the pattern on long links, where nothing is delivered
    // for a round trip: three DCTCP flows of an incast wave joined by the
    // fourth 25-175 us later on 50 us links looked fresh, took the record of
    // the wave whose four flows started together, and ended 20-24% early.
    // Unsent bytes tell such offsets apart where remaining bytes do not.
    constexpr double kFreshBytes = 64000;
    constexpr uint64_t kFreshNs = 5000;
    uint64_t first = UINT64_MAX;
    uint64_t last = 0;
    for (const MemoFlowView& fs : flows)
    {
        key.fresh = key.fresh && fs.delivered <= kFreshBytes;
        first = std::min(first, fs.startedAt);
        last = std::max(last, fs.startedAt);
    }
    key.fresh = key.fresh && (flows.empty() || last - first <= kFreshNs);
    key.ending.vertexLabel = key.graph.vertexLabel; // a copy of labels and edges: no cached hash
    key.ending.edges = key.graph.edges;
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const double remaining = std::max(0.0, flows[i].remaining);
        const double unsent = std::max(0.0, remaining - flows[i].inFlight);
        uint64_t& label = key.ending.vertexLabel[i];
        label = label * 1000003u + static_cast<uint64_t>(std::llround(remaining / 8192.0));
        label = label * 1000003u + static_cast<uint64_t>(std::llround(unsent / 8192.0));
    }
    return key;
}

} // namespace wormhole
} // namespace ns3
