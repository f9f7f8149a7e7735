// WormholeSimulatorImpl, memo record (Wormhole §4.2): a pattern that missed
// is stored once its transient ends, in a steady state or in the completion
// of one of its flows: duration, bytes and converged rate of each flow, CC
// state and the switch queues at the end, and its course: checkpoints of the
// same through the transient.
#include "wormhole-simulator-impl.h"

#include "ns3/log.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeMemoRecord");

using wormhole::FlowSeam;

namespace
{
/// The course's first spacing; it doubles as the transient runs on.
constexpr uint64_t kFirstCourseStepNs = 1000;
} // namespace

uint64_t
WormholeSimulatorImpl::ScheduledOnLinks(uint32_t partition) const
{
    uint64_t n = 0;
    for (uint32_t link : m_partitions.Get(partition).links)
    {
        n += link < m_linkEvents.size() ? m_linkEvents[link].scheduled : 0;
    }
    return n;
}

void
WormholeSimulatorImpl::MemoStartRecording(uint32_t partition, wormhole::MemoKey key)
{
    // A miss: the pattern as it formed, stored when it turns steady or when
    // one of its flows completes first (unless a record of that kind is in
    // the store by then).
    PartitionState& st = StateOf(partition);
    const auto& flows = m_partitions.Get(partition).flows;
    m_stats.memoMisses++;
    st.memoPending = true;
    st.fcg = std::move(key.graph);
    st.fcgEnding = key.fresh ? wormhole::FlowConflictGraph{} : std::move(key.ending);
    st.fcgFlows = flows;
    st.formedAt = m_currentTs;
    st.eventsAtFormation = ScheduledOnLinks(partition);
    st.deliveredAtFormation.clear();
    for (uint32_t f : flows)
    {
        const FlowState& fs = m_flows[f];
        st.deliveredAtFormation.push_back(static_cast<double>(fs.acked) + static_cast<double>(fs.credited));
    }
    st.course.clear();
    st.course.push_back(MemoSnapshot(partition));
    st.courseStep = kFirstCourseStepNs;
}

wormhole::MemoCheckpoint
WormholeSimulatorImpl::MemoSnapshot(uint32_t partition) const
{
    const PartitionState& st = m_partitionState[partition];
    wormhole::MemoCheckpoint c;
    c.atNs = static_cast<int64_t>(m_currentTs - st.formedAt);
    const size_t n = st.fcgFlows.size();
    c.bytes.reserve(n);
    c.inFlight.reserve(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        const FlowState& fs = m_flows.at(st.fcgFlows[i]);
        c.bytes.push_back(std::max(0.0, static_cast<double>(fs.acked) + static_cast<double>(fs.credited) -
                                            st.deliveredAtFormation[i]));
        c.inFlight.push_back(static_cast<double>(FlowSeam::creditor->GetFlowInFlight(st.fcgFlows[i])));
        c.cc.Append(FlowSeam::creditor->SaveFlowState(st.fcgFlows[i]));
        DataPathBacklog(st.fcgFlows[i], fs, c.backlog);
    }
    // Up to 2K checkpoints of a pending pattern are held, and a stored
    // record's for the rest of the run: no slack.
    c.cc.ShrinkToFit();
    c.backlog.ShrinkToFit();
    return c;
}

void
WormholeSimulatorImpl::DataPathBacklog(uint32_t flowId, const FlowState& fs, wormhole::RaggedRows& into) const
{
    // A checkpoint is taken at acknowledgements all through a pattern's
    // transient, whether or not it is ever stored: reading the ports named
    // at the flow's start by key spares walking its route again each time
    // (the route is the same until FlowRerouted names it anew). Host NIC
    // hops have no switch queue.
    if (fs.dataPortsWhole)
    {
        std::span<double> backlog = into.Append(fs.dataPorts.size());
        size_t h = 0;
        for (const auto& [key, line] : fs.dataPorts)
        {
            backlog[h++] = key & FlowState::kNicPortBit ? 0.0 : static_cast<double>(FlowSeam::creditor->GetPortBacklog(key));
        }
        return;
    }
    std::vector<std::pair<uint64_t, uint64_t>> hops;
    FlowSeam::creditor->GetPathBacklog(flowId, hops);
    std::span<double> backlog = into.Append(hops.size());
    for (size_t h = 0; h < hops.size(); ++h)
    {
        backlog[h] = static_cast<double>(hops[h].second);
    }
}

void
WormholeSimulatorImpl::MemoTrace(uint32_t flowId)
{
    // The course is sampled at acknowledgements at least courseStep apart.
    // Its length is not known until it ends, so the spacing adapts: when
    // 2K checkpoints are held every other one is dropped and the spacing
    // doubles. At the end between K and 2K remain, at most T/K apart (plus
    // one acknowledgement interval), K = kCourseSpacing: what a hit cut
    // short at an unforeseen join can lag the reference by (docs/memo.md).
    const uint32_t partition = m_partitions.PartitionOfFlow(flowId);
    if (partition == wormhole::PartitionTracker::kNone || partition >= m_partitionState.size())
    {
        return;
    }
    PartitionState& st = m_partitionState[partition];
    if (!st.memoPending || st.course.empty() ||
        m_currentTs - st.formedAt < static_cast<uint64_t>(st.course.back().atNs) + st.courseStep ||
        st.fcgFlows != m_partitions.Get(partition).flows)
    {
        return;
    }
    st.course.push_back(MemoSnapshot(partition));
    if (st.course.size() > 2 * wormhole::kCourseSpacing)
    {
        wormhole::MemoCourse kept;
        for (size_t k = 0; k < st.course.size(); k += 2)
        {
            kept.push_back(std::move(st.course[k]));
        }
        st.course.swap(kept);
        st.courseStep *= 2;
    }
}

