#include "rdma-device.h"

#include "flow-seam.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/nstime.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaDevice");
NS_OBJECT_ENSURE_REGISTERED(RdmaDevice);

TypeId
RdmaDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaDevice")
            .SetParent<Object>()
            .SetGroupName("Rdma")
            .AddTraceSource("PfcReceived",
                            "A PFC frame arrived (the sender of this port is paused or "
                            "resumed): port, priority, true for PAUSE",
                            MakeTraceSourceAccessor(&RdmaDevice::m_pfcReceivedTrace),
                            "ns3::RdmaDevice::PfcReceivedTracedCallback");
    return tid;
}

void
RdmaDevice::Setup(Ptr<Node> node, uint32_t index, RdmaPacketPool* pool, RdmaCounters* counters)
{
    m_node = node;
    m_index = index;
    m_context = node->GetId();
    m_pool = pool;
    m_counters = counters;
    m_stepsPerSecond = static_cast<uint64_t>(Seconds(1).GetTimeStep());
    // wire*8*steps/s must fit in 64 bits for any frame (see Transmit).
    NS_ABORT_MSG_IF(m_stepsPerSecond > 1000000000000ULL,
                    "RDMA model needs a time resolution of 1 ps or coarser");
}

uint32_t
RdmaDevice::AddPort(uint32_t linkId, uint64_t rateBps, int64_t delaySteps)
{
    RdmaPort port;
    port.linkId = linkId;
    port.rateBps = rateBps;
    port.delay = delaySteps;
    m_ports.push_back(port);
    return static_cast<uint32_t>(m_ports.size() - 1);
}

void
RdmaDevice::ConnectPort(uint32_t port, RdmaDevice* peer, uint32_t peerPort)
{
    m_ports[port].peer = peer;
    m_ports[port].peerPort = peerPort;
    m_ports[port].peerContext = peer->m_context;
}

void
RdmaDevice::SetRoutes(std::vector<uint32_t> offsets, std::vector<uint16_t> ports, uint64_t ecmpSeed)
{
    m_routeOffsets = std::move(offsets);
    m_routePorts = std::move(ports);
    m_ecmpSeed = ecmpSeed;
}

bool
RdmaDevice::HasRoute(uint32_t dst) const
{
    return dst + 1 < m_routeOffsets.size() && m_routeOffsets[dst + 1] > m_routeOffsets[dst];
}

uint32_t
RdmaDevice::SelectPort(uint32_t src, uint32_t dst, uint32_t flow) const
{
    const uint32_t first = m_routeOffsets[dst];
    const uint32_t n = m_routeOffsets[dst + 1] - first;
    if (n == 1)
    {
        return m_routePorts[first];
    }
    const uint64_t key = (static_cast<uint64_t>(src) << 32) | dst;
    const uint64_t h = wormhole::Mix64(wormhole::Mix64(key ^ m_ecmpSeed) ^ flow);
    return m_routePorts[first + h % n];
}

void
RdmaDevice::ShiftPort(uint32_t port, int64_t dtSteps)
{
    RdmaPort& p = m_ports[port];
    p.busyUntil += dtSteps;
    p.backlogStart += dtSteps;
    p.backlogEnd += dtSteps;
    if (p.servicePending)
    {
        p.serviceAt += dtSteps;
    }
}

void
RdmaDevice::AccountSkippedFrames(uint32_t port, int64_t frames, uint32_t wire)
{
    // Frames after a skip then serialise in the same 1-step rounding phase,
    // and draw the same loss numbers, as they would have packet by packet.
    RdmaPort& p = m_ports[port];
    const uint64_t rate = p.rateBps;
    const auto perFrame = static_cast<uint64_t>(static_cast<unsigned __int128>(wire) * 8 * m_stepsPerSecond % rate);
    const uint64_t count = (frames >= 0 ? static_cast<uint64_t>(frames) : static_cast<uint64_t>(-frames)) % rate;
    const auto carry = static_cast<uint64_t>(static_cast<unsigned __int128>(perFrame) * count % rate);
    p.txCarry = frames >= 0 ? (p.txCarry + carry) % rate : (p.txCarry + rate - carry) % rate;
    p.txFrames += static_cast<uint64_t>(frames);
    // The byte counter too: HPCC reads it in 128-byte units, so its absolute
    // value (not only its increments) decides each later sample's rounding.
    // Left without the skipped frames, every flow through the port after a
    // skipped one would round in another phase than the reference's: a
    // second 4-to-1 HPCC incast wave then split its port evenly where the
    // reference's split it two ways (docs/fast-forward.md).
    const uint64_t bytes = (frames >= 0 ? static_cast<uint64_t>(frames) : static_cast<uint64_t>(-frames)) * wire;
    if (frames >= 0)
    {
        p.txBytes += bytes;
        p.txCredited += bytes;
    }
    else
    {
        p.txBytes -= std::min(p.txBytes, bytes);
        p.txCredited -= std::min(p.txCredited, bytes);
    }
}

