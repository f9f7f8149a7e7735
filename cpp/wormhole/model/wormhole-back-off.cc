// WormholeSimulatorImpl, back-off: work the kernel leaves undone, or does
// later, where it cannot change what is skipped. A memo lookup at a
// pattern's formation builds the pattern's key (its flow conflict graph,
// labelled and hashed: the costliest step of the lookup); with an empty
// store no lookup can hit, and the key is needed only if the pattern is
// stored, which most patterns of short flows never are (their transient
// changes before it is worth recording). So the pattern is recorded as a
// miss with the views its key is built from, and the key is built when the
// record is made. See docs/why-not.md, "Back-off".
#include "wormhole-simulator-impl.h"

#include "memo-key.h"
#include "memo-store.h"

namespace ns3
{

using wormhole::FlowSeam;

bool
WormholeSimulatorImpl::DeferMemoKey(uint32_t partition)
{
    if (wormhole::MemoStore::Global().Size() != 0)
    {
        return false;
    }
    // What the lookup would have read: the key built from these later is
    // the key built now (the views are copied; link capacities and delays
    // do not change, and a flow rerouted by a link event cancels the record).
    std::vector<wormhole::MemoFlowView> views = MemoViews(partition);
    m_stats.memoKeysDeferred++;
    m_stats.memoMissReasons[static_cast<size_t>(MemoMiss::kNoRecord)]++;
    MemoStartRecording(partition, wormhole::MemoKey{});
    PartitionState& st = StateOf(partition);
    st.memoKeyDeferred = true;
    st.memoViewsAtFormation = std::move(views);
    return true;
}

void
WormholeSimulatorImpl::MaterializeMemoKey(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    const bool deferred = st.memoKeyDeferred;
    st.memoKeyDeferred = false;
    // A deferred recording leaves the key empty; a recording started since
    // with a lookup (the store filled meanwhile) has its key already.
    if (!deferred || !st.fcg.vertexLabel.empty())
    {
        return;
    }
    wormhole::MemoKey key = wormhole::BuildMemoKey(st.memoViewsAtFormation, m_memoRateQuantum, *FlowSeam::creditor);
    st.fcg = std::move(key.graph);
    st.fcgEnding = key.fresh ? wormhole::FlowConflictGraph{} : std::move(key.ending);
    st.memoViewsAtFormation.clear();
}

} // namespace ns3
