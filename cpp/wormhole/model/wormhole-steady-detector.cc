// WormholeSimulatorImpl, steady detector (Wormhole §5): each acknowledgement
// becomes a delivered-rate sample; a partition whose flows' windows all
// spread by less than Theta is steady and offered to the skip engine. Also
// how noisy a flow is since its anchor and whether the converged rates are
// work-conserving.
#include "wormhole-simulator-impl.h"

#include "ns3/log.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeSteadyDetector");

using wormhole::FlowSeam;

void
WormholeSimulatorImpl::FlowProgress(uint32_t flowId, double ccRateBps, uint64_t ackedBytes, uint64_t sentBytes)
{
    auto it = m_flows.find(flowId);
    if (it == m_flows.end())
    {
        return;
    }
    FlowState& fs = it->second;
    fs.acked = ackedBytes;
    fs.sent = sentBytes;
    fs.ccRate = ccRateBps;
    if (m_replayUntil != 0)
    {
        return; // a replay of the past: nothing is decided in it (wormhole-memo-replay.cc)
    }
    if (m_memo)
    {
        MemoTrace(flowId); // a pending pattern's course (wormhole-memo-record.cc)
    }
    if (fs.memoHitAt != 0 && m_currentTs >= fs.memoHitAt)
    {
        fs.memoHitAt = 0;
        const uint32_t partition = m_partitions.PartitionOfFlow(flowId);
        if (partition != wormhole::PartitionTracker::kNone)
        {
            TakeDeferredHit(partition); // wormhole-memo-deferred-hit.cc
            if (IsSkipping(partition) || !m_flows.contains(flowId))
            {
                return; // this flow's state just moved on
            }
        }
    }
    if (fs.memoCheck)
    {
        // The pattern is looked up at its first acknowledgement, not at each
        // join: a collective's flows start together, and one lookup of the
        // whole pattern replaces one per flow of ever larger partial ones.
        const uint32_t formed = m_partitions.PartitionOfFlow(flowId);
        for (uint32_t f : m_partitions.Get(formed).flows)
        {
            m_flows[f].memoCheck = false;
        }
        MemoOnFormation(formed);
        if (IsSkipping(formed))
        {
            return; // skipped by a memo hit: this flow's state just moved on
        }
    }
    // A sample is the delivered payload rate over the (up to) l
    // acknowledgements before this one: a per-packet CC rate swings by tens
    // of percent under DCQCN's sawtooth, while a rate measured over l packets
    // adapts its time scale to the flow's speed (160 us for a lone 100G flow,
    // about 1 ms for one of eight sharing it).
    //
    // A flow of a calm partition (no flow's congestion control ever cut its
    // rate) sends at line rate by construction, as does every flow beside
    // it: nothing in the partition has a control loop in motion, so there is
    // no sawtooth for l-packet averaging to smooth, and short flows
    // (pipeline sends) could never fill a full window. What it shares with
    // the others is capacity taken by their frames at a constant rate (a
    // ring step's flows each carry a neighbour's ACKs on their data link) or
    // a queue that fills, which the mismatch rule below rejects on any
    // window. It is judged on a window of l/4 samples spanning l/8
    // acknowledgements each. Its own first cut, or any other flow's, puts
    // every flow of the partition back on the full window.
    if (!fs.everCut && ccRateBps < fs.lineRate)
    {
        fs.everCut = true;
        for (uint32_t f : m_partitions.Get(m_partitions.PartitionOfFlow(flowId)).flows)
        {
            m_flows[f].calm = false;
        }
    }
    const bool quick = fs.calm;
    if (quick != fs.quick)
    {
        fs.quick = quick;
        fs.window.SetCapacity(quick ? std::max<uint32_t>(2, m_window / 4) : m_window);
    }
    const uint32_t span = quick ? std::max<uint32_t>(1, m_window / 8) : m_window;
    const uint64_t need = quick ? m_window / 4 + span : 2 * static_cast<uint64_t>(m_window);
    const double inflight = static_cast<double>(sentBytes) - static_cast<double>(ackedBytes);
    if (fs.window.Size() == 0)
    {
        fs.window.Push(m_currentTs, 0.0, ackedBytes, inflight);
        return;
    }
    const auto& oldest = fs.window.At(fs.window.Size() > span ? fs.window.Size() - span : 0);
    if (m_currentTs <= oldest.timeNs)
    {
        return;
    }
    const double rate =
        static_cast<double>(ackedBytes - oldest.acked) * 8e9 / static_cast<double>(m_currentTs - oldest.timeNs);
    const double delivered = static_cast<double>(ackedBytes - oldest.acked);
    const double mismatch =
        delivered > 0 ? std::abs(inflight - oldest.inflight) / delivered : 1.0; // nothing delivered: all mismatch
    fs.window.Push(m_currentTs, rate, ackedBytes, inflight, mismatch);
    ++fs.settle;
    if (!fs.indexRequested && !m_indexAll && fs.HalfWindow()) [[unlikely]]
    {
        fs.indexRequested = true; // a fast-forward may come (IndexFor)
        IndexLinks(m_partitions.PartitionOfFlow(flowId));
    }
    // Steady needs a window of samples that each span their share of
    // acknowledgements, l/4 of them taken since the partition last changed.
    if (fs.window.Pushed() < need || 4 * fs.settle < m_window)
    {
        return;
    }
    const uint32_t partition = m_partitions.PartitionOfFlow(flowId);
    PartitionState& st = StateOf(partition);
    // A flat delivered rate is an equilibrium only if the flow sends what it
    // delivers: over the window's samples, the sending rate over each
    // sample's span matched its delivered rate to theta on average (its
    // in-flight bytes came back to where they were). A fixed point does; so does a limit
    // cycle the samples span whole periods of. A queue filling or draining
    // under a flat delivered rate (the full-link phase of a congestion cycle
    // longer than the samples, or a loop slower than them at long RTTs) does
    // not: the link delivers its capacity while the cycle's mean rate is far
    // lower (docs/fast-forward.md).
    const bool steady = fs.window.Spread() < m_theta && fs.window.MeanMismatch() <= m_theta;
    NoteSteadiness(st, fs, steady, fs.window.Spread(), fs.window.MeanMismatch()); // why-not
    if (steady != fs.steady)
    {
        fs.steady = steady;
        st.steadyFlows += steady ? 1 : -1;
    }
    if (steady && !fs.anchorFinal)
    {
        // Measure R-hat from the start of the first steady window, if that
        // lies after the change: the transient before it is not the rate.
        const auto& first = fs.window.Oldest();
        if (first.timeNs > fs.anchorTime)
        {
            fs.anchorTime = first.timeNs;
            fs.anchorAcked = first.acked;
            fs.anchorCredited = fs.credited;
        }
        fs.anchorFinal = true;
    }
    if (steady && !st.locked && !st.skipping && m_currentTs >= st.retryAfter &&
        st.steadyFlows == m_partitions.Get(partition).flows.size())
    {
        TryFastForward(partition);
    }
}

