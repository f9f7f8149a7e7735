// WormholeSimulatorImpl, shares of a noisy partition (docs/fast-forward.md,
// "Noisy partitions: pooled shares"): which flows stand alike at a full port
// whose marks are drawn, the rate they share beyond what was measured of
// each, the dispersion drawn for each around it, and whether their port
// delivers its capacity.
#include "mix64.h"
#include "wormhole-simulator-impl.h"

#include "ns3/log.h"
#include "ns3/rng-seed-manager.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeShareEstimate");

using wormhole::FlowSeam;

std::unordered_map<uint64_t, WormholeSimulatorImpl::MeasuredPort>
WormholeSimulatorImpl::DataPortLoads(const std::vector<std::pair<uint32_t, double>>& rates) const
{
    std::unordered_map<uint64_t, MeasuredPort> ports;
    for (const auto& [flow, rate] : rates)
    {
        const FlowState& fs = m_flows.at(flow);
        for (size_t h = 0; h < fs.dataPorts.size(); ++h)
        {
            MeasuredPort& p = ports[fs.dataPorts[h].first];
            p.load += rate;
            p.lines += fs.lineRate;
            p.acks += rate * fs.ackRatio;
            if (p.crossing++ == 0)
            {
                p.link = fs.links[h];
                if (FlowSeam::creditor)
                {
                    double line = 0;
                    FlowSeam::creditor->GetLinkCapacity(p.link, line, p.capacity);
                }
            }
        }
    }
    return ports;
}

void
WormholeSimulatorImpl::PoolShares(uint32_t partition,
                                  const std::vector<std::pair<uint32_t, double>>& rates,
                                  std::vector<double>& shared,
                                  std::vector<double>& deviation,
                                  std::vector<bool>& atCapacity) const
{
    if (!FlowSeam::creditor || rates.size() < 2)
    {
        return;
    }
    // Which data ports the partition fills: a port whose measured load
    // reaches its payload capacity to theta. Only there do flows divide a
    // fixed capacity between them.
    auto ports = DataPortLoads(rates);
    // Flows stand alike when they have the same full ports, the same line
    // rate and the same base round trip, told by the sum of the delays of
    // their path's links (each link once: its data hops, then the links only
    // its acknowledgements take; flows whose acknowledgements take other
    // cables at the same delay then differ, which only pools fewer). The
    // congestion control then sees the same signals at the same delays from
    // the same shared queues, and their long-run shares are equal by
    // symmetry. What differs between them in a measurement is how the
    // sawtooth's draws fell.
    struct Standing
    {
        std::vector<uint64_t> full;
        double lineRate;
        uint64_t delayNs;
        auto operator<=>(const Standing&) const = default;
    };
    std::map<Standing, std::vector<size_t>> alike;
    for (size_t i = 0; i < rates.size(); ++i)
    {
        const FlowState& fs = m_flows.at(rates[i].first);
        if (!fs.dataPortsWhole)
        {
            continue; // a route cut short: its ports are not all known
        }
        Standing s{{}, fs.lineRate, 0};
        for (const auto& [port, line] : fs.dataPorts)
        {
            if (ports[port].Full(m_theta))
            {
                s.full.push_back(port);
            }
        }
        if (s.full.empty())
        {
            continue; // on no full port: its rate is its own (line rate, or its CC's)
        }
        std::sort(s.full.begin(), s.full.end());
        for (uint32_t link : fs.links)
        {
            uint64_t delay = 0;
            double loss = 0;
            FlowSeam::creditor->GetLinkWire(link, delay, loss);
            s.delayNs += delay;
        }
        alike[std::move(s)].push_back(i);
    }
    // Within a group (the skip engine applies this, wormhole-skip-engine.cc)
    // each flow keeps its own R-hat for as long as it was measured: over
    // that span its deviation from the others was seen to hold. Beyond it,
    // how long a deviation lasts is unknown and the flows' expected shares
    // are equal, so each is credited the group's mean (the group's sum, what
    // its port delivers, unchanged) plus a drawn dispersion. Extrapolating
    // each flow's own deviation over the whole skip stretches every
    // transient unfairness, which the frozen state then carries on after
    // the skip as well: the FCTs spread wider than the reference's and
    // their mean comes out early (docs/fast-forward.md).
    //
    // The dispersion is what the skip cannot carry: which marks fall to whom
    // moves each flow's bytes around the mean by more the longer it runs.
    // Its rate is measured where it happened: the variance among the group's
    // flows of what each delivered packet by packet since the pattern
    // formed, over the simulated time since. Each skip draws it anew.
    for (const auto& [standing, members] : alike)
    {
        const size_t n = members.size();
        if (n < 2)
        {
            continue;
        }
        double mean = 0;
        for (size_t i : members)
        {
            mean += rates[i].second;
        }
        mean /= static_cast<double>(n);
        // What is extrapolated for the group is its sum, its tightest full
        // port's delivered rate. Where the group alone crosses that port (a
        // full one: its capacity to theta, above) and the sum shows no trend
        // since the group's anchor beyond its own scatter, the skip may run
        // to the completions. A test of the level alone cannot tell
        // this: DCQCN's probabilistic marks leave the port idle now and then
        // for good (the 8-to-1 incast's port delivers 98.9% of its payload
        // capacity from 10 ms to the end), so a level near capacity is
        // passed only by a measurement that noise lifted above the sum's
        // long-run value, and then credits that noise. A sum still climbing
        // (DCQCN's alpha decays after an incast's first cuts) is extrapolated
        // as far as MaxExtrapolation allows, like any noisy rate.
        uint64_t tightest = standing.full.front();
        for (uint64_t port : standing.full)
        {
            if (ports[port].load / ports[port].capacity > ports[tightest].load / ports[tightest].capacity)
            {
                tightest = port;
            }
        }
        // Only where the shares are drawn (marks by probability, a control
        // loop they move) is a flow's deviation a draw that the others were
        // as likely to get. Where the model draws nothing (step marking,
        // HPCC, TIMELY) the pattern is deterministic and each measured share
        // is the outcome: the flows keep their own rates.
        bool drawn = (tightest & FlowState::kNicPortBit) == 0;
        for (size_t i : members)
        {
            drawn = drawn && FlowSeam::creditor->SharesDrawnAt(rates[i].first, tightest);
        }
        if (!drawn)
        {
            continue;
        }
        std::vector<uint32_t> flows;
        for (size_t i : members)
        {
            flows.push_back(rates[i].first);
        }
        const bool full = ports[tightest].crossing == n && SumWithoutTrend(flows);
        // What each delivered in simulated time since the pattern formed.
        double delivered = 0;
        double deliveredSquares = 0;
        double simulated = 0;
        for (size_t i : members)
        {
            const FlowState& fs = m_flows.at(rates[i].first);
            const auto d = static_cast<double>(fs.acked - fs.formedAcked);
            delivered += d;
            deliveredSquares += d * d;
            simulated += static_cast<double>(m_currentTs - fs.formedTime) -
                         static_cast<double>(m_flowSkipped.at(rates[i].first) - fs.formedSkipped);
        }
        delivered /= static_cast<double>(n);
        simulated /= static_cast<double>(n);
        const double variance =
            std::max(0.0, (deliveredSquares - static_cast<double>(n) * delivered * delivered) / static_cast<double>(n - 1));
        const double gain = simulated > 0 ? variance / simulated : 0; // bytes^2 per ns
        NS_LOG_DEBUG("partition " << partition << ": " << n << " flows alike at " << standing.full.size()
                                  << " full ports, mean " << mean / 1e9 << " Gbps, dispersion "
                                  << std::sqrt(gain * 1e6) << " bytes per sqrt(ms)");
        // One zero-sum draw per flow, from the run's seed and the skip's
        // time: a run repeats itself, and the group's sum stays its ports'.
        std::vector<double> z(n);
        double zMean = 0;
        for (size_t j = 0; j < n; ++j)
        {
            z[j] = StandardNormal(rates[members[j]].first);
            zMean += z[j];
        }
        zMean /= static_cast<double>(n);
        for (size_t j = 0; j < n; ++j)
        {
            shared[members[j]] = mean;
            atCapacity[members[j]] = full;
            // Deviations from the group's mean: variance (n - 1) / n of the
            // per-flow variance measured above, as the spread of n independent
            // walks around their mean has.
            deviation[members[j]] = (z[j] - zMean) * std::sqrt(gain);
        }
    }
}

