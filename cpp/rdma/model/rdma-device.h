// What host NICs and switches share: ports that serialize frames onto
// directed channels, the routing table with its ECMP choice, and the model's
// counters.
#ifndef RDMA_DEVICE_H
#define RDMA_DEVICE_H

#include "mix64.h"
#include "rdma-packet.h"

#include "ns3/event-id.h"
#include "ns3/node.h"
#include "ns3/object.h"
#include "ns3/simulator.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class RdmaDevice;

/// Model-wide counters, owned by RdmaNetwork. The *Events fields count the
/// events the model scheduled, by purpose.
struct RdmaCounters
{
    uint64_t dataPackets = 0;          ///< DATA frames sent by hosts, retransmissions included
    uint64_t retransmittedPackets = 0; ///< DATA frames carrying bytes sent before
    uint64_t acks = 0;                 ///< ACK frames sent
    uint64_t nacks = 0;                ///< NACK frames sent
    uint64_t cnps = 0;                 ///< congestion notifications received by senders
    uint64_t timeouts = 0;             ///< retransmission timeouts that rewound a flow
    uint64_t drops = 0;                ///< frames dropped by switch MMUs
    uint64_t linkLosses = 0;           ///< frames lost on the wire: error rate, or a failed link
    uint64_t unroutable = 0;           ///< frames a switch discarded: no route after link failures
    uint64_t ecnMarks = 0;             ///< DATA frames marked CE
    uint64_t pauses = 0;               ///< PFC PAUSE frames sent
    uint64_t resumes = 0;              ///< PFC RESUME frames sent
    uint64_t arrivalEvents = 0;        ///< frame arrivals at the far end of a channel
    uint64_t serviceEvents = 0;        ///< port-free / pacing wake-ups
    uint64_t ccEvents = 0;             ///< congestion-control timers
    uint64_t retransmitEvents = 0;     ///< retransmission-timeout checks
    uint64_t otherEvents = 0;          ///< flow starts, samplers
};

/// One end of a link: the transmitter of its directed channel and the
/// receiver of the opposite one.
struct RdmaPort
{
    uint32_t linkId = 0;     ///< index of the link spec (owner of its events)
    uint64_t rateBps = 0;
    int64_t delay = 0;       ///< propagation delay, in time steps
    RdmaDevice* peer = nullptr;
    uint32_t peerPort = 0;
    uint32_t peerContext = 0; ///< ns-3 node id of the peer (event context)

    int64_t busyUntil = 0;    ///< time step at which the frame on the wire ends
    uint64_t txCarry = 0;     ///< serialization remainder, so rates are exact on average
    bool servicePending = false;
    int64_t serviceAt = 0;
    EventId service;
    uint8_t pausedMask = 0;   ///< priorities the peer paused with PFC
    /// A backlog without frames (see AddBacklog): the port sends it from
    /// backlogStart to backlogEnd, counting what is left as queued.
    int64_t backlogStart = 0;
    int64_t backlogEnd = 0;
    uint64_t backlogBytes = 0; ///< the bytes put there since backlogStart (a drop before it gives them back exactly)
    /// Data bytes the port sends without wire time (see WaiveBytes).
    uint64_t waived = 0;

    uint64_t txFrames = 0;
    uint64_t txBytes = 0; ///< frames and frameless backlog sent, skipped frames included (HPCC's INT byte counter)
    /// Of txBytes, the wire bytes of frames skips credited (AccountSkippedFrames):
    /// the counter reads what the packet-level run's would, and a reader
    /// that must leave skipped bytes out of a rate subtracts these.
    uint64_t txCredited = 0;

    /// Probability that a frame sent here never arrives intact (the link's
    /// error rate); draw n is a hash of (lossKey, n), n = txFrames before it.
    double lossRate = 0;
    uint64_t lossKey = 0;
    bool up = true; ///< false while the link is failed: whatever is sent is lost
};

class RdmaDevice : public Object
{
  public:
    static TypeId GetTypeId();

    /// Signature of the "PfcReceived" trace.
    typedef void (*PfcReceivedTracedCallback)(uint32_t port, uint32_t priority, bool pause);

    /// A frame has fully arrived on `port` (scheduled by the peer's transmitter).
    virtual void Receive(uint32_t port, RdmaPacket* p) = 0;

    /// Called once by RdmaNetwork before any port is added.
    void Setup(Ptr<Node> node, uint32_t index, RdmaPacketPool* pool, RdmaCounters* counters);
    /// @return the new port's index (derived classes add their per-port state)
    virtual uint32_t AddPort(uint32_t linkId, uint64_t rateBps, int64_t delaySteps);
    void ConnectPort(uint32_t port, RdmaDevice* peer, uint32_t peerPort);
    /// Frames sent on `port` are lost with probability `rate`; the draws are
    /// counter-based with `key`, so they depend on this port's traffic only.
    void SetPortLoss(uint32_t port, double rate, uint64_t key);
    /// The port's link failed (up = false) or came back. A failed link
    /// carries no PAUSE: the priorities its peer paused are released.
    void SetPortUp(uint32_t port, bool up);
    /// The port's transmitted-byte counter starts at `bytes` (before any frame).
    void StartByteCounter(uint32_t port, uint64_t bytes);

