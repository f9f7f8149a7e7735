#include "wormhole-simulator-impl.h"

#include "ns3/assert.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeSimulatorImpl");
NS_OBJECT_ENSURE_REGISTERED(WormholeSimulatorImpl);

namespace
{
// The kernel object is destroyed by Simulator::Destroy(); its counters are
// copied here so they outlive it.
WormholeKernelStats g_lastStats;
std::vector<std::pair<uint32_t, int64_t>> g_lastFlowSkipped;
std::vector<std::pair<uint32_t, int64_t>> g_lastFlowCredited;
const WormholeSimulatorImpl* g_live = nullptr;
bool g_everCreated = false;
} // namespace

TypeId
WormholeSimulatorImpl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::WormholeSimulatorImpl")
                            .SetParent<SimulatorImpl>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<WormholeSimulatorImpl>()
                            .AddAttribute("FastForward",
                                          "Fast-forward partitions whose flows are all steady. "
                                          "Off: results identical to DefaultSimulatorImpl.",
                                          BooleanValue(true),
                                          MakeBooleanAccessor(&WormholeSimulatorImpl::m_fastForward),
                                          MakeBooleanChecker())
                            .AddAttribute("Theta",
                                          "Steady when (max - min) / mean of the last Window rate "
                                          "samples is below this",
                                          DoubleValue(0.05),
                                          MakeDoubleAccessor(&WormholeSimulatorImpl::m_theta),
                                          MakeDoubleChecker<double>(0.0, 1.0))
                            .AddAttribute("Window",
                                          "Steady-state window l: a flow is steady when its last "
                                          "l rate samples (one per acknowledgement, each the "
                                          "delivered rate over the l acknowledgements before it) "
                                          "spread by less than Theta",
                                          UintegerValue(2000),
                                          MakeUintegerAccessor(&WormholeSimulatorImpl::m_window),
                                          MakeUintegerChecker<uint32_t>(2))
                            .AddAttribute("MaxExtrapolation",
                                          "Time skipped since a partition's flows became steady "
                                          "may be at most this many times the time simulated "
                                          "packet by packet since then: R-hat is measured, and "
                                          "its error grows with how far it is extrapolated",
                                          DoubleValue(1.0),
                                          MakeDoubleAccessor(&WormholeSimulatorImpl::m_maxExtrapolation),
                                          MakeDoubleChecker<double>(0.0))
                            .AddAttribute("PoolShares",
                                          "On a noisy skip, flows that stand alike at the same "
                                          "full port whose marks are drawn (same line rate, same "
                                          "path delay) keep their own measured rates only over the "
                                          "span measured, then are credited the group's mean plus "
                                          "a seeded draw of the dispersion they gain; false: each "
                                          "flow extrapolates its own rate",
                                          BooleanValue(true),
                                          MakeBooleanAccessor(&WormholeSimulatorImpl::m_poolShares),
                                          MakeBooleanChecker())
                            .AddAttribute("Memo",
                                          "Memoize contention patterns: skip the transient of a "
                                          "pattern isomorphic to one already seen",
                                          BooleanValue(true),
                                          MakeBooleanAccessor(&WormholeSimulatorImpl::m_memo),
                                          MakeBooleanChecker())
                            .AddAttribute("MemoRestoreQueues",
                                          "On a memo hit, put back the queue occupancy the stored "
                                          "transient ended with at each switch port of the "
                                          "partition (as a backlog the port sends and marks by)",
                                          BooleanValue(true),
                                          MakeBooleanAccessor(&WormholeSimulatorImpl::m_memoRestoreQueues),
                                          MakeBooleanChecker())
                            .AddAttribute("DecoupleTransitLinks",
                                          "Join flows into one partition only over links that can "
                                          "be a bottleneck for them (and host links); a frame "
                                          "crossing any other link is moved by its own flow's "
                                          "skips (docs/coupling.md)",
                                          BooleanValue(true),
                                          MakeBooleanAccessor(&WormholeSimulatorImpl::m_decoupleTransit),
                                          MakeBooleanChecker())
                            .AddAttribute("MemoReplayJoins",
                                          "When a flow nobody announced joins a partition a memo "
                                          "hit is skipping, undo the hit and simulate the "
                                          "partition packet by packet from the hit to the join "
                                          "(off: resume from the stored course, approximately)",
                                          BooleanValue(true),
                                          MakeBooleanAccessor(&WormholeSimulatorImpl::m_memoReplayJoins),
                                          MakeBooleanChecker())
                            .AddAttribute("MemoDirectSteady",
                                          "On a hit of a steady (not flat) record, go on at its "
                                          "converged rates for up to MaxExtrapolation times its "
                                          "transient instead of measuring the partition again "
                                          "(the paper's behaviour; off: measured first)",
                                          BooleanValue(false),
                                          MakeBooleanAccessor(&WormholeSimulatorImpl::m_memoDirectSteady),
                                          MakeBooleanChecker())
                            .AddAttribute("MemoRateQuantum",
                                          "Rates in flow conflict graphs are compared after "
                                          "rounding to multiples of this (bps)",
                                          DoubleValue(1e9),
                                          MakeDoubleAccessor(&WormholeSimulatorImpl::m_memoRateQuantum),
                                          MakeDoubleChecker<double>(1.0))
                            .AddAttribute("MemoConfirmations",
                                          "Occurrences of a pattern, simulated packet by packet, "
                                          "that must agree before one is replayed (1: the first "
                                          "record is used, as in the paper)",
                                          UintegerValue(2),
                                          MakeUintegerAccessor(&WormholeSimulatorImpl::m_memoConfirmations),
                                          MakeUintegerChecker<uint32_t>(1, 16))
                            .AddAttribute("MemoAgreement",
                                          "Occurrences agree when their durations, bytes and rates "
                                          "spread by at most this fraction; a pattern whose "
                                          "occurrences do not is never replayed",
                                          DoubleValue(0.02),
                                          MakeDoubleAccessor(&WormholeSimulatorImpl::m_memoAgreement),
                                          MakeDoubleChecker<double>(0.0, 1.0))
                            .AddAttribute("MinSkip",
                                          "Do not fast-forward by less than this",
                                          TimeValue(MicroSeconds(20)),
                                          MakeTimeAccessor(&WormholeSimulatorImpl::m_minSkip),
                                          MakeTimeChecker())
                            .AddAttribute("CompletionMargin",
                                          "A skip of a noisy partition stops when a flow has its "
                                          "in-flight bytes plus this much time at its steady rate "
                                          "left, so its end runs packet by packet (flat ones stop "
                                          "by their credit's error bound instead)",
                                          TimeValue(MicroSeconds(20)),
                                          MakeTimeAccessor(&WormholeSimulatorImpl::m_completionMargin),
                                          MakeTimeChecker());
    return tid;
}

