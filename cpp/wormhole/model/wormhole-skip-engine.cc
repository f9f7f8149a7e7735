// WormholeSimulatorImpl, skip engine (Wormhole §6.2-6.3): fast-forwards a
// steady partition by shifting its events and crediting each flow R-hat x dT
// bytes; bounds the skip by completions, drift and known joins; and skips a
// partition back (events back, credit taken back) when something from outside
// touches it before its skip ends.
#include "wormhole-simulator-impl.h"

#include "ns3/log.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeSkipEngine");

using wormhole::FlowSeam;

namespace
{
/// How far R-hat may sit from the line-rate payload rate for a flow to count
/// as sending back to back: a frame's worth of acknowledgement timing over
/// the shortest steady window (l/4 samples of l/8 acknowledgements).
constexpr double kBackToBackTolerance = 1e-3;
} // namespace

bool
WormholeSimulatorImpl::IsSkipping(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    if (st.skipping && m_currentTs >= st.skipEnd)
    {
        st.skipping = false; // the skip ran its course
        --m_activeSkips;
    }
    return st.skipping;
}

void
WormholeSimulatorImpl::SkipBack(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    const int64_t back = static_cast<int64_t>(st.skipEnd - m_currentTs);
    NS_LOG_INFO("skip-back partition " << partition << " by " << back << " ns");
    st.skipping = false;
    --m_activeSkips;
    st.pendingRestore.Cancel(); // a memo hit's end state: MemoCutShort restores its own
    ShiftPartition(partition, -back);
    BeginCredit();
    if (st.memoCut)
    {
        MemoCutShort(partition, back); // a memo hit's: resume mid-way through its stored course
    }
    else
    {
        for (const auto& [flow, rate] : st.creditRates)
        {
            Credit(flow, -static_cast<int64_t>(rate * static_cast<double>(back) / 8e9), -back);
        }
    }
    st.creditRates.clear();
    if (st.relinkPending)
    {
        ScheduleRelink(partition, m_currentTs); // its hit ended here: its flows join now
    }
    m_stats.skipBacks++;
    m_stats.timeSkippedNs -= back;
    ResetPartition(partition);
    EndCredit();
}

int64_t
WormholeSimulatorImpl::Credit(uint32_t flow, int64_t bytes, int64_t dt)
{
    const int64_t taken = FlowSeam::creditor ? FlowSeam::creditor->CreditFlow(flow, bytes, dt) : bytes;
    if (auto it = m_flows.find(flow); it != m_flows.end())
    {
        it->second.credited += taken;
    }
    m_flowSkipped[flow] += dt;
    m_flowCredited[flow] += taken;
    NS_LOG_LOGIC("flow " << flow << ": offered " << bytes << " bytes, the model took " << taken);
    return taken;
}

void
WormholeSimulatorImpl::BeginCredit()
{
    ++m_crediting;
}

void
WormholeSimulatorImpl::EndCredit()
{
    if (--m_crediting > 0)
    {
        return;
    }
    // A completion ends the pattern: FlowFinished skips the partition back
    // to now (the credit that completed the flow stays with it) and
    // removes the flow.
    std::vector<uint32_t> finished;
    finished.swap(m_finishedWhileCrediting);
    for (uint32_t flow : finished)
    {
        FlowFinished(flow);
    }
}

