// WormholeSimulatorImpl, deferred memo hit: a hit of a transient that queues
// is not taken when its pattern forms but once the pattern's first round
// trip has been delivered, from where the pattern then is in the stored
// transient (docs/memo.md, "When a hit is taken").
#include "wormhole-simulator-impl.h"

#include "memo-match.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeMemoDeferredHit");

using wormhole::FlowSeam;

double
WormholeSimulatorImpl::HitMargin(const wormhole::MemoMatch::Hit& hit) const
{
    // A replay credits a stored occurrence's course for the one now. The
    // memo takes occurrences whose durations agree within MemoAgreement for
    // the same, so that is the error a replay's timing may have: skipped to
    // that far before the stored completion, no flow is credited past what
    // it would have sent by then, and the completion runs packet by packet.
    // The fixed CompletionMargin (20 us: 42 of each 512 frames of a MoE
    // all-to-all flow at 16.7 Gb/s, 8% of a 250 us transient) bounds it.
    // What the occurrences measured among themselves is no bound: two of
    // them may agree to the ns and the third not (moe-8x7b: FCT mean 1.28%
    // against 0.50%, docs/memo.md).
    const double cap = static_cast<double>(m_completionMargin.GetNanoSeconds());
    return std::min(cap, m_memoAgreement * static_cast<double>(hit.record->transientNs));
}

const wormhole::MemoCheckpoint&
WormholeSimulatorImpl::MemoSkipEnd(const wormhole::MemoRecord& rec, const wormhole::MemoCheckpoint& at, double marginNs)
{
    const wormhole::MemoCourse& course = *rec.course;
    if (rec.completes < 0)
    {
        return course.back(); // steady: the whole transient
    }
    // The frames in flight at `at` take, after the skip, as long as the
    // course took from there to deliver them: the skip ends at least that
    // long before the completion (and at least the margin), so that they
    // have arrived by then.
    int64_t arrive = 0;
    for (size_t v = 0; v < at.bytes.size(); ++v)
    {
        const double want = at.bytes[v] + at.inFlight[v];
        const auto it = std::find_if(&at, course.data() + course.size(), [&](const wormhole::MemoCheckpoint& c) {
            return c.bytes[v] >= want;
        });
        arrive = std::max(arrive, (it == course.data() + course.size() ? rec.transientNs : it->atNs) - at.atNs);
    }
    return CheckpointAt(course, rec.transientNs - std::max(static_cast<int64_t>(marginNs), arrive));
}

int64_t
WormholeSimulatorImpl::MemoHitDelay(const wormhole::MemoRecord& rec,
                                    const std::vector<uint32_t>& map,
                                    const std::vector<wormhole::MemoFlowView>& flows,
                                    double theta,
                                    double marginNs,
                                    double frameBytes)
{
    // A hit freezes what is in flight and lets it go after the skip, where
    // it stands for what the course had in flight at the skip's end. When a
    // pattern forms (its first acknowledgement) each flow has a round trip
    // sent at line rate in flight, before any feedback (2.5 MB a flow on 50 us
    // links), and a queue builds from it that DCQCN takes hundreds of us to
    // drain; near the transient's end the course holds far less (a 4-to-1
    // incast of 3 MB on 20 us links: 631 kB a flow 320 us in, 90 kB at the
    // end). Let go after the skip, the surplus was a queue the reference never
    // had: in front of a flow joining before it drained (129% late), or, as
    // frames still on the wires, a round trip late for the pattern's own
    // flows (4% late) even with its bytes waived at the ports. So the hit is
    // taken at the first checkpoint at which every byte sent before the
    // formation has been delivered and the partition's flows hold in all no
    // more in flight than their counterparts at the skip's end, within theta
    // (and a frame: bytes in flight are whole frames): what is frozen is then
    // about what the reference has in flight there. Summed over the
    // partition, not per flow: one flow's surplus and another's deficit meet
    // at the ports they share, and per flow a MoE step under HPCC, whose
    // windows of 4 to 8 frames differ by more than theta, lost every hit. A
    // transient flat throughout (flows alone at their line rate) has neither
    // burst nor queue: its hit is taken at once.
    if (!rec.course || rec.course->empty() || wormhole::MemoMatch::FlatThroughout(rec, theta))
    {
        return 0;
    }
    const wormhole::MemoCourse& course = *rec.course;
    const wormhole::MemoCheckpoint& formed = course.front();
    for (const wormhole::MemoCheckpoint& c : course)
    {
        const wormhole::MemoCheckpoint& end = MemoSkipEnd(rec, c, marginNs);
        if (c.atNs >= end.atNs)
        {
            break;
        }
        bool ready = true;
        double now = 0;
        double there = 0;
        for (size_t i = 0; i < map.size() && ready; ++i)
        {
            const uint32_t v = map[i];
            ready = c.bytes[v] >= formed.inFlight[v];
            // A flow that has sent its last byte by the skip's end (its
            // remaining bytes all in flight there) holds less and less in
            // flight: its frames are its tail, and after the skip they only
            // have to arrive (MemoSkipEnd), the surplus waived.
            if (flows[i].remaining - end.bytes[v] > end.inFlight[v] + frameBytes)
            {
                now += c.inFlight[v];
                there += end.inFlight[v];
            }
        }
        ready = ready && now <= (1 + theta) * there + frameBytes;
        if (ready)
        {
            return c.atNs;
        }
    }
    return -1;
}

