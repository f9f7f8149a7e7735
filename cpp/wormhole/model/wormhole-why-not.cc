// WormholeSimulatorImpl, why not faster: the kernel's account of what it did
// not skip and why, and of the partitions it formed. Each contention pattern
// of a partition (an "episode": from one change of its flows to the next)
// that ends without a skip is booked under the last reason that held it back,
// with the simulated time it lasted; each memo lookup that found nothing to
// apply, under why. Nothing here runs per event; the per-ACK part is one
// inline comparison (NoteSteadiness). See docs/why-not.md.
#include "wormhole-simulator-impl.h"

#include "bottleneck.h"
#include "memo-match.h"
#include "memo-store.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace ns3
{

const char*
NoSkipName(NoSkip reason)
{
    switch (reason)
    {
    case NoSkip::kShort:
        return "short";
    case NoSkip::kNeverSteady:
        return "never_steady";
    case NoSkip::kNotWorkConserving:
        return "not_work_conserving";
    case NoSkip::kNearCompletion:
        return "near_completion";
    case NoSkip::kKnownJoin:
        return "known_join";
    case NoSkip::kDriftLimited:
        return "drift_limited";
    case NoSkip::kSilent:
        return "silent";
    case NoSkip::kIndexing:
        return "indexing";
    case NoSkip::kSlowing:
        return "slowing";
    case NoSkip::kRising:
        return "rising";
    case NoSkip::kCount:
        break;
    }
    return "?";
}

const char*
MemoMissName(MemoMiss reason)
{
    switch (reason)
    {
    case MemoMiss::kNoRecord:
        return "no_record";
    case MemoMiss::kUnconfirmed:
        return "unconfirmed";
    case MemoMiss::kDisagree:
        return "disagree";
    case MemoMiss::kDoesNotFit:
        return "does_not_fit";
    case MemoMiss::kRefused:
        return "refused";
    case MemoMiss::kCount:
        break;
    }
    return "?";
}

namespace
{
// Under which reason an unskipped episode is counted. A flow whose full
// window is judged unsteady at the end outranks a refusal noted earlier (the
// partition fell out of steadiness after it); no judgement at all means some
// flow never had enough acknowledgements for a window.
NoSkip
ReasonOf(uint32_t judgedFlows, uint32_t steadyFlows, NoSkip last)
{
    return judgedFlows > steadyFlows ? NoSkip::kNeverSteady : last;
}
} // namespace

void
WormholeSimulatorImpl::OpenEpisode(uint32_t partition)
{
    CloseEpisode(partition);
    PartitionState& st = StateOf(partition);
    const auto& part = m_partitions.Get(partition);
    st.peakFlows = std::max<uint32_t>(st.peakFlows, part.flows.size());
    st.peakLinks = std::max<uint32_t>(st.peakLinks, part.links.size());
    if (part.flows.size() > st.peakCoupledFlows && !st.coupledPending)
    {
        // Measured once simulated time moves on, on the flows that stand
        // then: the 48 flows of an all-to-all start one by one at one
        // instant, and their 47 passing subsets are patterns of no duration
        // (not booked either, CloseEpisode).
        st.coupledPending = true;
        m_coupledPending.push_back(partition);
    }
    m_maxAlive = std::max<uint64_t>(m_maxAlive, m_partitions.AliveCount());
    st.episodeOpen = true;
    st.episodeSkipped = false;
    st.episodeStart = m_currentTs;
    st.why = NoSkip::kShort;
    st.whySince = m_currentTs;
    st.episodeTime.fill(0);
    st.judgedFlows = 0;
    st.closestSpread = std::numeric_limits<double>::infinity();
    st.closestMismatch = std::numeric_limits<double>::infinity();
    for (uint32_t flow : part.flows)
    {
        if (auto it = m_flows.find(flow); it != m_flows.end())
        {
            it->second.judged = false;
        }
    }
}

uint32_t
WormholeSimulatorImpl::LargestCoupledGroup(uint32_t partition) const
{
    // Only data hops count. Without a model to name ports and capacities,
    // every shared link joins (the partition as it is).
    const auto& flows = m_partitions.Get(partition).flows;
    const auto n = static_cast<uint32_t>(flows.size());
    if (n < 2 || !wormhole::FlowSeam::creditor)
    {
        return n;
    }
    struct Use
    {
        uint64_t port;
        double line;
        uint32_t flow;
    };
    std::vector<Use> uses;
    uses.reserve(4 * n);
    std::vector<double> lineRate;
    lineRate.reserve(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        const FlowState& fs = m_flows.at(flows[i]);
        lineRate.push_back(fs.lineRate);
        for (const auto& [port, line] : fs.dataPorts)
        {
            uses.push_back({port, line, i});
        }
    }
    std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) { return a.port < b.port; });
    wormhole::LinkLoads ports;
    ports.capacity.reserve(uses.size());
    ports.start.reserve(uses.size() + 1);
    ports.flows.reserve(uses.size());
    for (size_t u = 0; u < uses.size(); ++u)
    {
        if (u == 0 || uses[u].port != uses[u - 1].port)
        {
            ports.AddLink(uses[u].line);
        }
        ports.AddFlow(uses[u].flow);
    }
    const std::vector<bool> contended = wormhole::CanBeBottleneck(ports, lineRate);
    std::vector<uint32_t> root(n);
    std::iota(root.begin(), root.end(), 0u);
    auto find = [&root](uint32_t v) {
        while (root[v] != v)
        {
            v = root[v] = root[root[v]];
        }
        return v;
    };
    for (size_t p = 0; p < ports.Size(); ++p)
    {
        if (!contended[p])
        {
            continue;
        }
        const uint32_t first = ports.flows[ports.start[p]];
        for (uint32_t k = ports.start[p] + 1; k < ports.start[p + 1]; ++k)
        {
            root[find(ports.flows[k])] = find(first);
        }
    }
    std::vector<uint32_t> size(n, 0);
    uint32_t largest = 0;
    for (uint32_t v = 0; v < n; ++v)
    {
        largest = std::max(largest, ++size[find(v)]);
    }
    return largest;
}