double
WormholeSimulatorImpl::SpreadSinceAnchor(const FlowState& fs) const
{
    // How noisy the rate is now: the delivered rate over four equal slices
    // of the time since the last change (the window's own samples each
    // reach l acknowledgements back, across the change: a neighbour's ACKs
    // joining a link take 6% from a flow at line rate).
    uint32_t first = fs.window.Size();
    while (first > 0 && fs.window.At(first - 1).timeNs >= fs.anchorTime)
    {
        --first;
    }
    const uint32_t n = fs.window.Size() - first;
    if (n < 8)
    {
        return fs.window.Spread();
    }
    const auto& a = fs.window.At(first);
    const auto& z = fs.window.Newest();
    double lo = std::numeric_limits<double>::infinity();
    double hi = 0;
    uint32_t k = first;
    uint64_t t0 = a.timeNs;
    uint64_t b0 = a.acked;
    for (int slice = 1; slice <= 4; ++slice)
    {
        const uint64_t until = a.timeNs + (z.timeNs - a.timeNs) * slice / 4;
        k = fs.window.Seek(until, k);
        const auto& e = fs.window.At(k);
        if (e.timeNs <= t0)
        {
            return fs.window.Spread();
        }
        const double rate = static_cast<double>(e.acked - b0) / static_cast<double>(e.timeNs - t0);
        lo = std::min(lo, rate);
        hi = std::max(hi, rate);
        t0 = e.timeNs;
        b0 = e.acked;
    }
    const double mean = static_cast<double>(z.acked - a.acked) / static_cast<double>(z.timeNs - a.timeNs);
    return mean > 0 ? (hi - lo) / mean : fs.window.Spread();
}

bool
WormholeSimulatorImpl::WorkConserving(const std::vector<std::pair<uint32_t, double>>& rates) const
{
    if (!FlowSeam::creditor)
    {
        return true; // a model that cannot tell capacities: trust the window
    }
    // Each direction of a link is its own port: the load that can hold a
    // flow back is the data leaving through its egress ports, plus the
    // acknowledgements of the flows whose data crosses the same link the
    // other way (they leave through this port). Summed over a whole cable,
    // two flows going opposite ways at 30 Gb/s each looked like a full 60
    // of its 100 on either side, and HPCC's flows on a fat-tree, climbing
    // by their additive increase towards ports they had not filled yet,
    // were credited their climb: one ended 7.3% early, beyond anything its
    // reference's reruns did (docs/fast-forward.md, rule 3).
    const auto ports = DataPortLoads(rates);
    struct Cable
    {
        double acks = 0;  ///< acknowledgements of every flow whose data crosses it
        size_t flows = 0; ///< flows whose data crosses it, either way
    };
    std::unordered_map<uint32_t, Cable> cables;
    for (const auto& [key, port] : ports)
    {
        Cable& cable = cables[port.link];
        cable.acks += port.acks;
        cable.flows += port.crossing;
    }
    for (const auto& [flow, rate] : rates)
    {
        const FlowState& fs = m_flows.at(flow);
        double line = 0;
        double own = 0;
        FlowSeam::creditor->GetLinkCapacity(fs.firstLink, line, own);
        // At line rate by what it delivered, the rate a skip credits, and to
        // the flat tolerance (theta/5, as UntilCompletionFlat): a flow that
        // nothing holds back delivers its line rate exactly once it is
        // there. A CC rate back at line rate says nothing of a window that
        // averaged the climb to it, and a climb by DCQCN's additive increase
        // (recovering from a cut at a transit port's burst) is flat within
        // theta over a window: credited at theta below line rate, the flow
        // ended 2.2% late where its reference climbed on.
        if (rate >= (1 - 0.2 * m_theta) * own)
        {
            continue;
        }
        // Held back at a full port: one other flows share (their data, or
        // their acknowledgements coming back the other way), or one
        // narrower than its own line. A port it is alone on, no narrower,
        // holds it back only by its line rate, judged just above; counted as
        // full within theta, its own host link let that climb through.
        bool bottlenecked = false;
        for (const auto& [key, lineBps] : fs.dataPorts)
        {
            const MeasuredPort& port = ports.at(key);
            const Cable& cable = cables.at(port.link);
            const double load = port.load + cable.acks - port.acks; // the other direction's acknowledgements
            const bool shared = cable.flows > 1;
            if (load >= (1 - m_theta) * port.capacity && (shared || port.capacity < (1 - 0.2 * m_theta) * own))
            {
                bottlenecked = true;
                break;
            }
        }
        if (!bottlenecked)
        {
            return false;
        }
    }
    return true;
}