WormholeSimulatorImpl::WormholeSimulatorImpl()
    : m_eventsWithContextEmpty(true),
      m_stop(false),
      m_uid(EventId::UID::VALID),
      m_currentUid(EventId::UID::INVALID),
      m_currentTs(0),
      m_currentContext(Simulator::NO_CONTEXT),
      m_unscheduledEvents(0),
      m_mainThreadId(std::this_thread::get_id()),
      m_fastForward(true),
      m_theta(0.05),
      m_window(2000),
      m_maxExtrapolation(1.0),
      m_memo(true),
      m_memoRestoreQueues(true),
      m_memoDirectSteady(false),
      m_memoRateQuantum(1e9),
      m_memoConfirmations(2),
      m_memoAgreement(0.02)
{
    NS_LOG_FUNCTION(this);
    g_live = this;
    g_everCreated = true;
    g_lastStats = WormholeKernelStats{};
}

WormholeSimulatorImpl::~WormholeSimulatorImpl()
{
    if (g_live == this)
    {
        Publish();
        g_live = nullptr;
    }
    if (wormhole::FlowSeam::listener == this)
    {
        wormhole::FlowSeam::listener = nullptr;
    }
}

void
WormholeSimulatorImpl::NotifyConstructionCompleted()
{
    // Attributes are set by now: only an accelerating kernel listens to flow
    // facts and indexes events, so with FastForward off nothing differs from
    // the default kernel but the class name.
    SimulatorImpl::NotifyConstructionCompleted();
    m_tracking = m_fastForward;
    m_indexHorizon = static_cast<uint64_t>(std::max<int64_t>(0, m_minSkip.GetTimeStep()));
    if (m_tracking)
    {
        wormhole::FlowSeam::listener = this;
    }
}