void
WormholeSimulatorImpl::SettleCoupledGroups()
{
    for (uint32_t partition : m_coupledPending)
    {
        PartitionState& st = StateOf(partition);
        st.coupledPending = false;
        if (m_partitions.Get(partition).alive && m_partitions.Get(partition).flows.size() > st.peakCoupledFlows)
        {
            st.peakCoupledFlows = std::max(st.peakCoupledFlows, LargestCoupledGroup(partition));
        }
    }
    m_coupledPending.clear();
}

void
WormholeSimulatorImpl::CloseEpisode(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    if (!st.episodeOpen)
    {
        return;
    }
    st.episodeOpen = false;
    if (st.episodeSkipped || m_currentTs == st.episodeStart)
    {
        return; // skipped, or replaced at once (flows of a collective starting together)
    }
    const NoSkip why = ReasonOf(st.judgedFlows, st.steadyFlows, st.why);
    m_stats.noSkipPartitions[static_cast<size_t>(why)]++;
    st.episodeTime[static_cast<size_t>(st.why)] += static_cast<int64_t>(m_currentTs - st.whySince);
    for (size_t i = 0; i < kNoSkipReasons; ++i)
    {
        m_stats.noSkipTimeNs[i] += st.episodeTime[i];
    }
    if (why == NoSkip::kNeverSteady && std::max(st.closestSpread, st.closestMismatch) <
                                           std::max(m_stats.neverSteadySpread, m_stats.neverSteadyMismatch))
    {
        m_stats.neverSteadySpread = st.closestSpread;
        m_stats.neverSteadyMismatch = st.closestMismatch;
    }
}