void
WormholeSimulatorImpl::MemoRecordTransient(uint32_t partition,
                                           const std::vector<std::pair<uint32_t, double>>& rates)
{
    MemoRecord(partition, -1, [&](uint32_t i, uint32_t f, const FlowState&) {
        return rates[i].first == f ? rates[i].second : 0.0;
    });
}

void
WormholeSimulatorImpl::MemoRecordCompletion(uint32_t partition, uint32_t flowId)
{
    const PartitionState& st = StateOf(partition);
    const auto it = std::find(st.fcgFlows.begin(), st.fcgFlows.end(), flowId);
    if (it == st.fcgFlows.end())
    {
        return;
    }
    // No steady rate was ever measured: each flow's mean rate over the
    // transient (what a hit's margin before the completion is sized by).
    const double ns = static_cast<double>(m_currentTs - st.formedAt);
    if (ns < static_cast<double>((m_minSkip + m_completionMargin).GetNanoSeconds()))
    {
        StateOf(partition).memoPending = false;
        return; // too short to be worth skipping next time
    }
    MemoRecord(partition, static_cast<int32_t>(it - st.fcgFlows.begin()),
               [&](uint32_t i, uint32_t, const FlowState& fs) {
                   const double delivered = static_cast<double>(fs.acked) + static_cast<double>(fs.credited) -
                                            st.deliveredAtFormation[i];
                   return ns > 0 ? delivered * 8e9 / ns : 0.0;
               });
}

void
WormholeSimulatorImpl::MemoRecord(uint32_t partition,
                                  int32_t completes,
                                  const std::function<double(uint32_t, uint32_t, const FlowState&)>& rateOf)
{
    MaterializeMemoKey(partition); // back-off: a key deferred at formation
    PartitionState& st = StateOf(partition);
    st.memoPending = false;
    if (st.fcgFlows != m_partitions.Get(partition).flows)
    {
        return; // the partition changed without a formation call: not this pattern
    }
    wormhole::MemoRecord r;
    r.fcg = completes < 0 || st.fcgEnding.vertexLabel.empty() ? st.fcg : st.fcgEnding;
    r.completes = completes;
    r.transientNs = static_cast<int64_t>(m_currentTs - st.formedAt);
    r.transientEvents = ScheduledOnLinks(partition) - st.eventsAtFormation;
    for (uint32_t i = 0; i < st.fcgFlows.size(); ++i)
    {
        const uint32_t f = st.fcgFlows[i];
        const FlowState& fs = m_flows[f];
        r.bytes.push_back(static_cast<double>(fs.acked) + static_cast<double>(fs.credited) -
                          st.deliveredAtFormation[i]);
        r.rate.push_back(rateOf(i, f, fs));
        r.cc.Append(FlowSeam::creditor->SaveFlowState(f));
        // A window too short to measure has an infinite spread: not flat.
        // Stored as the largest spread a store loads (MemoStore::Plausible),
        // it means the same and the record is not dropped as corrupt when a
        // later run loads it (HPCC on 50 us links wrote three such).
        r.spread = std::max(r.spread, std::min(SpreadSinceAnchor(fs), 1e3));
        DataPathBacklog(f, fs, r.backlog);
    }
    r.cc.ShrinkToFit();
    r.backlog.ShrinkToFit();
    // The course ends in the record's end state.
    wormhole::MemoCheckpoint end;
    end.atNs = r.transientNs;
    end.bytes = r.bytes;
    end.cc = r.cc;
    end.backlog = r.backlog;
    for (uint32_t f : st.fcgFlows)
    {
        end.inFlight.push_back(static_cast<double>(FlowSeam::creditor->GetFlowInFlight(f)));
    }
    if (!st.course.empty() && st.course.back().atNs >= end.atNs)
    {
        st.course.pop_back(); // taken at this very time
    }
    st.course.push_back(std::move(end));
    r.course = std::make_shared<const wormhole::MemoCourse>(std::move(st.course));
    st.course.clear();
    // A pattern's outcome may be a random draw (DCQCN under probabilistic
    // ECN marking): it keeps up to MemoConfirmations occurrences of each
    // kind, simulated packet by packet, and none is replayed until that
    // many agree (memo-match.h). Kinds: steady, and ending in the completion
    // of a flow of one size (which of several alike flows ends it first is
    // a coin flip in symmetric patterns, so not the mapping). Partitions of
    // one collective that form the pattern at once each add an occurrence.
    uint32_t alike = 0;
    wormhole::MemoStore::Global().Visit(r.fcg, [&](const wormhole::MemoRecord& other, const std::vector<uint32_t>&) {
        if (completes < 0)
        {
            alike += other.completes < 0 ? 1 : 0;
        }
        else if (other.completes >= 0)
        {
            const double mine = r.bytes[completes];
            alike += std::abs(other.bytes[other.completes] - mine) <= std::max(4000.0, 0.002 * mine) ? 1 : 0;
        }
        return alike >= m_memoConfirmations;
    });
    if (alike >= m_memoConfirmations)
    {
        return;
    }
    r.occurrence = alike;
    wormhole::MemoStore::Global().Insert(std::move(r));
    m_stats.memoInserts++;
}

} // namespace ns3