uint64_t
RdmaDevice::BacklogLeft(uint32_t port, int64_t now) const
{
    const RdmaPort& p = m_ports[port];
    if (now >= p.backlogEnd)
    {
        return 0;
    }
    const auto steps = static_cast<double>(p.backlogEnd - std::max(now, p.backlogStart));
    return static_cast<uint64_t>(steps * static_cast<double>(p.rateBps) / 8.0 /
                                 static_cast<double>(m_stepsPerSecond));
}

void
RdmaDevice::AddBacklog(uint32_t port, uint64_t bytes, int64_t from)
{
    RdmaPort& p = m_ports[port];
    if (bytes == 0)
    {
        return;
    }
    const int64_t start = std::max({from, p.busyUntil, p.backlogEnd});
    const auto tx = static_cast<int64_t>(static_cast<double>(bytes) * 8.0 *
                                         static_cast<double>(m_stepsPerSecond) /
                                         static_cast<double>(p.rateBps));
    if (p.backlogEnd <= std::max(from, p.busyUntil))
    {
        p.backlogStart = start;
        p.backlogBytes = 0;
    }
    p.backlogBytes += bytes;
    p.backlogEnd = start + tx;
    p.busyUntil = p.backlogEnd;
    // Counted as sent now: no frame leaves, so no INT record is taken,
    // before the backlog has gone.
    p.txBytes += bytes;
    // A pending service stays where it is and, finding the port busy with
    // the backlog, waits for its end (RdmaSwitch::Service): moved here, it
    // would be a new event, and a backlog dropped again (a memo hit undone)
    // could not give the port back its own.
}

void
RdmaDevice::DropBacklog(uint32_t port, int64_t now)
{
    RdmaPort& p = m_ports[port];
    if (now >= p.backlogEnd)
    {
        return;
    }
    // Nothing of it was sent: none goes into the byte counter (all of it,
    // to the byte, if it had not begun).
    p.txBytes -= std::min(p.txBytes, now <= p.backlogStart ? p.backlogBytes : BacklogLeft(port, now));
    p.backlogBytes = 0;
    const int64_t from = std::max(now, p.backlogStart);
    if (p.busyUntil == p.backlogEnd)
    {
        p.busyUntil = from;
    }
    p.backlogEnd = from;
    if (p.servicePending && p.serviceAt > p.busyUntil)
    {
        ScheduleService(p, port, p.busyUntil);
    }
}

void
RdmaDevice::WaiveBytes(uint32_t port, uint64_t bytes)
{
    m_ports[port].waived = bytes;
}

const std::vector<uint64_t> RdmaDevice::kNoExemptions;
const std::vector<uint32_t> RdmaDevice::kNoFlowIds;

void
RdmaDevice::SetFlowIds(const std::vector<uint32_t>* ids)
{
    m_flowIds = ids;
}

void
RdmaDevice::SetEcnExemptions(const std::vector<uint64_t>* exemptBelow)
{
    m_ecnExemptBelow = exemptBelow;
}

uint64_t
RdmaDevice::WaivedLeft(uint32_t port) const
{
    return m_ports[port].waived;
}

void
RdmaDevice::SetPortLoss(uint32_t port, double rate, uint64_t key)
{
    m_ports.at(port).lossRate = rate;
    m_ports.at(port).lossKey = key;
}

void
RdmaDevice::StartByteCounter(uint32_t port, uint64_t bytes)
{
    m_ports[port].txBytes = bytes;
}

void
RdmaDevice::SetPortUp(uint32_t port, bool up)
{
    RdmaPort& p = m_ports.at(port);
    p.up = up;
    if (!up)
    {
        p.pausedMask = 0;
    }
}

