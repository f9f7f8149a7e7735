// WormholeSimulatorImpl, why not faster: the kernel's account of what it did
// not skip and why, and of the partitions it formed. Each contention pattern
// of a partition (an "episode": from one change of its flows to the next)
// that ends without a skip is booked under the last reason that held it back,
// with the simulated time it lasted; each memo lookup that found nothing to
// apply, under why. Nothing here runs per event; the per-ACK part is one
// inline comparison (NoteSteadiness). See docs/why-not.md.
#include "wormhole-simulator-impl.h"

#include "memo-match.h"
#include "memo-store.h"

#include <algorithm>
#include <bit>

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
