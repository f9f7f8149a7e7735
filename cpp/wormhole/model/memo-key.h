// Memo key (Wormhole §4.2): what a partition's contention pattern is, as the
// flow conflict graph (FCG) built from the flows it holds when it forms, and
// the variant of that graph that also names what each flow has left (the key
// of records that end in a completion of a partition whose flows did not all
// start with it).
#ifndef NS3_WORMHOLE_MEMO_KEY_H
#define NS3_WORMHOLE_MEMO_KEY_H

#include "flow-seam.h"
#include "memo-store.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace wormhole
{

/// What the memo reads of one flow of a partition.
struct MemoFlowView
{
    double ccRate = 0;    ///< congestion-control rate now (bps)
    double lineRate = 0;  ///< its NIC's line rate (bps)
    double delivered = 0; ///< payload acknowledged or credited so far
    double remaining = 0; ///< payload neither acknowledged nor credited
    double inFlight = 0;  ///< payload sent but not acknowledged
    uint64_t startedAt = 0; ///< when it started (ns)
    std::vector<uint32_t> dataLinks; ///< the links its data crosses, in order
};

struct MemoKey
{
    FlowConflictGraph graph;  ///< the pattern
    FlowConflictGraph ending; ///< the pattern with each flow's remaining bytes in its label
    bool fresh = true;        ///< every flow started with the pattern
    /// Each flow's equal share of its tightest data hop (payload bps): the
    /// rate its queued bytes drain at while the queues ahead are full.
    std::vector<double> drainRate;
};

/// Builds the key of the pattern `flows` form; capacities come from `model`.
MemoKey BuildMemoKey(const std::vector<MemoFlowView>& flows, double rateQuantum, const FlowCreditor& model);

} // namespace wormhole
} // namespace ns3

#endif