void
WormholeSimulatorImpl::DoDispose()
{
    NS_LOG_FUNCTION(this);
    ProcessEventsWithContext();
    if (m_events)
    {
        while (!m_events->IsEmpty())
        {
            Scheduler::Event next = m_events->RemoveNext();
            next.impl->Unref();
        }
    }
    m_events = nullptr;
    m_linkEvents.clear();
    if (wormhole::FlowSeam::listener == this)
    {
        wormhole::FlowSeam::listener = nullptr;
    }
    if (g_live == this)
    {
        Publish();
    }
    SimulatorImpl::DoDispose();
}

void
WormholeSimulatorImpl::Destroy()
{
    NS_LOG_FUNCTION(this);
    while (!m_destroyEvents.empty())
    {
        Ptr<EventImpl> ev = m_destroyEvents.front().PeekEventImpl();
        m_destroyEvents.pop_front();
        NS_LOG_LOGIC("handle destroy " << ev);
        if (!ev->IsCancelled())
        {
            ev->Invoke();
        }
    }
}

void
WormholeSimulatorImpl::SetScheduler(ObjectFactory schedulerFactory)
{
    NS_LOG_FUNCTION(this << schedulerFactory);
    Ptr<Scheduler> scheduler = schedulerFactory.Create<Scheduler>();
    if (m_events)
    {
        while (!m_events->IsEmpty())
        {
            scheduler->Insert(m_events->RemoveNext());
        }
    }
    m_events = scheduler;
}

uint32_t
WormholeSimulatorImpl::GetSystemId() const
{
    return 0;
}

void
WormholeSimulatorImpl::ProcessOneEvent()
{
    Scheduler::Event next = m_events->RemoveNext();
    PreEventHook(EventId(next.impl, next.key.m_ts, next.key.m_context, next.key.m_uid));
    NS_ASSERT(next.key.m_ts >= m_currentTs);
    m_unscheduledEvents--;
    m_stats.eventsExecuted++;
    NS_LOG_LOGIC("handle " << next.key.m_ts);
    if (!m_coupledPending.empty() && next.key.m_ts > m_currentTs)
    {
        SettleCoupledGroups();
    }
    m_currentTs = next.key.m_ts;
    m_currentContext = next.key.m_context;
    m_currentUid = next.key.m_uid;
    next.impl->Invoke();
    next.impl->Unref();
    ProcessEventsWithContext();
}

bool
WormholeSimulatorImpl::IsFinished() const
{
    return m_events->IsEmpty() || m_stop;
}

void
WormholeSimulatorImpl::ProcessEventsWithContext()
{
    if (m_eventsWithContextEmpty)
    {
        return;
    }
    std::list<EventWithContext> pending;
    {
        std::unique_lock lock(m_eventsWithContextMutex);
        pending.swap(m_eventsWithContext);
        m_eventsWithContextEmpty = true;
    }
    for (const auto& ev : pending)
    {
        Insert(ev.event, m_currentTs + ev.delay, ev.context);
    }
}

void
WormholeSimulatorImpl::Run()
{
    NS_LOG_FUNCTION(this);
    m_mainThreadId = std::this_thread::get_id();
    ProcessEventsWithContext();
    m_stop = false;
    while (!m_events->IsEmpty() && !m_stop)
    {
        ProcessOneEvent();
    }
    NS_ASSERT(!m_events->IsEmpty() || m_unscheduledEvents == 0);
}

void
WormholeSimulatorImpl::Stop()
{
    NS_LOG_FUNCTION(this);
    m_stop = true;
}