uint32_t
RdmaDevice::GetIndex() const
{
    return m_index;
}

Ptr<Node>
RdmaDevice::GetNode() const
{
    return m_node;
}

uint32_t
RdmaDevice::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

const RdmaPort&
RdmaDevice::GetPort(uint32_t i) const
{
    return m_ports.at(i);
}

void
RdmaDevice::ApplyPfc(uint32_t port, const RdmaPacket& frame)
{
    const bool pause = frame.kind == RdmaPacketKind::PAUSE;
    const auto bit = static_cast<uint8_t>(1u << frame.pg);
    RdmaPort& p = m_ports[port];
    p.pausedMask = pause ? static_cast<uint8_t>(p.pausedMask | bit) : static_cast<uint8_t>(p.pausedMask & ~bit);
    m_pfcReceivedTrace(port, frame.pg, pause);
    if (pause)
    {
        wormhole::FlowSeam::Queued(p.linkId, std::numeric_limits<uint64_t>::max(), 0);
    }
}

void
RdmaDevice::DoDispose()
{
    for (auto& port : m_ports)
    {
        port.service.Cancel();
        port.peer = nullptr;
    }
    m_node = nullptr;
    Object::DoDispose();
}

void
RdmaDevice::Transmit(RdmaPort& port, RdmaPacket* p)
{
    // Exact serialization time in time steps; the remainder is carried to the
    // next frame so a busy port runs at exactly its rate.
    bool delivered = false;
    if (port.waived != 0 && p->kind == RdmaPacketKind::DATA)
    {
        // Already delivered in the course a memo hit resumed from: the frame
        // goes on at once and leaves the serialization remainder as it was.
        // Less than a frame left is forgotten.
        delivered = port.waived >= p->wire;
        port.waived = delivered ? port.waived - p->wire : 0;
    }
    int64_t tx = 0;
    if (!delivered)
    {
        const uint64_t bits = static_cast<uint64_t>(p->wire) * 8 * m_stepsPerSecond + port.txCarry;
        tx = static_cast<int64_t>(bits / port.rateBps);
        port.txCarry = bits % port.rateBps;
    }
    port.busyUntil = NowSteps() + tx;
    const uint64_t n = port.txFrames++;
    port.txBytes += p->wire;
    // A corrupted frame still occupies the wire; the receiver discards it.
    // PFC frames are exempt: the model's PAUSE has no expiry timer, so a lost
    // RESUME would stall the priority for ever.
    if (!port.up ||
        (port.lossRate > 0 && p->kind != RdmaPacketKind::PAUSE && p->kind != RdmaPacketKind::RESUME &&
         RdmaCounterUniform(port.lossKey, n) < port.lossRate))
    {
        m_counters->linkLosses++;
        m_pool->Free(p);
        return;
    }
    m_counters->arrivalEvents++;
    // PFC frames belong to the link; every other frame to its flow.
    const bool flowFrame = p->kind != RdmaPacketKind::PAUSE && p->kind != RdmaPacketKind::RESUME;
    const uint32_t flow = flowFrame && p->flow < m_flowIds->size() ? (*m_flowIds)[p->flow] : wormhole::kNoFlow;
    wormhole::OwnerScope owner(port.linkId, flow);
    Simulator::ScheduleWithContext(port.peerContext,
                                   TimeStep(tx + port.delay),
                                   &RdmaDevice::Receive,
                                   port.peer,
                                   port.peerPort,
                                   p);
}

void
RdmaDevice::ScheduleService(RdmaPort& port, uint32_t portIndex, int64_t at)
{
    const int64_t now = NowSteps();
    at = std::max(at, now);
    if (port.servicePending)
    {
        if (port.serviceAt <= at)
        {
            return;
        }
        port.service.Cancel();
    }
    port.servicePending = true;
    port.serviceAt = at;
    m_counters->serviceEvents++;
    wormhole::OwnerScope owner(port.linkId);
    port.service = Simulator::Schedule(TimeStep(at - now),
                                       &RdmaDevice::ServiceEvent,
                                       this,
                                       portIndex);
}

void
RdmaDevice::ServiceEvent(uint32_t port)
{
    m_ports[port].servicePending = false;
    Service(port);
}

} // namespace ns3