void
WormholeSimulatorImpl::TryFastForward(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    if (uint64_t readyAt = 0; !IndexReady(partition, &readyAt))
    {
        NoteNoSkip(partition, NoSkip::kIndexing);
        st.retryAfter = readyAt;
        return;
    }
    const auto& flows = m_partitions.Get(partition).flows;
    const double marginNs = static_cast<double>(m_completionMargin.GetNanoSeconds());
    const double minSkip = static_cast<double>(m_minSkip.GetNanoSeconds());
    std::vector<std::pair<uint32_t, double>> rates;
    rates.reserve(flows.size());
    double untilCompletion = std::numeric_limits<double>::infinity();
    double untilDrift = std::numeric_limits<double>::infinity();
    uint64_t latestAnchor = 0;
    double spread = 0;
    double mismatch = 0; // the largest send/deliver mismatch of a flow's window
    std::vector<double> spreads; // each flow's, since its anchor
    spreads.reserve(flows.size());
    for (uint32_t flow : flows)
    {
        const FlowState& fs = m_flows[flow];
        // A flow that has been silent (paused, blocked) for a while has a
        // stale window: not steady in any useful sense.
        if (m_currentTs - fs.window.Newest().timeNs > static_cast<uint64_t>(minSkip))
        {
            NoteNoSkip(partition, NoSkip::kSilent);
            return;
        }
        // R-hat: payload delivered since the anchor (credit included) over
        // the time since. It includes header overhead, pauses and pacing
        // gaps, unlike the CC rate; and it averages over all the steady time
        // seen, not one window: per-flow shares under DCQCN wander by +-5%
        // from one millisecond to the next around a persistent mean.
        const double since = static_cast<double>(m_currentTs - fs.anchorTime);
        const double delivered = static_cast<double>(fs.acked - fs.anchorAcked) +
                                 static_cast<double>(fs.credited - fs.anchorCredited);
        const double rate = since > 0 ? delivered * 8e9 / since : 0;
        latestAnchor = std::max(latestAnchor, fs.anchorTime);
        spreads.push_back(SpreadSinceAnchor(fs));
        mismatch = std::max(mismatch, fs.window.MeanMismatch());
        spread = std::max(spread, spreads.back());
        if (rate <= 0)
        {
            NoteNoSkip(partition, NoSkip::kSilent);
            st.locked = true;
            return;
        }
        rates.emplace_back(flow, rate);
    }
    // A noisy partition's flows that stand alike at its full ports
    // (wormhole-share-estimate.cc): each flow's own R-hat is extrapolated
    // only as far as it was measured, the time since its anchor, over which
    // its deviation from the others was seen to hold. Beyond that, how long
    // a deviation lasts is not known, and by symmetry the flows' expected
    // shares are equal: each is credited the group's mean plus the
    // dispersion the group's bytes gain over that time (a draw). A group
    // whose port delivers its capacity has a sum no trend can move, and the
    // skip may run to the completions (docs/fast-forward.md).
    std::vector<double> shared(rates.size());   // the rate credited beyond the measured span
    std::vector<double> deviation(rates.size(), 0.0); // bytes per sqrt(ns) beyond it
    std::vector<bool> atCapacity(rates.size(), false);
    std::vector<double> measured(rates.size());  // ns since the flow's anchor
    for (size_t i = 0; i < rates.size(); ++i)
    {
        shared[i] = rates[i].second;
        measured[i] = static_cast<double>(m_currentTs - m_flows[rates[i].first].anchorTime);
    }
    // The drift bound below is for rates whose error grows with how far
    // they are extrapolated: every flow's but those of a group at capacity.
    double driftSpread = spread;
    if (m_poolShares && spread > 0.2 * m_theta)
    {
        PoolShares(partition, rates, shared, deviation, atCapacity);
        driftSpread = 0;
        for (size_t i = 0; i < rates.size(); ++i)
        {
            driftSpread = std::max(driftSpread, atCapacity[i] ? 0.0 : spreads[i]);
        }
    }
    // What flow i is credited over a skip of dt ns, in bytes.
    const auto creditOf = [&](size_t i, double dt) {
        const double own = std::min(dt, measured[i]);
        const double beyond = dt - own;
        return (rates[i].second * own + shared[i] * beyond) / 8e9 + deviation[i] * std::sqrt(beyond);
    };
    for (size_t i = 0; i < rates.size(); ++i)
    {
        const auto [flow, rate] = rates[i];
        const FlowState& fs = m_flows[flow];
        const double remaining = static_cast<double>(fs.bytes) - static_cast<double>(fs.acked) -
                                 static_cast<double>(fs.credited);
        const double margin = static_cast<double>(fs.sent - fs.acked) + rate * marginNs / 8e9;
        const double left = remaining - margin;
        double until = 0;
        if (left <= 0)
        {
            until = 0;
        }
        else if (creditOf(i, measured[i]) >= left)
        {
            until = left * 8e9 / rate;
        }
        else
        {
            // shared x + w sqrt(x) = what is left after the measured span: a
            // quadratic in sqrt(x).
            const double r = shared[i] / 8e9;
            const double w = deviation[i];
            const double rest = left - creditOf(i, measured[i]);
            const double root = (-w + std::sqrt(w * w + 4 * r * rest)) / (2 * r);
            until = measured[i] + root * root;
        }
        untilCompletion = std::min(untilCompletion, until);
    }
    // Extrapolate a noisy rate at most MaxExtrapolation times what was
    // simulated since the anchor; a flat one (a flow alone at line rate,
    // spread well under theta) is exact and needs no such bound.
    //
    // Flat means the flows' in-flight bytes are flat too, to the same
    // tolerance: the window's send/deliver mismatch (what lets it be steady
    // at all, below theta) under theta/5. A full port delivers its capacity
    // whatever its queue does, so rates look flat while a queue fills, and
    // the mismatch averaged over a window that is half filling, half idle
    // stays under theta. TIMELY's joined pair keeps such a cycle: the queue
    // climbs for about half of it while the port delivers its capacity, then
    // the flows cut and the port idles. Judged flat on the climb, a skip
    // credited the climb's rate to the completions, and both flows ended
    // early. Bounded like a noisy rate, the skips that follow measure
    // through the cycle (docs/fast-forward.md).
    const bool ratesFlat = spread <= 0.2 * m_theta;
    const bool flat = ratesFlat && mismatch <= 0.2 * m_theta;
    if (driftSpread > 0.2 * m_theta || (ratesFlat && !flat))
    {
        // Every skip re-anchors its flows at its end (BeginSkip), so the
        // time since the latest anchor was all simulated packet by packet.
        const auto observed = static_cast<double>(m_currentTs - latestAnchor);
        untilDrift = std::min(untilDrift, m_maxExtrapolation * observed);
    }
    NoSkip stalled = NoSkip::kNotWorkConserving; // why untilDrift is 0, if it is
    if (const NoSkip moved = ControlMoved(rates, atCapacity); moved != NoSkip::kCount)
    {
        untilDrift = 0;
        stalled = moved;
    }
    else if (!WorkConserving(rates))
    {
        // Still ramping towards capacity (DCQCN's additive increase after a
        // competitor left): a window can look flat while the rate climbs.
        untilDrift = 0;
    }
    else if (st.memoPending)
    {
        MemoRecordTransient(partition, rates);
    }
    // Flows that all send back to back at line rate repeat themselves with a
    // known period: skipping whole periods and crediting whole periods'
    // payload leaves them exactly where the packet-level run would be
    // (docs/fast-forward.md); R-hat x dT would leave them up to a frame off.
    // Such a credit has no extrapolation error for the completion margin to
    // absorb: each flow need only keep its frames in flight and one period
    // to send, and runs its completion packet by packet. A flat partition's
    // error is bounded by its spread (UntilCompletionFlat); only a noisy
    // one needs CompletionMargin at R-hat.
    std::vector<std::pair<uint64_t, uint64_t>> periods;
    uint64_t quantum = LineRateQuantum(rates, periods);
    bool driftLimited = false;
    bool joinLimited = false;
    double dt = 0;
    const auto bound = [&](double completion) {
        driftLimited = untilDrift < completion;
        dt = std::min(untilDrift, completion);
        // A flow known to start on the partition's links ends the skip there
        // (the paper's predetermined interrupts); an unforeseen one skips it back.
        const double untilJoin = UntilKnownJoin(partition, static_cast<double>(m_currentTs) + dt);
        joinLimited = untilJoin < dt;
        if (joinLimited)
        {
            dt = untilJoin;
            driftLimited = false;
        }
    };
    bound(quantum > 0 ? UntilCompletionExact(rates, periods)
          : flat      ? UntilCompletionFlat(rates, spread)
                      : untilCompletion);
    const double whole =
        quantum > 0 ? std::floor(dt / static_cast<double>(quantum)) * static_cast<double>(quantum) : 0;
    if (whole >= minSkip)
    {
        dt = whole;
    }
    else if (quantum > 0)
    {
        quantum = 0; // a period too long for this skip: credit R-hat x dT
        bound(flat ? UntilCompletionFlat(rates, spread) : untilCompletion);
    }
    if (!(dt >= minSkip))
    {
        if (driftLimited)
        {
            NoteNoSkip(partition, untilDrift > 0 ? NoSkip::kDriftLimited : stalled);
            // Still ramping, or extrapolated far enough for now: look again
            // after more time simulated packet by packet.
            const auto& w = m_flows[flows.front()].window;
            st.retryAfter = m_currentTs + std::max<uint64_t>((w.Newest().timeNs - w.Oldest().timeNs) / 4,
                                                             static_cast<uint64_t>(minSkip));
        }
        else
        {
            NoteNoSkip(partition, joinLimited ? NoSkip::kKnownJoin : NoSkip::kNearCompletion);
            // Too close to a completion to be worth it; wait for the change.
            st.locked = true;
        }
        return;
    }
    const auto skip = static_cast<int64_t>(dt);
    if (g_log.IsEnabled(LOG_LEVEL_DEBUG))
    {
        double total = 0;
        for (const auto& r : rates)
        {
            total += r.second;
        }
        NS_LOG_DEBUG("rates (Gbps): total " << total / 1e9 << " over " << rates.size() << " flows"
                                            << (driftLimited ? ", drift-limited" : ""));
    }
    NS_LOG_INFO("fast-forward partition " << partition << " (" << flows.size() << " flows) by "
                                          << skip << " ns at " << m_currentTs);
    ShiftPartition(partition, skip);
    BeginCredit();
    for (size_t i = 0; i < rates.size(); ++i)
    {
        auto& [flow, rate] = rates[i];
        const auto offer = static_cast<int64_t>(quantum > 0 ? WholePeriodsPayload(skip, periods[i])
                                                            : std::max(0.0, creditOf(i, static_cast<double>(skip))));
        const int64_t taken = Credit(flow, offer, skip);
        rate = static_cast<double>(taken) * 8e9 / static_cast<double>(skip); // what a skip-back takes back
    }
    BeginSkip(partition, skip, std::move(rates));
    PartitionState& after = StateOf(partition);
    // A skip that ends just before a completion or at a join leaves nothing
    // to gain until a flow leaves or joins; a drift-limited one may be
    // followed by another.
    after.locked = !driftLimited;
    m_stats.skipsToKnownStart += joinLimited ? 1 : 0;
    m_stats.fastForwards++;
    m_stats.timeSkippedNs += skip;
    EndCredit();
}