#ifdef NS3WH_STOP_RETURNS_VOID
void
WormholeSimulatorImpl::Stop(const Time& delay)
{
    NS_LOG_FUNCTION(this << delay.GetTimeStep());
    Simulator::Schedule(delay, &Simulator::Stop);
}
#else
EventId
WormholeSimulatorImpl::Stop(const Time& delay)
{
    NS_LOG_FUNCTION(this << delay.GetTimeStep());
    return Simulator::Schedule(delay, &Simulator::Stop);
}
#endif

uint32_t
WormholeSimulatorImpl::InsertDuringReplay(const Scheduler::Event& event)
{
    // A replay of a partition's past (wormhole-memo-replay.cc): its own
    // events run in it; anything else reaches the present, which is where
    // the rest of the simulation is.
    Scheduler::Event ev = event;
    const uint32_t owner = m_tracking ? wormhole::g_currentOwner : wormhole::kNoOwner;
    if (ReplayOwns(owner))
    {
        Track(owner, ev.impl, ev.key.m_ts, ev.key.m_uid, ev.key.m_context);
        m_replayEvents.emplace(std::make_pair(ev.key.m_ts, ev.key.m_uid), ev);
        return ev.key.m_uid;
    }
    ev.key.m_ts = m_replayUntil;
    m_shifted[ev.key.m_uid] = m_replayUntil; // its EventId keeps the time asked for
    if (owner != wormhole::kNoOwner)
    {
        // Tracked in the present: a skip it ends is ended now.
        const uint64_t past = m_currentTs;
        m_currentTs = m_replayUntil;
        Track(owner, ev.impl, m_replayUntil, ev.key.m_uid, ev.key.m_context);
        m_currentTs = past;
    }
    m_events->Insert(ev);
    return ev.key.m_uid;
}

EventId
WormholeSimulatorImpl::Schedule(const Time& delay, EventImpl* event)
{
    NS_LOG_FUNCTION(this << delay.GetTimeStep() << event);
    NS_ASSERT_MSG(IsMainThread(), "Simulator::Schedule Thread-unsafe invocation!");
    NS_ASSERT_MSG(delay.IsPositive(), "WormholeSimulatorImpl::Schedule(): Negative delay");
    const auto ts = static_cast<uint64_t>((delay + TimeStep(m_currentTs)).GetTimeStep());
    const uint32_t uid = Insert(event, ts, m_currentContext);
    return EventId(event, ts, m_currentContext, uid);
}

void
WormholeSimulatorImpl::ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event)
{
    NS_LOG_FUNCTION(this << context << delay.GetTimeStep() << event);
    if (IsMainThread())
    {
        Time tAbsolute = delay + TimeStep(m_currentTs);
        Insert(event, static_cast<uint64_t>(tAbsolute.GetTimeStep()), context);
    }
    else
    {
        std::unique_lock lock(m_eventsWithContextMutex);
        m_eventsWithContext.push_back({context, static_cast<uint64_t>(delay.GetTimeStep()), event});
        m_eventsWithContextEmpty = false;
    }
}

EventId
WormholeSimulatorImpl::ScheduleNow(EventImpl* event)
{
    NS_ASSERT_MSG(IsMainThread(), "Simulator::ScheduleNow Thread-unsafe invocation!");
    const uint32_t uid = Insert(event, m_currentTs, m_currentContext);
    return EventId(event, m_currentTs, m_currentContext, uid);
}

EventId
WormholeSimulatorImpl::ScheduleDestroy(EventImpl* event)
{
    NS_ASSERT_MSG(IsMainThread(), "Simulator::ScheduleDestroy Thread-unsafe invocation!");
    EventId id(Ptr<EventImpl>(event, false), m_currentTs, 0xffffffff, EventId::UID::DESTROY);
    m_destroyEvents.push_back(id);
    m_uid++;
    return id;
}

Time
WormholeSimulatorImpl::Now() const
{
    // Do not add function logging here, to avoid stack overflow (as ns-3 does).
    return TimeStep(m_currentTs);
}

Time
WormholeSimulatorImpl::GetDelayLeft(const EventId& id) const
{
    if (IsExpired(id))
    {
        return TimeStep(0);
    }
    return TimeStep(RealTs(id) - m_currentTs);
}