bool
WormholeSimulatorImpl::DeferMemoHit(uint32_t partition,
                                    const wormhole::MemoMatch::Hit& hit,
                                    bool steady,
                                    int64_t delayNs)
{
    const wormhole::MemoRecord& rec = *hit.record;
    const int64_t left = rec.transientNs - delayNs - (steady ? 0 : static_cast<int64_t>(HitMargin(hit)));
    if (left < m_minSkip.GetNanoSeconds())
    {
        return false; // nothing worth skipping would be left of it
    }
    auto deferred = std::make_shared<DeferredHit>();
    deferred->record = std::make_shared<const wormhole::MemoRecord>(rec);
    deferred->map = hit.map;
    deferred->steady = steady;
    deferred->flows = m_partitions.Get(partition).flows;
    deferred->formedAt = m_currentTs;
    for (uint32_t flow : deferred->flows)
    {
        FlowState& fs = m_flows[flow];
        deferred->deliveredAtFormation.push_back(static_cast<double>(fs.acked) + static_cast<double>(fs.credited));
        fs.memoHitAt = m_currentTs + static_cast<uint64_t>(delayNs);
    }
    NS_LOG_INFO("memo hit of partition " << partition << " deferred by " << delayNs
                                         << " ns, until its first round trip is delivered");
    StateOf(partition).deferredHit = std::move(deferred);
    m_stats.memoHitsDeferred++;
    return true;
}

void
WormholeSimulatorImpl::TakeDeferredHit(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    const std::shared_ptr<const DeferredHit> deferred = st.deferredHit;
    DropDeferredHit(partition);
    // The pattern must be the one it formed as, run packet by packet since:
    // a change resets the partition (and drops the hit), a skip would have
    // moved it off the course.
    if (!deferred || st.locked || IsSkipping(partition) || m_partitions.Get(partition).flows != deferred->flows)
    {
        return;
    }
    const std::vector<wormhole::MemoFlowView> views = MemoViews(partition);
    const wormhole::MemoMatch match(views,
                                    static_cast<double>(m_completionMargin.GetNanoSeconds()),
                                    static_cast<double>(m_minSkip.GetNanoSeconds()),
                                    m_theta,
                                    m_memoConfirmations,
                                    m_memoAgreement);
    HitFrom from;
    from.into = static_cast<int64_t>(m_currentTs - deferred->formedAt);
    for (size_t i = 0; i < views.size(); ++i)
    {
        from.done.push_back(views[i].delivered - deferred->deliveredAtFormation[i]);
    }
    wormhole::MemoMatch::Hit hit;
    hit.record = deferred->record.get();
    hit.map = deferred->map;
    const bool taken = deferred->steady ? MemoHitSteady(partition, match, hit, from)
                                        : MemoHitEndingDeferred(partition, match, hit, from);
    if (!taken)
    {
        m_stats.memoHitsDeferredLapsed++;
    }
}

bool
WormholeSimulatorImpl::MemoHitEndingDeferred(uint32_t partition,
                                             const wormhole::MemoMatch& match,
                                             const wormhole::MemoMatch::Hit& hit,
                                             const HitFrom& from)
{
    // The skip ends where MemoHitDelay judged the hit by (MemoSkipEnd), and
    // each flow is credited what makes it have sent, there, what its
    // counterpart had: delivered plus in flight, less what it has delivered
    // since the formation and what it has in flight now (those frames stand
    // for the counterpart's; ResumeQueuesAt waives any surplus).
    const wormhole::MemoRecord& rec = *hit.record;
    const auto& map = hit.map;
    if (!rec.course || rec.course->empty())
    {
        return false;
    }
    const wormhole::MemoCourse& course = *rec.course;
    const wormhole::MemoCheckpoint* at = &MemoSkipEnd(rec, CheckpointAt(course, from.into), HitMargin(hit));
    // The credit must leave each flow a frame to deliver: credited to its
    // last byte with nothing in flight, a flow completes inside the credit
    // (a DCQCN flow of a 4-to-1 incast on 1 us links ended 91% early so).
    const double frame = std::max(1.0, LargestFrame(partition));
    std::vector<double> credit(map.size(), 0.0);
    bool fits = false;
    while (!fits && at->atNs > from.into)
    {
        fits = true;
        for (uint32_t i = 0; i < map.size(); ++i)
        {
            const uint32_t v = map[i];
            credit[i] = std::max(0.0, at->bytes[v] - from.Done(i) + at->inFlight[v] - match.InFlight(i));
            fits = fits && credit[i] <= match.Unsent(i) && match.Remaining(i) - credit[i] >= frame;
        }
        if (!fits)
        {
            --at; // end the skip a checkpoint earlier
        }
    }
    const int64_t skip = at->atNs - from.into;
    if (!fits || skip < m_minSkip.GetNanoSeconds() ||
        UntilKnownJoin(partition, static_cast<double>(m_currentTs + skip)) < static_cast<double>(skip))
    {
        return false;
    }
    NS_LOG_INFO("memo hit (ends in a completion), " << from.into << " ns into its transient: partition " << partition
                                                    << " skips " << skip << " ns");
    ApplyEndingHit(partition, rec, map, skip, std::move(credit), from);
    return true;
}

double
WormholeSimulatorImpl::LargestFrame(uint32_t partition) const
{
    uint64_t frame = 0;
    for (uint32_t flow : m_partitions.Get(partition).flows)
    {
        frame = std::max(frame, FlowSeam::creditor->GetFramePayload(flow));
    }
    return static_cast<double>(frame);
}

void
WormholeSimulatorImpl::DropDeferredHit(uint32_t partition)
{
    PartitionState& st = StateOf(partition);
    if (!st.deferredHit)
    {
        return;
    }
    st.deferredHit.reset();
    for (uint32_t flow : m_partitions.Get(partition).flows)
    {
        m_flows[flow].memoHitAt = 0;
    }
}

} // namespace ns3
