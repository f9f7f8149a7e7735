// ns3::WormholeSimulatorImpl: a SimulatorImpl that runs any ns-3 program with
// exactly the semantics (event order, uids, event counts) of ns-3's
// DefaultSimulatorImpl, and is the place where the Wormhole accelerator
// (partitions, steady-state fast-forward, memoization) hooks in.
#ifndef NS3_WORMHOLE_SIMULATOR_IMPL_H
#define NS3_WORMHOLE_SIMULATOR_IMPL_H

#include "flow-seam.h"
#include "memo-key.h"
#include "memo-match.h"
#include "memo-store.h"
#include "partition-tracker.h"
#include "rate-window.h"

#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/scheduler.h"
#include "ns3/simulator-impl.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <deque>
#include <limits>
#include <list>
#include <mutex>
#include <thread>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ns3
{

/// Why a partition's contention pattern ended without a skip (the last
/// reason that held it back; docs/why-not.md).
enum class NoSkip : uint8_t
{
    kShort,             ///< a flow never filled a steady window
    kNeverSteady,       ///< windows full, but some flow's rate spread or send/deliver mismatch >= theta
    kNotWorkConserving, ///< steady-looking, but a flow neither at line rate nor on a full link
    kNearCompletion,    ///< a completion (less its margin) closer than MinSkip
    kKnownJoin,         ///< a known flow start closer than MinSkip
    kDriftLimited,      ///< extrapolated as far as MaxExtrapolation allows
    kSilent,            ///< a flow delivered nothing for a while (paused, blocked)
    kIndexing,          ///< events of its links scheduled before they were indexed still pending
    kSlowing,           ///< a flow's controller just cut it well below what it delivers
    kRising,            ///< a flow's controller just raised it well above what it delivers
    kCount
};
/// Why a memo lookup did not skip a pattern's transient.
enum class MemoMiss : uint8_t
{
    kNoRecord,    ///< no isomorphic record (or the isomorphism search gave up)
    kUnconfirmed, ///< fewer occurrences of the pattern than MemoConfirmations
    kDisagree,    ///< enough occurrences, but they disagree by more than MemoAgreement
    kDoesNotFit,  ///< agreeing records, but the flows have too little left for them
    kRefused,     ///< a confirmed hit not taken: a known join inside it, or shorter than MinSkip
    kCount
};
constexpr size_t kNoSkipReasons = static_cast<size_t>(NoSkip::kCount);
constexpr size_t kMemoMissReasons = static_cast<size_t>(MemoMiss::kCount);
const char* NoSkipName(NoSkip reason);
const char* MemoMissName(MemoMiss reason);

/// Counters of one kernel instance; kept after Simulator::Destroy() so that
/// callers (the Python layer) can read them once a run is over.
struct WormholeKernelStats
{
    uint64_t eventsExecuted = 0;
    uint64_t eventsScheduled = 0;
    uint64_t eventsCancelled = 0;
    uint64_t eventsRemoved = 0;
    uint64_t fastForwards = 0;
    uint64_t skipBacks = 0;
    uint64_t skipsToKnownStart = 0; ///< fast-forwards cut short at a known flow start joining them
    int64_t timeSkippedNs = 0;
    uint64_t partitionsFormed = 0;
    uint64_t partitionsMerged = 0;
    uint64_t partitionsSplit = 0;
    uint64_t memoHits = 0;
    uint64_t memoMisses = 0;
    uint64_t memoInserts = 0;
    int64_t memoTimeSavedNs = 0;  ///< simulated time of transients skipped by memo hits
    uint64_t memoEventsSaved = 0; ///< events those transients took when they were recorded
    uint64_t memoBacklogBytes = 0; ///< queued bytes put back on switch ports by memo hits
    uint64_t memoKeysDeferred = 0; ///< lookups not made because the store was empty (docs/why-not.md)
    uint64_t memoHitsReplayed = 0; ///< hits undone by a flow joining mid-way, their partition replayed
    uint64_t memoHitsResumed = 0;  ///< hits cut short and resumed from their stored course instead
    uint64_t memoWaivedBytes = 0; ///< bytes in flight beyond the course's that ports sent without wire time
    uint64_t memoHitsDeferred = 0; ///< hits put off until their pattern's first round trip was delivered
    uint64_t memoHitsDeferredLapsed = 0; ///< of those, not taken then (too little left, a known join)
    uint64_t eventsReplayed = 0;   ///< events those replays ran (in eventsExecuted too)
    // Why not faster: each contention pattern of a partition (from one change
    // to the next) that ended without a skip, by its reason, and the
    // simulated time it lasted (summed over partitions).
    std::array<uint64_t, kNoSkipReasons> noSkipPartitions{};
    std::array<int64_t, kNoSkipReasons> noSkipTimeNs{};
    /// Of never-steady patterns, the unsteady sample that came closest to
    /// steady (the smallest larger-of-the-two): its window spread and mean
    /// send/deliver mismatch over theta (inf: none).
    double neverSteadySpread = std::numeric_limits<double>::infinity();
    double neverSteadyMismatch = std::numeric_limits<double>::infinity();
    std::array<uint64_t, kMemoMissReasons> memoMissReasons{}; ///< sums to memoMisses
    // Partition sizes: every partition the run created, by the most flows it held.
    uint64_t partitionsCreated = 0;
    uint64_t partitionsMaxAlive = 0;
    uint64_t partitionLargestFlows = 0;
    uint64_t partitionLargestLinks = 0;
    std::array<uint64_t, 32> partitionFlowsLog2{}; ///< [k]: peak flows in [2^k, 2^(k+1))
    /// What partitions would be if only links that can be bottlenecks joined
    /// flows (docs/coupling.md): the largest such group, and each partition's
    /// largest group binned as partitionFlowsLog2.
    uint64_t coupledLargestFlows = 0;
    std::array<uint64_t, 32> coupledFlowsLog2{};
    /// Transit links (docs/coupling.md): links judged transit when a flow
    /// started or ended (each judgement counted), changes of a link's kind
    /// while other flows used it, and frames filed under their flow.
    uint64_t transitJudgements = 0;
    uint64_t couplingJudgements = 0;
    uint64_t linkKindChanges = 0;
    uint64_t transitFramesFiled = 0;
    /// Transit links made coupling by their queue: more frames queued than
    /// flows cross them, or a PFC pause (docs/coupling.md).
    uint64_t transitCongested = 0;
};

class WormholeSimulatorImpl : public SimulatorImpl, public wormhole::FlowListener
{
  public:
    static TypeId GetTypeId();

    WormholeSimulatorImpl();
    ~WormholeSimulatorImpl() override;

    void Destroy() override;
    bool IsFinished() const override;
    void Stop() override;
#ifdef NS3WH_STOP_RETURNS_VOID
    void Stop(const Time& delay) override; // ns-3 <= 3.37
#else
    EventId Stop(const Time& delay) override;
#endif
    EventId Schedule(const Time& delay, EventImpl* event) override;
    void ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event) override;
    EventId ScheduleNow(EventImpl* event) override;
    EventId ScheduleDestroy(EventImpl* event) override;
    void Remove(const EventId& id) override;
    void Cancel(const EventId& id) override;
    bool IsExpired(const EventId& id) const override;
    void Run() override;
    Time Now() const override;
    Time GetDelayLeft(const EventId& id) const override;
    Time GetMaximumSimulationTime() const override;
    void SetScheduler(ObjectFactory schedulerFactory) override;
    uint32_t GetSystemId() const override;
    uint32_t GetContext() const override;
    uint64_t GetEventCount() const override;

    /// Counters so far, partitions included.
    WormholeKernelStats GetStats() const;

    // wormhole::FlowListener: flow facts from the transport model.
    void FlowScheduled(uint32_t flowId, uint64_t startNs, const std::vector<uint32_t>& links) override;
    void FlowStarted(uint32_t flowId, const std::vector<uint32_t>& links, uint32_t dataHops, uint64_t bytes) override;
    void FlowProgress(uint32_t flowId, double ccRateBps, uint64_t ackedBytes, uint64_t sentBytes) override;
    void FlowFinished(uint32_t flowId) override;
    void FlowRerouted(uint32_t flowId, const std::vector<uint32_t>& links, uint32_t dataHops) override;
    void FlowJoining(const std::vector<uint32_t>& links) override;
    void LinkQueued(uint32_t linkId, uint64_t queuedBytes, uint64_t frameBytes) override;

    /// Simulated time skipped per flow (flow id, ns) of the most recent kernel.
    static std::vector<std::pair<uint32_t, int64_t>> LastFlowSkipped();
    /// Payload bytes credited per flow (flow id, bytes) by the most recent
    /// kernel, as the model took them.
    static std::vector<std::pair<uint32_t, int64_t>> LastFlowCredited();

    /// Statistics of the most recently created kernel (live while it runs,
    /// kept after it is destroyed); all zero if none was ever created.
    static WormholeKernelStats LastStats();
    /// Whether a WormholeSimulatorImpl has been created in this process.
    static bool EverCreated();

  protected:
    void NotifyConstructionCompleted() override;

  private:
    void DoDispose() override;
    void ProcessOneEvent();
    /// Copies the statistics where LastStats()/LastFlowSkipped() find them.
    void Publish() const;
    /// Moves events scheduled from other threads into the queue.
    void ProcessEventsWithContext();
    /// Inserts an event at absolute time `ts` and returns its uid (an
    /// EventId is built only where the caller wants one: most events come
    /// through ScheduleWithContext, which returns none). Every event passes
    /// here, so the common case is inline; a replay's is out of line.
    uint32_t Insert(EventImpl* event, uint64_t ts, uint32_t context)
    {
        Scheduler::Event ev;
        ev.impl = event;
        ev.key.m_ts = ts;
        ev.key.m_context = context;
        ev.key.m_uid = m_uid;
        m_uid++;
        m_unscheduledEvents++;
        m_stats.eventsScheduled++;
        if (m_replayUntil != 0 && ts < m_replayUntil) [[unlikely]]
        {
            return InsertDuringReplay(ev);
        }
        if (m_tracking && wormhole::g_currentOwner != wormhole::kNoOwner)
        {
            const uint32_t owner = wormhole::g_currentOwner;
            if (wormhole::g_currentFlow != wormhole::kNoFlow && owner < m_transit.size() && m_transit[owner])
                [[unlikely]]
            {
                FileTransitFrame(ev);
            }
            else
            {
                Track(owner, event, ts, ev.key.m_uid, context);
            }
        }
        m_events->Insert(ev);
        return ev.key.m_uid;
    }
    /// Insert while a replay runs a partition's past (m_replayUntil set).
    uint32_t InsertDuringReplay(const Scheduler::Event& ev);

    bool IsMainThread() const
    {
        return std::this_thread::get_id() == m_mainThreadId;
    }

    struct EventWithContext
    {
        uint32_t context;
        uint64_t delay;
        EventImpl* event;
    };

    std::list<EventWithContext> m_eventsWithContext;
    bool m_eventsWithContextEmpty;
    std::mutex m_eventsWithContextMutex;

    std::list<EventId> m_destroyEvents;
    bool m_stop;
    Ptr<Scheduler> m_events;

    uint32_t m_uid;
    uint32_t m_currentUid;
    uint64_t m_currentTs;
    uint32_t m_currentContext;
    int64_t m_unscheduledEvents;
    std::thread::id m_mainThreadId;

    WormholeKernelStats m_stats;

    // ---- acceleration (fast-forward of steady partitions) ----
    struct FlowState
    {
        uint64_t bytes = 0;
        uint64_t acked = 0;
        uint64_t sent = 0;
        uint64_t startedAt = 0; ///< when it started (ns; a reroute keeps it)
        int64_t credited = 0;
        bool steady = false;
        double ccRate = 0;        ///< latest congestion-control rate
        uint32_t firstLink = 0;   ///< the sender's NIC link
        std::vector<uint32_t> links;
        uint32_t dataHops = 0; ///< links[0, dataHops) carry its data; the rest only its ACKs
        /// Each data hop's egress port (one direction of its link) and line
        /// rate, named once at the start (calm check, coupling statistic).
        std::vector<std::pair<uint64_t, double>> dataPorts;
        /// A host NIC's hop has no switch port key (GetPathBacklog says 0):
        /// in dataPorts it is this bit | the sender's link.
        static constexpr uint64_t kNicPortBit = uint64_t{1} << 63;
        /// dataPorts names every hop GetPathBacklog walks (a route cut short
        /// by a failed link does not): its backlog can be read by key.
        bool dataPortsWhole = false;
        wormhole::RateWindow window;
        /// Start of the first steady window since the pattern last changed:
        /// R-hat is the rate delivered since then (measured and credited).
        bool anchorFinal = false;
        uint32_t settle = 0; ///< samples since the partition last changed
        bool memoCheck = false; ///< look the pattern up at the next acknowledgement
        double lineRate = 0;
        double fairRate = 0; ///< its max-min fair rate among the flows it shares links with
        std::vector<uint32_t> portLoads; ///< its data ports' entries in m_portLoads (transit links)
        uint32_t fillIndex = 0;          ///< its place in the flows WaterFill is given
        double ackRatio = 0; ///< acknowledgement bytes per data byte on the wire
        bool calm = false;      ///< no flow of its partition was ever cut (docs/fast-forward.md)
        bool everCut = false;   ///< its CC rate was ever below line rate
        bool quick = false;     ///< judged on the short window (calm, never cut)
        /// Its window is half full and its partition's links were indexed
        /// then (docs/why-not.md, "Back-off": when links are indexed).
        bool indexRequested = false;
        /// Half a steady window: a fast-forward needs every flow's window
        /// full, so its partition's links are indexed from here on.
        bool HalfWindow() const
        {
            return 2 * static_cast<uint64_t>(window.Size()) >= window.Capacity();
        }
        /// When its last frame a transit port sent during a skip of its
        /// partition comes due (FileTransitFrame keeps its frames in order).
        uint64_t transitResumed = 0;
        /// When its partition's pattern last changed, what it had delivered
        /// then, and how much of its time had been skipped: the dispersion
        /// a pooled skip draws is measured over the simulated time since.
        uint64_t formedTime = 0;
        uint64_t formedAcked = 0;
        int64_t formedSkipped = 0;
        uint64_t anchorTime = 0;
        uint64_t anchorAcked = 0;
        int64_t anchorCredited = 0;
        /// Measure R-hat from `timeNs` on, from what it has delivered by now.
        void AnchorAt(uint64_t timeNs)
        {
            anchorTime = timeNs;
            anchorAcked = acked;
            anchorCredited = credited;
        }
        bool judged = false; ///< its window was judged since the pattern last changed
        /// A memo hit of its partition waits for the acknowledgement at or
        /// after this time (0: none; wormhole-memo-deferred-hit.cc).
        uint64_t memoHitAt = 0;
    };

    /// What a skip-back needs of a memo hit to resume the partition mid-way
    /// through the stored transient (docs/memo.md).
    struct MemoCut
    {
        std::shared_ptr<const wormhole::MemoCourse> course;
        std::vector<uint32_t> flows;   ///< the partition's flows at the hit
        std::vector<uint32_t> map;     ///< record vertex of each
        std::vector<double> rate;      ///< its stored rate after the transient (steady records)
        std::vector<double> inFlight;  ///< its bytes in flight at the hit
        std::vector<int64_t> credited; ///< what the hit's credit took
        uint64_t startedAt = 0;
        uint32_t startedUid = 0;       ///< the event the hit was made in
        bool steady = false;           ///< the record ended steady: its rates hold after it
        int64_t into = 0;              ///< how far into the stored transient the hit was taken
        std::vector<double> done;      ///< what each flow had delivered by then since the formation
    };

    /// Where in its stored transient a pattern is when a hit is taken:
    /// `into` ns after it formed, flow i having delivered done[i] bytes
    /// since (empty: at the formation).
    struct HitFrom
    {
        int64_t into = 0;
        std::vector<double> done;

        double Done(uint32_t i) const
        {
            return i < done.size() ? done[i] : 0.0;
        }
    };

    /// A memo hit found when its pattern formed, taken once the pattern's
    /// first round trip has been delivered (wormhole-memo-deferred-hit.cc).
    struct DeferredHit
    {
        std::shared_ptr<const wormhole::MemoRecord> record; ///< a copy: the store's may move
        std::vector<uint32_t> map;
        bool steady = false;            ///< a steady record (else one ending in a completion)
        std::vector<uint32_t> flows;    ///< the partition's flows when it formed
        uint64_t formedAt = 0;
        std::vector<double> deliveredAtFormation;
    };

    struct PartitionState
    {
        uint32_t steadyFlows = 0;
        bool locked = false; ///< no new skip until the partition changes
        bool skipping = false;
        uint64_t skipEnd = 0;
        /// A link its flows cross turned coupling during its memo hit: they
        /// join at the hit's end (RelinkAfterHit); no new skip until then.
        bool relinkPending = false;
        std::vector<uint32_t> mixedLinks; ///< the links that turned, held mixed until then
        uint64_t retryAfter = 0; ///< no skip attempt before this time
        // A memo miss: the pattern as it formed, to be stored when steady.
        bool memoPending = false;
        wormhole::FlowConflictGraph fcg;
        /// Unless every flow started with the pattern, the same graph with
        /// what each flow has left in its labels: the key of a record that
        /// ends in a completion.
        wormhole::FlowConflictGraph fcgEnding;
        std::vector<uint32_t> fcgFlows; ///< flow of each FCG vertex
        std::vector<double> deliveredAtFormation;
        uint64_t formedAt = 0;
        uint64_t eventsAtFormation = 0;
        std::vector<std::pair<uint32_t, double>> creditRates; ///< (flow, bps) of the current skip
        // Why not skipped: the current pattern (an "episode", from the
        // partition's last change to its next) and what held it back.
        bool episodeOpen = false;
        bool episodeSkipped = false;
        uint64_t episodeStart = 0;
        NoSkip why = NoSkip::kShort; ///< what holds it back now (kShort: no window judged yet)
        uint64_t whySince = 0;       ///< since when
        std::array<int64_t, kNoSkipReasons> episodeTime{}; ///< time held back so far, by reason
        uint32_t judgedFlows = 0;    ///< flows whose windows were judged in this episode
        /// The unsteady sample that came closest to steady: its spread and mismatch over theta.
        double closestSpread = std::numeric_limits<double>::infinity();
        double closestMismatch = std::numeric_limits<double>::infinity();
        uint32_t peakFlows = 0; ///< most flows (and links) the partition ever held
        uint32_t peakLinks = 0;
        /// Largest group of its flows joined only through links that can be
        /// bottlenecks for them, over its episodes that lasted (docs/coupling.md).
        uint32_t peakCoupledFlows = 0;
        bool coupledPending = false; ///< grew this instant: measured when time moves on
        // Back-off: a pattern that formed while the memo store was empty is
        // recorded without its key; the key is built from these views only
        // if the pattern is stored (wormhole-back-off.cc).
        bool memoKeyDeferred = false;
        std::vector<wormhole::MemoFlowView> memoViewsAtFormation;
        wormhole::MemoCourse course; ///< the pending pattern's checkpoints so far
        uint64_t courseStep = 0;     ///< least spacing of its next checkpoint (ns)
        /// The current skip is a memo hit's: how to cut it short (else null).
        std::shared_ptr<const MemoCut> memoCut;
        /// A memo hit's congestion-control state, put in place when its skip
        /// ends (RestoreAtSkipEnd); cancelled if the skip is cut short.
        EventId pendingRestore;
        /// A memo hit waiting for the first round trip to be delivered.
        std::shared_ptr<const DeferredHit> deferredHit;
    };

    struct TrackedEvent
    {
        EventImpl* impl;
        uint64_t ts;
        uint32_t uid;
        uint32_t context;
    };

    /// Pending events owned by one link, and when to drop the expired ones.
    /// A link is indexed only while a skip of its partition may come
    /// (IndexLinks); otherwise its events are only counted, and the latest of
    /// them says when the index is whole again (docs/why-not.md, "Back-off").
    struct alignas(64) LinkIndex // one cache line: Track reads it at every event
    {
        std::vector<TrackedEvent> events;
        size_t compactAt = 16;
        uint64_t scheduled = 0;      ///< events ever scheduled on the link, for memo statistics
        bool indexed = false;        ///< events scheduled now go into `events`
        uint64_t untrackedUntil = 0; ///< latest time of an event scheduled while not indexed
    };

    bool IsPending(const TrackedEvent& e) const
    {
        // Events are tracked without a reference: one still due is still
        // held by the scheduler (Remove() is recorded in m_removed), so its
        // time alone says whether the entry is live.
        return e.ts > m_currentTs || (e.ts == m_currentTs && e.uid > m_currentUid);
    }

    /// Indexes an event under the link that owns it. Runs for every event a
    /// tracked link schedules, so it is inline and the common case is one
    /// append; the rest is out of line (wormhole-event-ownership.cc).
    void Track(uint32_t owner, EventImpl* impl, uint64_t ts, uint32_t uid, uint32_t context)
    {
        if (owner >= m_linkEvents.size() || m_activeSkips > 0) [[unlikely]]
        {
            TrackSlow(owner);
        }
        File(owner, impl, ts, uid, context);
    }
    /// Track without its rare cases: the link is known to be in the index.
    void File(uint32_t owner, EventImpl* impl, uint64_t ts, uint32_t uid, uint32_t context)
    {
        LinkIndex& index = m_linkEvents[owner];
        ++index.scheduled;
        // Not indexed, an event due within MinSkip (a frame's, most of them)
        // is only counted: it delays a skip by at most what is not worth
        // skipping. A later one (a timer, a timeout) is indexed all the same.
        if (!index.indexed && ts < m_currentTs + m_indexHorizon)
        {
            index.untrackedUntil = std::max(index.untrackedUntil, ts);
            return;
        }
        index.events.push_back({impl, ts, uid, context});
        if (index.events.size() >= index.compactAt) [[unlikely]]
        {
            CompactLink(owner);
        }
    }
    /// Track's rare cases: a link seen for the first time, or one of a skipping partition.
    void TrackSlow(uint32_t owner);
    /// Makes room in the index for a link seen for the first time (and
    /// indexes all from the first event if a store filled before the run
    /// holds records).
    void MeetLink(uint32_t link);

    // ---- transit links (wormhole-transit-links.cc, docs/coupling.md) ----
    /// A frame's arrival over a transit link: filed under its flow's own
    /// first link, and moved by its partition's skip if one is running.
    void FileTransitFrame(Scheduler::Event& ev);
    /// Adds (or removes) the flow's data to the loads of the ports it
    /// crosses and re-judges the links whose loads changed; returns the
    /// links in use by other flows whose kind (coupling, transit) changed.
    std::vector<uint32_t> LoadFlow(uint32_t flowId, const FlowState& fs, bool add);
    /// The flow's links that join partitions: all of them, unless transit
    /// links are decoupled; then its host links and its coupling links.
    std::vector<uint32_t> CouplingLinks(const FlowState& fs) const;
    /// The flows using links whose kind changed join the partitions of
    /// their coupling links anew; returns the partitions they are now in.
    std::vector<uint32_t> Relink(const std::vector<uint32_t>& changed, uint32_t except);
    /// Whether a flow of the partition crosses a transit link.
    bool UsesTransit(uint32_t partition) const;
    /// m_transit[link] from its use: in use, and transit or held mixed.
    void UpdateTransit(uint32_t link);
    /// The flows leave their partitions and join those of their coupling
    /// links anew; returns the partitions they left or joined that live on.
    std::vector<uint32_t> Repartition(const std::vector<uint32_t>& flows);
    /// What a hit ending in a completion leaves to run packet by packet
    /// before it (besides what it has in flight): the error its credit can
    /// have, MemoAgreement of the stored transient, at most CompletionMargin.
    double HitMargin(const wormhole::MemoMatch::Hit& hit) const;
    /// Relinks a partition whose memo hit held its flows apart (Relink).
    void RelinkAfterHit(uint32_t partition);
    /// Schedules RelinkAfterHit at `at` (kernel event, owned by no link).
    void ScheduleRelink(uint32_t partition, uint64_t at);

    /// One direction of a link, as the flows whose data crosses it load it.
    struct PortLoad
    {
        double capacity = 0;
        double demand = 0;    ///< the flows' max-min fair rates, summed
        double ackDemand = 0; ///< their acknowledgements' rate, sent the other way on the link
        uint64_t filled = 0;  ///< the WaterFill call that last took it in (each port once per call)
        std::vector<uint32_t> flows;
    };
    struct LinkUse
    {
        uint32_t pins = 0;              ///< flows whose host link it is: always coupling
        uint32_t mixed = 0;             ///< partitions crossing it that join it only after their hit
        bool coupling = true;           ///< its kind when last judged
        bool congested = false;         ///< queued or paused since the flows crossing it last changed
        std::vector<uint32_t> users;    ///< flows crossing it (data or acknowledgements)
        std::vector<uint32_t> ports;    ///< its directions seen so far (at most two), in m_portLoads
    };
    /// Max-min fair rates of the flows over their data ports
    /// (FlowState::fairRate; wormhole::FairRates).
    void WaterFill(const std::vector<uint32_t>& flows);
    uint64_t m_waterFills = 0;
    bool m_decoupleTransit = true;
    /// Partitions as Definition 1 draws them, over every link: the flows
    /// whose fair rates depend on each other's.
    wormhole::PartitionTracker m_footprint;
    std::unordered_map<uint64_t, uint32_t> m_portIndex; ///< port key -> entry in m_portLoads
    std::vector<PortLoad> m_portLoads;
    std::vector<LinkUse> m_linkUse;
    std::vector<uint8_t> m_transit; ///< per link: in use and transit (read in Insert)
    void CompactLink(uint32_t link);
    /// Indexes the partition's links or stops, by whether a skip of it may
    /// come before it changes again (at each change: ResetPartition).
    void IndexFor(uint32_t partition);
    /// Makes room for links 0..links-1 (new ones indexed if all are).
    void GrowLinkIndex(size_t links);
    /// Starts indexing the partition's links: a skip of it may come.
    void IndexLinks(uint32_t partition);
    /// Stops indexing them (none of its flows is near a steady window and
    /// the memo store is empty). Entries already indexed stay.
    void UnindexLinks(uint32_t partition);
    /// Indexes every link from now on (the memo store holds a record: a hit
    /// may come at any pattern's formation).
    void IndexAllLinks();
    /// IndexAllLinks once the memo store holds a record (filled by this run,
    /// or before it: another run's records, a database).
    void IndexAllIfStoreHolds();
    /// Every pending event of the partition's links is in the index, so a
    /// skip may move them; else `readyAt` (if given) says when they will be,
    /// and the links are indexed from now on (IndexLinks).
    bool IndexReady(uint32_t partition, uint64_t* readyAt = nullptr);
    void ShiftLinkEvents(uint32_t link, int64_t dt);
    void ShiftPartition(uint32_t partition, int64_t dt);
    PartitionState& StateOf(uint32_t partition);
    bool IsSkipping(uint32_t partition);
    void SkipBack(uint32_t partition);
    /// Undoes a memo hit a join cut short and simulates its partition packet
    /// by packet from the hit to now (wormhole-memo-replay.cc).
    void ReplayCutHit(uint32_t partition);
    /// Whether an event of `owner` scheduled before the replay's end runs in
    /// it: one of the replayed partition's links.
    bool ReplayOwns(uint32_t owner) const;
    /// Credits `bytes` of skipped time `dt` (both negative: takes back) to a
    /// flow through the model, books what the model took (it never takes
    /// more than the flow has unsent) and returns it.
    int64_t Credit(uint32_t flow, int64_t bytes, int64_t dt);
    /// Between BeginCredit and EndCredit a completion a credit causes waits:
    /// the partition is mid-update (events moved, credits half given), so
    /// its FlowFinished runs at EndCredit, once the skip is in place.
    void BeginCredit();
    void EndCredit();
    void ResetPartition(uint32_t partition);
    /// Names the egress port of each of the flow's data hops, once at its start.
    void NameDataPorts(uint32_t flowId, FlowState& fs) const;
    /// Forget the steady windows (not the anchors) of a partition's flows.
    void ClearWindows(uint32_t partition);
    void TryFastForward(uint32_t partition);
    /// If every flow of `rates` sends back to back at its line rate: the
    /// shortest time (ns) after which all of them are back in phase, and each
    /// one's (period ns, payload per period); 0 otherwise.
    uint64_t LineRateQuantum(const std::vector<std::pair<uint32_t, double>>& rates,
                             std::vector<std::pair<uint64_t, uint64_t>>& periods) const;
    /// For flows that send back to back (`periods` from LineRateQuantum): the
    /// longest skip (ns) of whole periods after which each flow still has its
    /// frames in flight and one period's payload to send, once `pending[i]`
    /// bytes (a memo hit's transient credit; empty: none) are credited too.
    double UntilCompletionExact(const std::vector<std::pair<uint32_t, double>>& rates,
                                const std::vector<std::pair<uint64_t, uint64_t>>& periods,
                                const std::vector<double>& pending = {}) const;
    /// For flat flows (every window's spread at most `spread`, well under
    /// theta) credited at `rates`: the longest skip (ns) after which each
    /// flow still has its frames in flight and two frames to send, beyond
    /// what the rate's error can have credited (`spread` of the credit) and
    /// `pending[i]` bytes credited besides (empty: none).
    double UntilCompletionFlat(const std::vector<std::pair<uint32_t, double>>& rates,
                               double spread,
                               const std::vector<double>& pending = {}) const;
    /// A flow's bytes neither acknowledged, credited, in flight nor
    /// `pending` (to be credited besides).
    double UnsentBeyond(uint32_t flow, double pending) const;
    /// A memo record's stored rate of each of the partition's flows, by flow id.
    std::vector<std::pair<uint32_t, double>> RatesOf(uint32_t partition,
                                                     const wormhole::MemoRecord& rec,
                                                     const std::vector<uint32_t>& map) const;
    /// The payload of the whole (period ns, payload) periods in `skipNs`.
    static double WholePeriodsPayload(int64_t skipNs, const std::pair<uint64_t, uint64_t>& period);
    /// Mark a partition whose events were just moved by `skip` as skipping:
    /// fresh windows, R-hat anchored at the skip's end.
    void BeginSkip(uint32_t partition, int64_t skip, std::vector<std::pair<uint32_t, double>> rates);
    /// Converged rate-based CC is work-conserving: every flow either sends
    /// at its line rate or crosses a link its partition fills.
    /// A contention pattern formed: skip its transient if memoized, else
    /// start recording it.
    void MemoOnFormation(uint32_t partition);
    /// What the memo reads of each flow of the partition.
    std::vector<wormhole::MemoFlowView> MemoViews(uint32_t partition) const;
    /// The three kinds of hit (see memo-match.h); each is taken only if
    /// long enough and not crossed by a known join (false: not taken).
    /// `from`: where in the stored transient the pattern is (a deferred hit).
    bool MemoHitSteady(uint32_t partition,
                       const wormhole::MemoMatch& match,
                       const wormhole::MemoMatch::Hit& hit,
                       const HitFrom& from);
    bool MemoHitEnding(uint32_t partition,
                       const wormhole::MemoMatch& match,
                       const wormhole::MemoMatch::Hit& hit,
                       const std::vector<double>& drainRate);
    /// How long after the formation a hit of `rec` is taken: 0 (now) for a
    /// transient flat throughout, else when the course has delivered every
    /// flow's first round trip and its flows hold in all no more in flight
    /// than at the skip's end (`marginNs` before a completion), within theta
    /// and a frame of `frameBytes`; -1 if never before it.
    /// (`map`: the record's vertex of each flow, `flows`: where each stands
    /// now). A flow that has sent its last byte by the skip's end need not
    /// have come down to it.
    static int64_t MemoHitDelay(const wormhole::MemoRecord& rec,
                                const std::vector<uint32_t>& map,
                                const std::vector<wormhole::MemoFlowView>& flows,
                                double theta,
                                double marginNs,
                                double frameBytes);
    /// Where a hit of `rec` taken at its checkpoint `at` ends its skip: the
    /// transient's end for a steady record; for one ending in a completion,
    /// the margin before it, or earlier by the time the frames in flight at
    /// `at` took the course to deliver.
    static const wormhole::MemoCheckpoint& MemoSkipEnd(const wormhole::MemoRecord& rec,
                                                       const wormhole::MemoCheckpoint& at,
                                                       double marginNs);
    /// A hit of a record ending in a completion, taken `from.into` ns into
    /// its transient (a deferred hit; false: not taken).
    bool MemoHitEndingDeferred(uint32_t partition,
                               const wormhole::MemoMatch& match,
                               const wormhole::MemoMatch::Hit& hit,
                               const HitFrom& from);
    /// Applies a hit that ends `skip` ns on, short of a completion, and counts it.
    void ApplyEndingHit(uint32_t partition,
                        const wormhole::MemoRecord& rec,
                        const std::vector<uint32_t>& map,
                        int64_t skip,
                        std::vector<double> credit,
                        const HitFrom& from);
    /// Remembers a hit to be taken `delayNs` from now (false: it could not
    /// be worth taking then).
    bool DeferMemoHit(uint32_t partition, const wormhole::MemoMatch::Hit& hit, bool steady, int64_t delayNs);
    /// The deferred hit's time has come (an acknowledgement of one of the
    /// partition's flows): take it if the pattern is still the one it was for.
    void TakeDeferredHit(uint32_t partition);
    /// The largest full frame's payload among the partition's flows (0: unknown).
    double LargestFrame(uint32_t partition) const;
    /// Forgets the partition's deferred hit.
    void DropDeferredHit(uint32_t partition);
    bool MemoHitFlatPrefix(uint32_t partition, const wormhole::MemoMatch& match, const wormhole::MemoMatch::Hit& hit);
    /// Whether every flow of the partition has sent its last byte.
    bool NothingLeftToSend(uint32_t partition) const;
    /// A miss: remember the pattern as it formed, to store its transient.
    void MemoStartRecording(uint32_t partition, wormhole::MemoKey key);
    /// The pattern reached steady state: store what its transient did.
    void MemoRecordTransient(uint32_t partition, const std::vector<std::pair<uint32_t, double>>& rates);
    uint64_t ScheduledOnLinks(uint32_t partition) const;
    double SpreadSinceAnchor(const FlowState& fs) const;
    /// For flows that stand alike at the same full ports: the group's mean
    /// rate (`shared`), the dispersion drawn for each around it
    /// (`deviation`, bytes per sqrt(ns): over dt beyond its measured span a
    /// flow gets deviation x sqrt(dt) more), and whether the group's port
    /// delivers its capacity (`atCapacity`). Flows not in such a group are
    /// left as they are. wormhole-share-estimate.cc.
    void PoolShares(uint32_t partition,
                    const std::vector<std::pair<uint32_t, double>>& rates,
                    std::vector<double>& shared,
                    std::vector<double>& deviation,
                    std::vector<bool>& atCapacity) const;
    /// A standard normal draw for `flow` now, from the run's seed.
    double StandardNormal(uint32_t flow) const;
    /// Whether the summed delivered rate of `flows` over their current
    /// windows agrees with the rate before them, since their anchors, to
    /// within the windows' own scatter (wormhole-share-estimate.cc).
    bool SumWithoutTrend(const std::vector<uint32_t>& flows) const;
    /// Skips a partition on a memo hit: restores the record's CC and queue
    /// state (if asked), shifts by `skip`, credits each flow.
    void ApplyMemoHit(uint32_t partition,
                      const wormhole::MemoRecord& rec,
                      const std::vector<uint32_t>& map,
                      int64_t skip,
                      std::vector<double> credit,
                      bool restoreState,
                      bool toCompletion,
                      const HitFrom& from);
    /// Stores the pending pattern's transient, ended by a steady state
    /// (completes = -1) or by the completion of its vertex `completes`.
    void MemoRecord(uint32_t partition,
                    int32_t completes,
                    const std::function<double(uint32_t, uint32_t, const FlowState&)>& rateOf);
    void MemoRecordCompletion(uint32_t partition, uint32_t flowId);
    /// Puts back a memoized transient's switch queues (`backlog` per record
    /// vertex, shared by `rate`) from now + skip; returns the bytes each
    /// flow is credited for them.
    std::vector<double> RestoreBacklog(const std::vector<uint32_t>& flows,
                                       const wormhole::RaggedRows& backlog,
                                       const std::vector<double>& rate,
                                       const std::vector<uint32_t>& map,
                                       int64_t skip);
    /// The latest checkpoint of `course` at or before e ns into it.
    static const wormhole::MemoCheckpoint& CheckpointAt(const wormhole::MemoCourse& course, int64_t e);
    /// A checkpoint of a pending pattern's transient now.
    wormhole::MemoCheckpoint MemoSnapshot(uint32_t partition) const;
    /// Called with each acknowledgement: checkpoints the pending pattern's
    /// course at most every courseStep (docs/memo.md).
    void MemoTrace(uint32_t flowId);
    /// Bytes queued behind each of the flow's data hops, in path order (what
    /// GetPathBacklog reports), appended as a row of `into`.
    void DataPathBacklog(uint32_t flowId, const FlowState& fs, wormhole::RaggedRows& into) const;
    /// Puts the flows' CC states in place when the partition's skip ends,
    /// first among its events there: until then the flows keep the state
    /// they had at the hit (frozen with their timers), so a skip cut short
    /// before its end finds them as they were.
    void RestoreAtSkipEnd(uint32_t partition,
                          uint64_t at,
                          std::vector<uint32_t> flows,
                          wormhole::RaggedRows states);
    /// Puts the queues of checkpoint `at` back on the flows' ports from
    /// now + skip (shared by `rate`, per record vertex) and waives at each
    /// port what its flows hold in flight (`inFlight`, per flow) beyond
    /// their counterparts there; returns each flow's share of the queues.
    std::vector<double> ResumeQueuesAt(const std::vector<uint32_t>& flows,
                                       const std::vector<uint32_t>& map,
                                       const wormhole::MemoCheckpoint& at,
                                       const std::vector<double>& rate,
                                       const std::vector<double>& inFlight,
                                       int64_t skip);
    /// Drops the frameless backlog a hit put on the ports of these flows' paths.
    void DropRestoredBacklog(const std::vector<uint32_t>& flows);
    /// A memo hit's skip is taken back `back` ns before its end: resume from
    /// the stored course at the time reached instead of its end state.
    void MemoCutShort(uint32_t partition, int64_t back);
    bool WorkConserving(const std::vector<std::pair<uint32_t, double>>& rates) const;
    /// A data port the flows of a partition cross: their delivered rates
    /// summed, its payload capacity, how many of them cross it, their line
    /// rates summed (what they could offer it), the acknowledgements their
    /// delivered rates send back over the link's other direction, and the
    /// link it is a direction of.
    struct MeasuredPort
    {
        double load = 0;
        double capacity = 0;
        size_t crossing = 0;
        double lines = 0;
        double acks = 0;
        uint32_t link = 0;
        /// The flows fill it: their load reaches its capacity to theta.
        bool Full(double theta) const
        {
            return load >= (1 - theta) * capacity;
        }
    };
    std::unordered_map<uint64_t, MeasuredPort> DataPortLoads(const std::vector<std::pair<uint32_t, double>>& rates) const;
    /// Some flow (not `pooled`) has just been cut by its controller more than
    /// theta below the rate it delivers (kSlowing), and shares no full data
    /// port with others; or raised, below its line rate, more than theta
    /// above it (kRising), and shares no data port its flows could fill.
    /// Such flows' R-hat is measured anew. kCount: none.
    NoSkip ControlMoved(const std::vector<std::pair<uint32_t, double>>& rates, const std::vector<bool>& pooled);

    // ---- why not faster (wormhole-why-not.cc) ----
    /// The partition's pattern changed: close its episode, open a new one.
    void OpenEpisode(uint32_t partition);
    /// The largest group of the partition's flows joined only through links
    /// that can be bottlenecks for them (a statistic; docs/coupling.md).
    uint32_t LargestCoupledGroup(uint32_t partition) const;
    /// Measures the coupled groups of the partitions that grew at the
    /// instant now ending (OpenEpisode defers them here).
    void SettleCoupledGroups();
    std::vector<uint32_t> m_coupledPending;
    /// Books the partition's episode under its reason if it ended unskipped.
    void CloseEpisode(uint32_t partition);
    /// The partition's pattern ends now (a flow joins or leaves, a link of
    /// it changes kind): its episode is closed and a skip it is in is
    /// brought back to now.
    void EndPattern(uint32_t partition);
    /// A skip attempt was refused for `reason`.
    void NoteNoSkip(uint32_t partition, NoSkip reason)
    {
        SetWhy(StateOf(partition), reason);
    }
    /// From now on `reason` holds the partition back: the time since the
    /// last change of reason goes to the previous one.
    void SetWhy(PartitionState& st, NoSkip reason)
    {
        if (reason != st.why)
        {
            st.episodeTime[static_cast<size_t>(st.why)] += static_cast<int64_t>(m_currentTs - st.whySince);
            st.why = reason;
            st.whySince = m_currentTs;
        }
    }
    /// A flow's full window was judged (steady or not, by how much).
    void NoteSteadiness(PartitionState& st, FlowState& fs, bool steady, double spread, double mismatch)
    {
        if (!fs.judged)
        {
            fs.judged = true;
            ++st.judgedFlows;
        }
        if (!steady)
        {
            SetWhy(st, NoSkip::kNeverSteady);
            // The unsteady sample nearest to steady: the smallest of the
            // larger of its two measures.
            if (std::max(spread, mismatch) < m_theta * std::max(st.closestSpread, st.closestMismatch))
            {
                st.closestSpread = spread / m_theta;
                st.closestMismatch = mismatch / m_theta;
            }
        }
    }
    /// Partition sizes, and the patterns still open (unskipped so far), into `s`.
    void AddPartitionStats(WormholeKernelStats& s) const;
    // ---- back-off when nothing can be skipped (wormhole-back-off.cc) ----
    /// At a pattern's formation: with nothing in the memo store no lookup
    /// can hit, so the pattern is recorded as a miss without building its
    /// key (true: done, no lookup to make).
    bool DeferMemoKey(uint32_t partition);
    /// Before a pending pattern is stored: build the key it was recorded without.
    void MaterializeMemoKey(uint32_t partition);
    /// A memo lookup found nothing to apply: books why.
    void NoteMemoMiss(const wormhole::MemoMatch& match, const wormhole::MemoKey& key);
    uint64_t m_maxAlive = 0;
    uint64_t RealTs(const EventId& id) const;

    bool m_fastForward;
    double m_theta;
    uint32_t m_window;
    double m_maxExtrapolation;
    bool m_poolShares; ///< pool alike flows' rates before a noisy skip
    bool m_memo;
    bool m_memoRestoreQueues;
    bool m_memoReplayJoins;
    bool m_memoDirectSteady;
    double m_memoRateQuantum;
    uint32_t m_memoConfirmations;
    double m_memoAgreement;
    Time m_minSkip;
    Time m_completionMargin;
    bool m_tracking = false;
    bool m_indexAll = false; ///< every link indexed (IndexAllLinks)
    uint64_t m_indexHorizon = 0; ///< MinSkip in time steps: events due later are always indexed

    wormhole::PartitionTracker m_partitions;
    /// Flows known to start later: start time -> flow, and their links.
    std::multimap<uint64_t, uint32_t> m_futureStarts;
    std::unordered_map<uint32_t, std::pair<uint64_t, std::vector<uint32_t>>> m_futureFlows;
    /// Time from now to the first known start before `horizonNs` of a flow
    /// that would join the partition (infinity if none).
    double UntilKnownJoin(uint32_t partition, double horizonNs) const;
    std::unordered_map<uint32_t, FlowState> m_flows;
    std::vector<PartitionState> m_partitionState;
    std::vector<LinkIndex> m_linkEvents;
    /// uid -> ts of moved events. Not erased as they run (a hash lookup per
    /// event, a cache miss each while partitions skip): an entry whose time
    /// has passed says "expired", which is true of a run or removed event,
    /// and such entries are purged once the map doubles (PurgeShifted).
    std::unordered_map<uint32_t, uint64_t> m_shifted;
    size_t m_shiftedPurgeAt = 1024;
    void PurgeShifted();
    std::unordered_set<uint32_t> m_removed;           ///< uids of tracked events Remove()d
    uint32_t m_activeSkips = 0;                       ///< partitions whose skip may not have ended
    std::unordered_map<uint32_t, int64_t> m_flowSkipped;
    std::unordered_map<uint32_t, int64_t> m_flowCredited; ///< bytes the model took, per flow
    uint32_t m_crediting = 0;                          ///< BeginCredit depth
    std::vector<uint32_t> m_finishedWhileCrediting;    ///< completions EndCredit runs
    // A replay in progress (wormhole-memo-replay.cc): its end (0: none), the
    // replayed partition's links, and its past events, by (ts, uid).
    uint64_t m_replayUntil = 0;
    std::vector<bool> m_replayLinks;
    std::map<std::pair<uint64_t, uint32_t>, Scheduler::Event> m_replayEvents;
};

} // namespace ns3

#endif
