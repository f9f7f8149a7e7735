// ns3::WormholeSimulatorImpl: a SimulatorImpl that runs any ns-3 program with
// exactly the semantics (event order, uids, event counts) of ns-3's
// DefaultSimulatorImpl, and is the place where the Wormhole accelerator
// (partitions, steady-state fast-forward, memoization) hooks in.
#ifndef NS3_WORMHOLE_SIMULATOR_IMPL_H
#define NS3_WORMHOLE_SIMULATOR_IMPL_H

#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/scheduler.h"
#include "ns3/simulator-impl.h"

#include <cstdint>
#include <list>
#include <mutex>
#include <thread>

namespace ns3
{

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
    int64_t timeSkippedNs = 0;
    uint64_t partitionsFormed = 0;
    uint64_t partitionsMerged = 0;
    uint64_t partitionsSplit = 0;
    uint64_t memoHits = 0;
    uint64_t memoMisses = 0;
    uint64_t memoInserts = 0;
};

class WormholeSimulatorImpl : public SimulatorImpl
{
  public:
    static TypeId GetTypeId();

    WormholeSimulatorImpl();
    ~WormholeSimulatorImpl() override;

    void Destroy() override;
    bool IsFinished() const override;
    void Stop() override;
    EventId Stop(const Time& delay) override;
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

    const WormholeKernelStats& GetStats() const;

    /// Statistics of the most recently created kernel (live while it runs,
    /// kept after it is destroyed); all zero if none was ever created.
    static WormholeKernelStats LastStats();
    /// Whether a WormholeSimulatorImpl has been created in this process.
    static bool EverCreated();

  private:
    void DoDispose() override;
    void ProcessOneEvent();
    /// Moves events scheduled from other threads into the queue.
    void ProcessEventsWithContext();
    /// Inserts an event at absolute time `ts` and returns its id.
    EventId Insert(EventImpl* event, uint64_t ts, uint32_t context);
    bool IsMainThread() const;

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
};

} // namespace ns3

#endif