uint64_t
WormholeSimulatorImpl::LineRateQuantum(const std::vector<std::pair<uint32_t, double>>& rates,
                                       std::vector<std::pair<uint64_t, uint64_t>>& periods) const
{
    periods.clear();
    if (!FlowSeam::creditor)
    {
        return 0;
    }
    uint64_t quantum = 1;
    for (const auto& [flow, rate] : rates)
    {
        const FlowState& fs = m_flows.at(flow);
        uint64_t periodNs = 0;
        uint64_t payload = 0;
        if (fs.ccRate < fs.lineRate || !FlowSeam::creditor->GetLineRatePeriod(flow, periodNs, payload) ||
            periodNs == 0)
        {
            return 0;
        }
        // Back to back: R-hat is the frames' payload rate, to the timing
        // grain of the acknowledgements it was measured from. A flow held
        // below it (paused, sharing a bottleneck) is not periodic in this way.
        const double line = static_cast<double>(payload) * 8e9 / static_cast<double>(periodNs);
        if (std::abs(rate - line) > kBackToBackTolerance * line)
        {
            return 0;
        }
        quantum = std::lcm(quantum, periodNs);
        periods.emplace_back(periodNs, payload);
    }
    return quantum;
}

double
WormholeSimulatorImpl::UnsentBeyond(uint32_t flow, double pending) const
{
    const FlowState& fs = m_flows.at(flow);
    return static_cast<double>(fs.bytes) - static_cast<double>(fs.acked) - static_cast<double>(fs.credited) -
           static_cast<double>(FlowSeam::creditor->GetFlowInFlight(flow)) - pending;
}