    /// Routing table in CSR form: the equal-cost ports towards destination
    /// node d are ports[offsets[d] .. offsets[d+1]).
    void SetRoutes(std::vector<uint32_t> offsets, std::vector<uint16_t> ports, uint64_t ecmpSeed);
    bool HasRoute(uint32_t dst) const;
    /// ECMP: a deterministic hash of (src, dst, flow) and this device's seed.
    uint32_t SelectPort(uint32_t src, uint32_t dst, uint32_t flow) const;

    /// The Wormhole kernel moved the pending events of this port's link by
    /// dtSteps: move the port's own timestamps with them.
    void ShiftPort(uint32_t port, int64_t dtSteps);
    /// A skip credited `frames` frames of `wire` bytes that this port would
    /// have sent (negative: a skip-back took them back): leave its
    /// serialization remainder and frame count where sending them would have.
    void AccountSkippedFrames(uint32_t port, int64_t frames, uint32_t wire);
    /// Bytes of frameless backlog the port still has to send at `now`.
    uint64_t BacklogLeft(uint32_t port, int64_t now) const;
    /// Queue `bytes` of frameless backlog from `from` on (after what the
    /// port is sending then): the port stays busy for their serialization.
    void AddBacklog(uint32_t port, uint64_t bytes, int64_t from);
    /// Forget the frameless backlog not sent by `now`: the port is free when
    /// the frame it is sending ends.
    virtual void DropBacklog(uint32_t port, int64_t now);
    /// The next `bytes` of data frames leave the port without wire time
    /// (replacing what is left of an earlier waiver): frames a memo hit froze
    /// that the stored course had already delivered (docs/memo.md).
    void WaiveBytes(uint32_t port, uint64_t bytes);
    /// Bytes of the waiver not yet used: queued bytes that take no time.
    uint64_t WaivedLeft(uint32_t port) const;
    /// Per flow (dense index), the sequence number below which its data
    /// frames are exempt from ECN: switches neither mark them nor count them
    /// as queue for marking, and a sender ignores the echo of a mark they
    /// carried (RdmaNetwork::SetInFlightEcnExempt). Shared by the network's
    /// devices.
    void SetEcnExemptions(const std::vector<uint64_t>* exemptBelow);
    /// Per flow (dense index), its user-visible id: the name a frame's
    /// arrival event gives the kernel (wormhole::g_currentFlow). Shared by
    /// the network's devices.
    void SetFlowIds(const std::vector<uint32_t>* ids);

    uint32_t GetIndex() const;
    Ptr<Node> GetNode() const;
    uint32_t GetNPorts() const;
    const RdmaPort& GetPort(uint32_t i) const;

  protected:
    void DoDispose() override;

    /// Send the port's next frame, if any; called when the port is free.
    virtual void Service(uint32_t port) = 0;

    /// Put `p` on the wire now: the port is busy for wire*8/rate and the peer
    /// receives the frame one propagation delay after its last bit.
    void Transmit(RdmaPort& port, RdmaPacket* p);
    /// Make sure Service(port) runs at time step `at` at the latest.
    void ScheduleService(RdmaPort& port, uint32_t portIndex, int64_t at);

    /// A PFC PAUSE or RESUME frame arrived on `port`: (un)pause its priority
    /// and fire "PfcReceived". The caller frees the frame and, on a resume,
    /// restarts the port.
    void ApplyPfc(uint32_t port, const RdmaPacket& frame);

    static int64_t NowSteps()
    {
        return Simulator::Now().GetTimeStep();
    }

    std::vector<RdmaPort> m_ports;
    Ptr<Node> m_node;
    uint32_t m_index = 0;   ///< model node index
    uint32_t m_context = 0; ///< ns-3 node id
    RdmaPacketPool* m_pool = nullptr;
    RdmaCounters* m_counters = nullptr;
    /// A data frame below its flow's exemption, or an acknowledgement or CNP
    /// for one (its seq, the receiver's next expected byte, is at most it).
    bool EcnExempt(const RdmaPacket& p) const
    {
        const uint64_t below = p.flow < m_ecnExemptBelow->size() ? (*m_ecnExemptBelow)[p.flow] : 0;
        return below != 0 && (p.kind == RdmaPacketKind::DATA ? p.seq < below : p.seq <= below);
    }
    static const std::vector<uint64_t> kNoExemptions;
    const std::vector<uint64_t>* m_ecnExemptBelow = &kNoExemptions;
    static const std::vector<uint32_t> kNoFlowIds;
    const std::vector<uint32_t>* m_flowIds = &kNoFlowIds;
    uint64_t m_stepsPerSecond = 0;

  private:
    void ServiceEvent(uint32_t port);

    std::vector<uint32_t> m_routeOffsets;
    std::vector<uint16_t> m_routePorts;
    uint64_t m_ecmpSeed = 0;
    TracedCallback<uint32_t, uint32_t, bool> m_pfcReceivedTrace; ///< port, priority, pause
};

/// Draw n of the counter-based stream `key`, uniform in [0, 1): it depends on
/// (key, n) only, so no other port's or link's traffic moves it (isolation).
inline double
RdmaCounterUniform(uint64_t key, uint64_t n)
{
    return static_cast<double>(wormhole::Mix64(key ^ wormhole::Mix64(n)) >> 11) * 0x1.0p-53;
}

} // namespace ns3

#endif