NoSkip
WormholeSimulatorImpl::ControlMoved(const std::vector<std::pair<uint32_t, double>>& rates,
                                    const std::vector<bool>& pooled)
{
    // A flow's R-hat is what its ACKs brought back, a round trip after it
    // was sent. A controller that has just moved its flow well away from
    // that (by more than theta: its rate on the wire against the payload it
    // delivered) will deliver otherwise from a round trip on, whatever its
    // window looked like.
    // - Cut below it: on 50 us links a TIMELY flow cut from 100 to 52 Gb/s
    //   went on delivering 88 for 400 us, and a skip taken there credited 88
    //   and ended it 3.9% early.
    // - Raised above it (its payload share of the CC rate, below line rate):
    //   HPCC's flows of a permutation on 20 us links still climb towards
    //   UTarget once a round trip; two that had just been raised to 89 Gb/s
    //   (81.7 of payload) had delivered 75, a skip credited 75 for 213 us,
    //   the reference's delivered their new rate, and both ended 1.3% late.
    //   A flow at its line rate is not held to this: a ring's flows send at
    //   line rate and deliver 6% less, their data link also carrying a
    //   neighbour's acknowledgements.
    // A flow that shares a full data port with others is exempt, pooled or
    // not: the port's capacity, not one member's controller, sets what they
    // deliver together, and DCQCN cuts its members in turn all the time
    // (refused there, the cuts kept a DCQCN pair from being skipped or
    // recorded at all).
    std::unordered_map<uint64_t, MeasuredPort> ports; // counted only once some flow has moved
    NoSkip moved = NoSkip::kCount;
    for (size_t i = 0; i < rates.size(); ++i)
    {
        FlowState& fs = m_flows.at(rates[i].first);
        if ((i < pooled.size() && pooled[i]) || !(fs.ccRate > 0))
        {
            continue;
        }
        const double rhat = rates[i].second;
        const bool cut = fs.ccRate < (1 - m_theta) * rhat;
        bool raised = false;
        if (!cut && fs.ccRate < fs.lineRate && FlowSeam::creditor && fs.lineRate > 0)
        {
            const double payloadShare = FlowSeam::creditor->GetQueueDrainBps(fs.firstLink) / fs.lineRate;
            raised = fs.ccRate * payloadShare > (1 + m_theta) * rhat;
        }
        if (!cut && !raised)
        {
            continue;
        }
        if (ports.empty())
        {
            ports = DataPortLoads(rates);
        }
        // A raise is judged only where the flow shares no data port its
        // flows' line rates could fill: at such a port what it delivers is
        // divided with flows whose controllers move too, and the port
        // decides, not the raise. Judged there too, TIMELY's pair joined on
        // 5 us links (whose rates swing about the port's share as part of
        // their cycle) came out 1.4% early over 16 phases of the join, where
        // it is unbiased without.
        const bool shared = std::any_of(fs.dataPorts.begin(), fs.dataPorts.end(), [&](const auto& dp) {
            const MeasuredPort& p = ports[dp.first];
            return p.crossing > 1 && (p.Full(m_theta) || (raised && p.lines >= dp.second));
        });
        if (shared)
        {
            continue;
        }
        // Its R-hat no longer measures what it will deliver either: it is
        // measured anew from the next steady window after now (the anchor is
        // otherwise final once set, and an R-hat reaching back to before the
        // cut credits the old level: the permutation's flows on 20 us links,
        // steady at 74.8 Gb/s, were credited 82.2 and ended 1.7% early).
        fs.anchorFinal = false;
        fs.AnchorAt(m_currentTs);
        if (moved == NoSkip::kCount || cut)
        {
            moved = cut ? NoSkip::kSlowing : NoSkip::kRising;
        }
    }
    return moved;
}

} // namespace ns3
