// The seam between a transport model and the Wormhole kernel (see DESIGN.md).
//
// A model (cpp/rdma) reports flow facts and tags the events it schedules with
// the link they belong to. Nothing here depends on which SimulatorImpl runs:
// with no listener installed (ns-3's DefaultSimulatorImpl) every call is a
// single predictable branch, so the baseline pays next to nothing.
#ifndef NS3_WORMHOLE_FLOW_SEAM_H
#define NS3_WORMHOLE_FLOW_SEAM_H

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace ns3
{
namespace wormhole
{

/// Link ids are dense, 0..L-1, chosen by the model; kNoOwner marks events
/// that belong to no link (application logic, global bookkeeping).
constexpr uint32_t kNoOwner = 0xffffffffu;

/// Flow ids from here on are never a flow's: FlowScheduled with one of them
/// announces a known interrupt (a link failing or coming back), which ends
/// skips of partitions on its links like a known start, but never starts.
constexpr uint32_t kFirstInterruptId = 0xff000000u;

/// Owner tag read by the kernel in Schedule(). A plain global (not
/// thread_local): ns-3's sequential kernels run events on one thread.
inline uint32_t g_currentOwner = kNoOwner;

/// kNoFlow: the event carries no flow's frame (a port's service, a PFC frame).
constexpr uint32_t kNoFlow = 0xffffffffu;

/// The flow whose frame the event being scheduled carries across its owner
/// link (a frame's arrival at the link's far end). On a link no partition
/// owns, the kernel files such an event under the frame's flow instead
/// (docs/coupling.md, "Transit links").
inline uint32_t g_currentFlow = kNoFlow;

// NS3WH_NO_SEAM compiles every seam call away; it exists only so that
// benchmarks/bench_seam.sh can measure what the seam costs a model running
// under ns-3's default kernel.
#ifdef NS3WH_NO_SEAM
#define NS3WH_SEAM_ACTIVE false
#else
#define NS3WH_SEAM_ACTIVE true
#endif

/// Sets the owner for every Simulator::Schedule* inside its scope.
class OwnerScope
{
  public:
    explicit OwnerScope(uint32_t owner, uint32_t flow = kNoFlow)
        : m_saved(g_currentOwner),
          m_savedFlow(g_currentFlow)
    {
        if constexpr (NS3WH_SEAM_ACTIVE)
        {
            g_currentOwner = owner;
            g_currentFlow = flow;
        }
    }

    ~OwnerScope()
    {
        if constexpr (NS3WH_SEAM_ACTIVE)
        {
            g_currentOwner = m_saved;
            g_currentFlow = m_savedFlow;
        }
    }

    OwnerScope(const OwnerScope&) = delete;
    OwnerScope& operator=(const OwnerScope&) = delete;

  private:
    uint32_t m_saved;
    uint32_t m_savedFlow;
};

/// What a model tells the kernel about its flows. Implemented by the kernel;
/// the model calls it only through FlowSeam, which is a no-op when no kernel
/// listens.
class FlowListener
{
  public:
    virtual ~FlowListener() = default;
    /// A flow that will start at `startNs` over `links` (known in advance,
    /// e.g. from a flow file): a skip of a partition it would join stops
    /// there instead of being skipped back.
    virtual void FlowScheduled(uint32_t flowId, uint64_t startNs, const std::vector<uint32_t>& links) = 0;
    /// The flow's first frame is scheduled. `links`: its data path in order
    /// (the first `dataHops`), then any link only its acknowledgements take.
    virtual void FlowStarted(uint32_t flowId,
                             const std::vector<uint32_t>& links,
                             uint32_t dataHops,
                             uint64_t bytes) = 0;
    /// One progress report per acknowledgement: the congestion-control rate
    /// now in force, payload bytes acknowledged so far and payload bytes sent
    /// so far (both cumulative, excluding kernel credit).
    virtual void FlowProgress(uint32_t flowId, double ccRateBps, uint64_t ackedBytes, uint64_t sentBytes) = 0;
    virtual void FlowFinished(uint32_t flowId) = 0;
    /// The flow's path changed (a link failed or came back): it leaves its
    /// partition and joins the one of `links` (as in FlowStarted), keeping
    /// what it has delivered; not a completion.
    virtual void FlowRerouted(uint32_t flowId, const std::vector<uint32_t>& links, uint32_t dataHops) = 0;
    /// A flow is about to start over `links`, before the model touches any
    /// state for it: a kernel brings the partitions it joins up to now.
    virtual void FlowJoining(const std::vector<uint32_t>& links)
    {
    }
    /// The port that sends onto `linkId` holds `queuedBytes` of data behind
    /// the frame of `frameBytes` it sends now (called only when more than a
    /// frame is queued), or was paused by PFC (`queuedBytes` the maximum):
    /// what stands behind it downstream holds it.
    virtual void LinkQueued(uint32_t linkId, uint64_t queuedBytes, uint64_t frameBytes)
    {
    }
};

/// What the kernel asks of a model when it skips a flow's partition.
class FlowCreditor
{
  public:
    virtual ~FlowCreditor() = default;
    /// The flow delivered `bytes` more payload bytes in skipped time `dtNs`
    /// (both negative on a skip-back): shrink what is left to send and move
    /// any absolute timestamps the flow keeps (pacing, timeouts) by dtNs.
    /// Returns the bytes it took: never more than the flow has left unsent,
    /// nor back more than it was credited. A credit that leaves nothing to
    /// send may complete the flow (FlowFinished, from inside this call).
    virtual int64_t CreditFlow(uint32_t flowId, int64_t bytes, int64_t dtNs) = 0;
    /// The link's pending events moved by dtNs: move any absolute timestamps
    /// its ports keep (busy-until, pause bookkeeping).
    virtual void ShiftLink(uint32_t linkId, int64_t dtNs) = 0;
    /// Capacity of one direction of the link: line rate, and the payload
    /// rate that leaves after per-packet headers, at the utilisation the
    /// congestion control holds a bottleneck to (HPCC: below 1).
    virtual void GetLinkCapacity(uint32_t linkId, double& lineBps, double& payloadBps) const = 0;
    /// Payload rate at which one direction of the link empties a standing
    /// queue: the line rate after headers, whatever utilisation the
    /// congestion control aims at (a queue drains at the line's pace).
    virtual double GetQueueDrainBps(uint32_t linkId) const
    {
        double line = 0;
        double payload = 0;
        GetLinkCapacity(linkId, line, payload);
        return payload;
    }
    /// One-way propagation delay (ns) and frame loss rate of the link: with
    /// the capacities, what a path's base RTT and losses, and so a memoized
    /// transient, depend on.
    virtual void GetLinkWire(uint32_t linkId, uint64_t& delayNs, double& lossRate) const = 0;
    /// A flow sending full frames back to back at its line rate comes back
    /// to the same phase every `periodNs`, having delivered `payloadBytes`:
    /// the fewest frames (and acknowledgement intervals) that serialise in a
    /// whole number of ns on its first link and of time steps on every link
    /// its frames and acknowledgements cross. A skip of whole periods that
    /// credits whole periods' payload leaves such a flow exactly where the
    /// packet-level run would be. False when the model cannot tell.
    virtual bool GetLineRatePeriod(uint32_t flowId, uint64_t& periodNs, uint64_t& payloadBytes) const
    {
        return false;
    }
    /// The payload of one of the flow's full frames (0: unknown). A credit
    /// that leaves a flow less than a frame may complete it.
    virtual uint64_t GetFramePayload(uint32_t flowId) const
    {
        return 0;
    }
    /// Wire bytes of the flow's acknowledgements per wire byte of its data
    /// (0: unknown): the load its data puts on the way back.
    virtual double GetAckWireRatio(uint32_t flowId) const
    {
        return 0;
    }
    /// The flow's congestion-control state as numbers, and putting such a
    /// state back (memoized transients restore what they converged to).
    virtual std::vector<double> SaveFlowState(uint32_t flowId) const = 0;
    virtual void RestoreFlowState(uint32_t flowId, std::span<const double> state) = 0;
    /// Bytes queued at the egress port behind each hop of the flow's data
    /// path, as (port key, bytes): the key names the port, so flows that
    /// share it report the same key (0 bytes where a hop has no queue).
    virtual void GetPathBacklog(uint32_t flowId, std::vector<std::pair<uint64_t, uint64_t>>& hops) const = 0;
    /// Bytes queued at one switch egress port, named by a key GetPathBacklog
    /// reported (the kernel reads a flow's ports by key at each memo
    /// checkpoint instead of walking its route again).
    virtual uint64_t GetPortBacklog(uint64_t portKey) const = 0;
    /// From `fromNs` on, the port behaves as if the shares' total were queued
    /// at its head: it is busy sending them and marks ECN counting them (a
    /// memoized transient's queues, put back without materializing frames).
    /// `shares`: (flow, bytes) of the flows whose frames the bytes stand for;
    /// the model charges each to the ingress that flow comes in on, so PFC
    /// sees the backlog as it would have seen the frames.
    virtual void AddBacklog(uint64_t portKey,
                            const std::vector<std::pair<uint32_t, uint64_t>>& shares,
                            int64_t fromNs) = 0;
    /// The port drops the frameless backlog it has not sent by now (a memo
    /// hit cut short puts back the queues of the time reached instead).
    virtual void DropBacklog(uint64_t portKey) = 0;
    /// The next `bytes` of data frames the port sends leave it without
    /// taking wire time, and its ECN marking does not count them while they
    /// wait (replacing any such bytes it still had): frames a memo hit froze
    /// in flight that the stored course had already delivered by the time a
    /// cut-short resumes from (docs/memo.md). Default: nothing.
    virtual void WaiveBytes(uint64_t portKey, uint64_t bytes)
    {
    }
    /// exempt: the data frames the flows have in flight now are neither
    /// ECN-marked nor counted as queue by any port from now on: a memo hit
    /// froze them, and the stored course had them delivered (and marked)
    /// early on, which the congestion-control state it restores has already
    /// answered (docs/memo.md). false: no frame of the flows is exempt (the
    /// hit was cut short). Default: nothing.
    virtual void SetInFlightEcnExempt(const std::vector<uint32_t>& flowIds, bool exempt)
    {
    }
    /// Payload bytes the flow has sent and not had acknowledged (what its
    /// last FlowProgress said, or more: it may have sent before any
    /// acknowledgement came back).
    virtual uint64_t GetFlowInFlight(uint32_t flowId) const = 0;
    /// Whether the flow's share of the switch port `portKey` (a key
    /// GetPathBacklog names) is a random draw: its congestion control reacts
    /// to ECN marks and the port marks by probability. Only there does the
    /// kernel pool alike flows' shares and draw their dispersion; elsewhere a
    /// flow's measured share is the outcome. Default: false.
    virtual bool SharesDrawnAt(uint32_t flowId, uint64_t portKey) const
    {
        return false;
    }
};

/// Process-wide registry joining one model and one kernel.
struct FlowSeam
{
    static inline FlowListener* listener = nullptr;
    static inline FlowCreditor* creditor = nullptr;

    static void Scheduled(uint32_t flowId, uint64_t startNs, const std::vector<uint32_t>& links)
    {
        if (NS3WH_SEAM_ACTIVE && listener)
        {
            listener->FlowScheduled(flowId, startNs, links);
        }
    }

    static void Joining(const std::vector<uint32_t>& links)
    {
        if (NS3WH_SEAM_ACTIVE && listener)
        {
            listener->FlowJoining(links);
        }
    }

    /// True while the kernel replays a partition's past (docs/memo.md): a
    /// model defers to the present what would start a flow or reach outside
    /// the partition (it schedules it rather than running it inline).
    static inline bool replaying = false;

    static void Started(uint32_t flowId, const std::vector<uint32_t>& links, uint32_t dataHops, uint64_t bytes)
    {
        if (NS3WH_SEAM_ACTIVE && listener)
        {
            listener->FlowStarted(flowId, links, dataHops, bytes);
        }
    }

    static void Progress(uint32_t flowId, double ccRateBps, uint64_t ackedBytes, uint64_t sentBytes)
    {
        if (NS3WH_SEAM_ACTIVE && listener)
        {
            listener->FlowProgress(flowId, ccRateBps, ackedBytes, sentBytes);
        }
    }

    static void Finished(uint32_t flowId)
    {
        if (NS3WH_SEAM_ACTIVE && listener)
        {
            listener->FlowFinished(flowId);
        }
    }

    /// Interrupt ids handed out so far. One counter for everything that
    /// announces interrupts (a model's link events, a workload executor's
    /// foreseen flow starts), so no two announcements share an id: the
    /// kernel keys what it was told by id. Wraps within the range, never
    /// reaching 0xffffffff; a wrap only matters if 2^24 announcements were
    /// pending at once.
    static inline uint32_t interrupts = 0;

    /// A known interrupt at atNs touching `links`, under the next free id.
    static void Interrupt(uint64_t atNs, const std::vector<uint32_t>& links)
    {
        if (NS3WH_SEAM_ACTIVE && listener)
        {
            constexpr uint32_t span = 0xffffffffu - kFirstInterruptId;
            Scheduled(kFirstInterruptId + interrupts++ % span, atNs, links);
        }
    }

    /// Not while replaying: a replay re-runs a partition's own past.
    static void Queued(uint32_t linkId, uint64_t queuedBytes, uint64_t frameBytes)
    {
        if (NS3WH_SEAM_ACTIVE && listener && !replaying)
        {
            listener->LinkQueued(linkId, queuedBytes, frameBytes);
        }
    }

    static void Rerouted(uint32_t flowId, const std::vector<uint32_t>& links, uint32_t dataHops)
    {
        if (NS3WH_SEAM_ACTIVE && listener)
        {
            listener->FlowRerouted(flowId, links, dataHops);
        }
    }
};

} // namespace wormhole
} // namespace ns3

#endif
