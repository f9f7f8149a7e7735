// Memo match: choosing the stored record a forming pattern may use (see
// memo-match.h).
#include "memo-match.h"

#include <algorithm>
#include <cmath>

namespace ns3
{
namespace wormhole
{

MemoMatch::MemoMatch(const std::vector<MemoFlowView>& flows, double marginNs, double minSkipNs, double theta)
    : m_flows(flows),
      m_marginNs(marginNs),
      m_minSkipNs(minSkipNs),
      m_theta(theta)
{
}

double
MemoMatch::Remaining(uint32_t i) const
{
    return m_flows[i].remaining;
}

double
MemoMatch::Creditable(uint32_t i, const MemoRecord& rec, const Map& map) const
{
    // Its end runs packet by packet: in-flight bytes and the margin stay.
    return Remaining(i) - rec.rate[map[i]] * m_marginNs / 8e9 - m_flows[i].inFlight;
}

double
MemoMatch::Creditable(uint32_t i, const Hit& hit) const
{
    return Creditable(i, *hit.record, hit.map);
}

bool
MemoMatch::OthersFit(const MemoRecord& rec, const Map& map) const
{
    for (uint32_t i = 0; i < m_flows.size(); ++i)
    {
        if (static_cast<int32_t>(map[i]) != rec.completes && Creditable(i, rec, map) <= rec.bytes[map[i]])
        {
            return false;
        }
    }
    return rec.transientNs > 0;
}

bool
MemoMatch::EndsAlike(const MemoRecord& rec, const Map& map) const
{
    // A flow's end is where it ends: the one the record ends with must have
    // what its counterpart had left.
    for (uint32_t i = 0; i < m_flows.size(); ++i)
    {
        const double want = rec.bytes[map[i]];
        const double tolerance = std::max(4000.0, 0.002 * want);
        const double gap = Remaining(i) - want;
        if (gap < -tolerance || (static_cast<int32_t>(map[i]) == rec.completes && gap > tolerance))
        {
            return false;
        }
    }
    return rec.transientNs > 0;
}

bool
MemoMatch::FitsEnding(const MemoRecord& rec, const Map& map) const
{
    return rec.completes >= 0 && EndsAlike(rec, map) &&
           static_cast<double>(rec.transientNs) - m_marginNs >= m_minSkipNs;
}

bool
MemoMatch::FlatThroughout(const MemoRecord& rec, double theta)
{
    if (rec.spread > 0.2 * theta || rec.transientNs <= 0)
    {
        return false;
    }
    for (size_t v = 0; v < rec.rate.size(); ++v)
    {
        const double mean = rec.bytes[v] * 8e9 / static_cast<double>(rec.transientNs);
        if (!(rec.rate[v] > 0) || std::abs(mean - rec.rate[v]) > theta * rec.rate[v])
        {
            return false;
        }
    }
    return true;
}

void
MemoMatch::Search(const MemoStore& store, const MemoKey& key)
{
    // Stop at the first steady record that fits or record that ends alike:
    // each candidate costs a VF2 run.
    store.Visit(key.graph, [&](const MemoRecord& rec, const Map& map) {
        if (rec.completes < 0 && OthersFit(rec, map))
        {
            steady = {&rec, map};
        }
        else if (rec.completes < 0 && !flat && FlatThroughout(rec, m_theta))
        {
            flat = {&rec, map};
        }
        else if (key.fresh && FitsEnding(rec, map))
        {
            ends = {&rec, map};
        }
        return steady || ends;
    });
    if (!steady && !ends && !key.fresh)
    {
        store.Visit(key.ending, [&](const MemoRecord& rec, const Map& map) {
            if (!FitsEnding(rec, map))
            {
                return false;
            }
            ends = {&rec, map};
            return true;
        });
    }
}

} // namespace wormhole
} // namespace ns3