bool
WormholeSimulatorImpl::SumWithoutTrend(const std::vector<uint32_t>& flows) const
{
    // Before and now: each flow's delivered rate from its anchor to the
    // start of the group's current windows, and over those windows (their
    // last l acknowledgements), summed over the flows. A trend shows as the
    // difference between the two sums; the sum's own scatter at the
    // windows' time scale as the difference between the windows' halves,
    // whose typical size for a stationary sum is about twice the first's:
    // such a sum passes about seven times in ten ((2 / pi) atan 2), and a
    // refusal only means measuring longer. A climb passes only while it is
    // smaller than the scatter. Windows that still reach back to an anchor
    // have no "before".
    uint64_t start = 0;
    for (uint32_t flow : flows)
    {
        const FlowState& fs = m_flows.at(flow);
        if (fs.window.Size() < 4 || fs.credited != fs.anchorCredited)
        {
            return false;
        }
        start = std::max(start, fs.window.Oldest().timeNs);
    }
    const uint64_t middle = start + (m_currentTs - start) / 2;
    double before = 0;
    double earlier = 0; // the windows' first half
    double later = 0;   // and second half
    for (uint32_t flow : flows)
    {
        const FlowState& fs = m_flows.at(flow);
        const auto& w = fs.window;
        const uint32_t ka = w.Seek(start, 0);
        const auto& a = w.At(ka);
        const auto& b = w.At(w.Seek(middle, ka));
        const auto& z = w.Newest();
        if (a.timeNs <= fs.anchorTime || b.timeNs <= a.timeNs || z.timeNs <= b.timeNs)
        {
            return false;
        }
        const auto rate = [](uint64_t bytes, uint64_t ns) {
            return static_cast<double>(bytes) * 8 / static_cast<double>(ns); // Gbps
        };
        before += rate(a.acked - fs.anchorAcked, a.timeNs - fs.anchorTime);
        earlier += rate(b.acked - a.acked, b.timeNs - a.timeNs);
        later += rate(z.acked - b.acked, z.timeNs - b.timeNs);
    }
    const double now = (earlier + later) / 2;
    NS_LOG_DEBUG("group of " << flows.size() << ": " << before << " Gbps before its windows, " << earlier << " and "
                             << later << " in their halves");
    return std::abs(now - before) <= std::abs(later - earlier);
}

double
WormholeSimulatorImpl::StandardNormal(uint32_t flow) const
{
    // Mix64 of (seed, run, flow, now), two uniforms in (0, 1), Box-Muller.
    using wormhole::Mix64;
    uint64_t h = Mix64(RngSeedManager::GetSeed());
    h = Mix64(h ^ RngSeedManager::GetRun());
    h = Mix64(h ^ flow);
    h = Mix64(h ^ m_currentTs);
    const double u1 = (static_cast<double>(h >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = (static_cast<double>(Mix64(h) >> 11) + 0.5) / 9007199254740992.0;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}


} // namespace ns3
