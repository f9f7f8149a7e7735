// Memo match (Wormhole §4.3): which stored records may be applied to a
// pattern that just formed, given where each of its flows stands. Three
// kinds of hit: a steady record whose whole transient fits in what every
// flow has left; a record whose transient ended in a completion, when the
// flows have what their counterparts had; a flat steady record, any prefix
// of which is its rates times its length.
#ifndef NS3_WORMHOLE_MEMO_MATCH_H
#define NS3_WORMHOLE_MEMO_MATCH_H

#include "memo-key.h"
#include "memo-store.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace wormhole
{

class MemoMatch
{
  public:
    using Map = std::vector<uint32_t>; ///< map[i]: the record's vertex for flow i

    struct Hit
    {
        const MemoRecord* record = nullptr;
        Map map;

        explicit operator bool() const
        {
            return record != nullptr;
        }
    };

    /// `marginNs`: what each flow's end leaves to run packet by packet;
    /// `minSkipNs`: the shortest skip worth taking; `theta`: the steady bound;
    /// `confirmations`: occurrences of a pattern (records of one kind) that
    /// must agree within `agreement` before one of them is replayed.
    MemoMatch(const std::vector<MemoFlowView>& flows,
              double marginNs,
              double minSkipNs,
              double theta,
              uint32_t confirmations,
              double agreement);

    /// Looks the key up in `store`, filling steady / ends / flat.
    void Search(const MemoStore& store, const MemoKey& key);

    Hit steady; ///< a confirmed steady record whose transient fits
    Hit ends;   ///< a confirmed record ending in a completion, of flows that stand alike
    Hit flat;   ///< a flat steady record, for a prefix

    /// The occurrences agree: durations, and each flow's bytes and rate
    /// (sorted, so which of several alike flows ended first does not count),
    /// spread by at most `agreement` of their mean.
    static bool Agree(const std::vector<const MemoRecord*>& occurrences, double agreement);

    /// Bytes flow i has left (neither acknowledged nor credited).
    double Remaining(uint32_t i) const;
    /// Bytes flow i has not sent yet: all a credit can take off it.
    double Unsent(uint32_t i) const;
    /// Bytes flow i has sent and not yet had acknowledged.
    double InFlight(uint32_t i) const;
    /// Bytes flow i may still be credited under `hit`: what is left, less
    /// what is in flight and the margin at the stored rate.
    double Creditable(uint32_t i, const Hit& hit) const;
    /// The stored transient ran at its converged rates all along: its end
    /// windows flat well under theta and its mean rates within theta of them.
    static bool FlatThroughout(const MemoRecord& rec, double theta);

  private:
    double Creditable(uint32_t i, const MemoRecord& rec, const Map& map) const;
    /// The stored transient's flows (but the one it ends with) do not finish
    /// during it here.
    bool OthersFit(const MemoRecord& rec, const Map& map) const;
    /// The flow the record ends with has what its counterpart had left, and
    /// every other flow at least what its counterpart delivered.
    bool EndsAlike(const MemoRecord& rec, const Map& map) const;
    bool FitsEnding(const MemoRecord& rec, const Map& map) const;

    /// The occurrence to replay among `candidates` (one kind, one pattern):
    /// none until `confirmations` of them agree; then the medoid (the one
    /// whose duration is nearest the others').
    Hit Confirmed(const std::vector<Hit>& candidates) const;

    const std::vector<MemoFlowView>& m_flows;
    double m_marginNs;
    double m_minSkipNs;
    double m_theta;
    uint32_t m_confirmations;
    double m_agreement;
};

} // namespace wormhole
} // namespace ns3

#endif