double
WormholeSimulatorImpl::UntilCompletionExact(const std::vector<std::pair<uint32_t, double>>& rates,
                                            const std::vector<std::pair<uint64_t, uint64_t>>& periods,
                                            const std::vector<double>& pending) const
{
    double until = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < rates.size(); ++i)
    {
        const uint32_t flow = rates[i].first;
        const auto [periodNs, payload] = periods[i];
        const double unsent = UnsentBeyond(flow, pending.empty() ? 0.0 : pending[i]);
        // Whole periods that leave at least one period's payload unsent.
        const double whole = std::floor(unsent / static_cast<double>(payload)) - 1;
        until = std::min(until, std::max(0.0, whole) * static_cast<double>(periodNs));
    }
    return until;
}

double
WormholeSimulatorImpl::UntilCompletionFlat(const std::vector<std::pair<uint32_t, double>>& rates,
                                           double spread,
                                           const std::vector<double>& pending) const
{
    // Every window of the flow's, spanning its samples' acknowledgements,
    // delivered within `spread` of the mean: extrapolated over any span,
    // the rate credits within `spread` of what the flow delivers, give or
    // take one frame at each end of the measurement. A noisy partition
    // (spread near theta) keeps CompletionMargin instead.
    double until = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < rates.size(); ++i)
    {
        const auto [flow, rate] = rates[i];
        const double frame = static_cast<double>(FlowSeam::creditor->GetFramePayload(flow));
        const double unsent = UnsentBeyond(flow, pending.empty() ? 0.0 : pending[i]) - 2 * frame;
        until = rate > 0 ? std::min(until, std::max(0.0, unsent) * 8e9 / (rate * (1 + spread))) : 0;
    }
    return until;
}

void
WormholeSimulatorImpl::BeginSkip(uint32_t partition, int64_t skip, std::vector<std::pair<uint32_t, double>> rates)
{
    // The windows now straddle a gap of dT without progress: start them
    // afresh, and measure the next R-hat only from when the partition
    // resumes. Under DCQCN each flow's share wanders around a slowly moving
    // mean; estimates from successive stretches err independently and
    // average out over many skips, where one long-run average would carry
    // the early unfairness into every later skip.
    ClearWindows(partition);
    const uint64_t end = m_currentTs + static_cast<uint64_t>(skip);
    for (uint32_t flow : m_partitions.Get(partition).flows)
    {
        m_flows[flow].AnchorAt(end);
    }
    PartitionState& st = StateOf(partition);
    st.memoCut.reset(); // a memo hit sets its own after this
    DropDeferredHit(partition); // the skip moves the partition off the stored course
    st.creditRates = std::move(rates); // what a skip-back takes back
    st.skipping = true;
    st.skipEnd = end;
    ++m_activeSkips;
}

} // namespace ns3