void
WormholeSimulatorImpl::AddPartitionStats(WormholeKernelStats& s) const
{
    for (uint32_t id = 0; id < m_partitionState.size(); ++id)
    {
        const PartitionState& st = m_partitionState[id];
        if (st.peakFlows == 0)
        {
            continue; // an id the tracker never handed out to a flow
        }
        s.partitionsCreated++;
        s.partitionLargestFlows = std::max<uint64_t>(s.partitionLargestFlows, st.peakFlows);
        s.partitionLargestLinks = std::max<uint64_t>(s.partitionLargestLinks, st.peakLinks);
        s.partitionFlowsLog2[std::min<size_t>(std::bit_width(st.peakFlows) - 1, s.partitionFlowsLog2.size() - 1)]++;
        // A partition that grew at the instant the run was read at counts as it stands.
        const uint32_t pending =
            st.coupledPending && m_partitions.Get(id).alive ? LargestCoupledGroup(id) : 0;
        const uint32_t coupled = std::max<uint32_t>({1, st.peakCoupledFlows, pending});
        s.coupledLargestFlows = std::max<uint64_t>(s.coupledLargestFlows, coupled);
        s.coupledFlowsLog2[std::min<size_t>(std::bit_width(coupled) - 1, s.coupledFlowsLog2.size() - 1)]++;
        // A pattern still running (the run was stopped, or is being read
        // live) counts as far as it got.
        if (st.episodeOpen && !st.episodeSkipped && m_currentTs > st.episodeStart && m_partitions.Get(id).alive)
        {
            s.noSkipPartitions[static_cast<size_t>(ReasonOf(st.judgedFlows, st.steadyFlows, st.why))]++;
            for (size_t i = 0; i < kNoSkipReasons; ++i)
            {
                s.noSkipTimeNs[i] += st.episodeTime[i];
            }
            s.noSkipTimeNs[static_cast<size_t>(st.why)] += static_cast<int64_t>(m_currentTs - st.whySince);
        }
    }
    s.partitionsMaxAlive = m_maxAlive;
}

void
WormholeSimulatorImpl::NoteMemoMiss(const wormhole::MemoMatch& match, const wormhole::MemoKey& key)
{
    MemoMiss why = MemoMiss::kNoRecord;
    if (match.steady || match.ends || match.flat)
    {
        why = MemoMiss::kRefused;
    }
    else
    {
        // Look again, counting what the store holds of this pattern. Visit
        // returns at once when no record has the pattern's hash, the common
        // miss; otherwise this repeats the lookup's isomorphism tests, which
        // stop after a few records of each kind.
        const wormhole::MemoStore& store = wormhole::MemoStore::Global();
        std::vector<const wormhole::MemoRecord*> steadies;
        std::vector<const wormhole::MemoRecord*> endings;
        auto collect = [&](const wormhole::MemoRecord& rec, const std::vector<uint32_t>&) {
            (rec.completes < 0 ? steadies : endings).push_back(&rec);
            return steadies.size() >= m_memoConfirmations && endings.size() >= m_memoConfirmations;
        };
        store.Visit(key.graph, collect);
        if (!key.fresh)
        {
            store.Visit(key.ending, collect);
        }
        const size_t need = m_memoConfirmations;
        if (steadies.empty() && endings.empty())
        {
            why = MemoMiss::kNoRecord;
        }
        else if (steadies.size() < need && endings.size() < need)
        {
            why = MemoMiss::kUnconfirmed;
        }
        else if ((steadies.size() >= need && !wormhole::MemoMatch::Agree(steadies, m_memoAgreement)) ||
                 (endings.size() >= need && !wormhole::MemoMatch::Agree(endings, m_memoAgreement)))
        {
            why = MemoMiss::kDisagree;
        }
        else
        {
            why = MemoMiss::kDoesNotFit;
        }
    }
    m_stats.memoMissReasons[static_cast<size_t>(why)]++;
}

} // namespace ns3
