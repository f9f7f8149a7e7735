// Memo match: choosing the stored record a forming pattern may use (see
// memo-match.h).
#include "memo-match.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{
namespace wormhole
{

MemoMatch::MemoMatch(const std::vector<MemoFlowView>& flows,
                     double marginNs,
                     double minSkipNs,
                     double theta,
                     uint32_t confirmations,
                     double agreement)
    : m_flows(flows),
      m_marginNs(marginNs),
      m_minSkipNs(minSkipNs),
      m_theta(theta),
      m_confirmations(std::max<uint32_t>(1, confirmations)),
      m_agreement(agreement)
{
}

double
MemoMatch::Remaining(uint32_t i) const
{
    return m_flows[i].remaining;
}

double
MemoMatch::Unsent(uint32_t i) const
{
    return m_flows[i].remaining - m_flows[i].inFlight;
}

double
MemoMatch::InFlight(uint32_t i) const
{
    return m_flows[i].inFlight;
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

namespace
{

/// (max - min) <= agreement x mean of `values`.
bool
Close(const std::vector<double>& values, double agreement)
{
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    double mean = 0;
    for (double v : values)
    {
        mean += v / static_cast<double>(values.size());
    }
    return *hi - *lo <= agreement * mean;
}

} // namespace

bool
MemoMatch::Agree(const std::vector<const MemoRecord*>& occurrences, double agreement)
{
    std::vector<double> durations;
    for (const MemoRecord* r : occurrences)
    {
        durations.push_back(static_cast<double>(r->transientNs));
    }
    if (!Close(durations, agreement))
    {
        return false;
    }
    // Rank k of each occurrence's sorted bytes (rates) against rank k of the
    // others, relative to the largest flow's: a flow that moved little may
    // move relatively much without mattering.
    for (auto field : {&MemoRecord::bytes, &MemoRecord::rate})
    {
        std::vector<std::vector<double>> sorted;
        for (const MemoRecord* r : occurrences)
        {
            sorted.push_back(r->*field);
            std::sort(sorted.back().begin(), sorted.back().end());
        }
        const size_t n = sorted.front().size();
        double scale = 0;
        for (const auto& s : sorted)
        {
            scale = std::max(scale, s.empty() ? 0.0 : s.back());
        }
        for (size_t k = 0; k < n; ++k)
        {
            double lo = std::numeric_limits<double>::infinity();
            double hi = -lo;
            for (const auto& s : sorted)
            {
                lo = std::min(lo, s[k]);
                hi = std::max(hi, s[k]);
            }
            if (hi - lo > agreement * scale)
            {
                return false;
            }
        }
    }
    return true;
}

MemoMatch::Hit
MemoMatch::Confirmed(const std::vector<Hit>& candidates) const
{
    if (candidates.size() < m_confirmations)
    {
        return {};
    }
    std::vector<const MemoRecord*> records;
    for (const Hit& h : candidates)
    {
        records.push_back(h.record);
    }
    if (!Agree(records, m_agreement))
    {
        return {};
    }
    size_t best = 0;
    double bestDistance = std::numeric_limits<double>::infinity();
    for (size_t a = 0; a < records.size(); ++a)
    {
        double distance = 0;
        for (const MemoRecord* b : records)
        {
            distance += std::abs(static_cast<double>(records[a]->transientNs - b->transientNs));
        }
        if (distance < bestDistance)
        {
            best = a;
            bestDistance = distance;
        }
    }
    return candidates[best];
}

void
MemoMatch::Search(const MemoStore& store, const MemoKey& key)
{
    // Collect the occurrences of each kind (a pattern keeps at most
    // `confirmations` of each, see WormholeSimulatorImpl::MemoRecord): each
    // candidate costs an isomorphism search, so stop once one kind has them all.
    std::vector<Hit> steadies;
    std::vector<Hit> endings;
    store.Visit(key.graph, [&](const MemoRecord& rec, const Map& map) {
        if (rec.completes < 0 && OthersFit(rec, map))
        {
            steadies.push_back({&rec, map});
        }
        else if (rec.completes < 0 && !flat && FlatThroughout(rec, m_theta))
        {
            flat = {&rec, map};
        }
        else if (key.fresh && FitsEnding(rec, map))
        {
            endings.push_back({&rec, map});
        }
        return steadies.size() >= m_confirmations || endings.size() >= m_confirmations;
    });
    if (!key.fresh && steadies.size() < m_confirmations)
    {
        store.Visit(key.ending, [&](const MemoRecord& rec, const Map& map) {
            if (FitsEnding(rec, map))
            {
                endings.push_back({&rec, map});
            }
            return endings.size() >= m_confirmations;
        });
    }
    steady = Confirmed(steadies);
    ends = steady ? Hit{} : Confirmed(endings);
}

} // namespace wormhole
} // namespace ns3