uint64_t
WormholeSimulatorImpl::RealTs(const EventId& id) const
{
    if (!m_shifted.empty())
    {
        auto it = m_shifted.find(id.GetUid());
        if (it != m_shifted.end())
        {
            return it->second;
        }
    }
    return id.GetTs();
}

void
WormholeSimulatorImpl::Remove(const EventId& id)
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        // Destroy events are not in the scheduler; look for them in their list.
        auto it = std::find(m_destroyEvents.begin(), m_destroyEvents.end(), id);
        if (it != m_destroyEvents.end())
        {
            m_destroyEvents.erase(it);
        }
        id.PeekEventImpl()->Cancel();
        return;
    }
    if (IsExpired(id))
    {
        return;
    }
    Scheduler::Event event;
    event.impl = id.PeekEventImpl();
    event.key.m_ts = RealTs(id);
    event.key.m_context = id.GetContext();
    event.key.m_uid = id.GetUid();
    if (m_replayUntil == 0 || m_replayEvents.erase(std::make_pair(event.key.m_ts, event.key.m_uid)) == 0)
    {
        m_events->Remove(event);
    }
    if (m_tracking)
    {
        m_removed.insert(event.key.m_uid);
    }
    event.impl->Cancel();
    // Whenever we remove an event from the event list, we have to unref it.
    event.impl->Unref();
    m_unscheduledEvents--;
    m_stats.eventsRemoved++;
}

void
WormholeSimulatorImpl::Cancel(const EventId& id)
{
    if (!IsExpired(id))
    {
        id.PeekEventImpl()->Cancel();
        m_stats.eventsCancelled++;
    }
}

bool
WormholeSimulatorImpl::IsExpired(const EventId& id) const
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        if (id.PeekEventImpl() == nullptr || id.PeekEventImpl()->IsCancelled())
        {
            return true;
        }
        return std::find(m_destroyEvents.begin(), m_destroyEvents.end(), id) ==
               m_destroyEvents.end();
    }
    const uint64_t ts = RealTs(id);
    return id.PeekEventImpl() == nullptr || ts < m_currentTs ||
           (ts == m_currentTs && id.GetUid() <= m_currentUid) ||
           id.PeekEventImpl()->IsCancelled();
}

Time
WormholeSimulatorImpl::GetMaximumSimulationTime() const
{
    return TimeStep(0x7fffffffffffffffLL);
}

uint32_t
WormholeSimulatorImpl::GetContext() const
{
    return m_currentContext;
}

uint64_t
WormholeSimulatorImpl::GetEventCount() const
{
    return m_stats.eventsExecuted;
}

WormholeKernelStats
WormholeSimulatorImpl::GetStats() const
{
    WormholeKernelStats s = m_stats;
    const auto counters = m_partitions.GetCounters();
    s.partitionsFormed = counters.formed;
    s.partitionsMerged = counters.merged;
    s.partitionsSplit = counters.split;
    AddPartitionStats(s);
    return s;
}

void
WormholeSimulatorImpl::Publish() const
{
    g_lastStats = GetStats();
    g_lastFlowSkipped.assign(m_flowSkipped.begin(), m_flowSkipped.end());
    std::sort(g_lastFlowSkipped.begin(), g_lastFlowSkipped.end());
    g_lastFlowCredited.assign(m_flowCredited.begin(), m_flowCredited.end());
    std::sort(g_lastFlowCredited.begin(), g_lastFlowCredited.end());
}

WormholeKernelStats
WormholeSimulatorImpl::LastStats()
{
    return g_live ? g_live->GetStats() : g_lastStats;
}

std::vector<std::pair<uint32_t, int64_t>>
WormholeSimulatorImpl::LastFlowSkipped()
{
    if (g_live)
    {
        g_live->Publish();
    }
    return g_lastFlowSkipped;
}

std::vector<std::pair<uint32_t, int64_t>>
WormholeSimulatorImpl::LastFlowCredited()
{
    if (g_live)
    {
        g_live->Publish();
    }
    return g_lastFlowCredited;
}

bool
WormholeSimulatorImpl::EverCreated()
{
    return g_everCreated;
}

} // namespace ns3
