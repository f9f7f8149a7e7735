#include "rdma-nic.h"

#include "rdma-congestion-control.h"

#include "flow-seam.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaNic");
NS_OBJECT_ENSURE_REGISTERED(RdmaNic);

TypeId
RdmaNic::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaNic")
            .SetParent<RdmaDevice>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaNic>()
            .AddAttribute("Mtu",
                          "Payload bytes per DATA frame",
                          UintegerValue(1000),
                          MakeUintegerAccessor(&RdmaNic::m_mtu),
                          MakeUintegerChecker<uint32_t>(1, 65000))
            .AddAttribute("HeaderBytes",
                          "Header bytes added to the payload of a DATA frame on the wire",
                          UintegerValue(48),
                          MakeUintegerAccessor(&RdmaNic::m_headerBytes),
                          MakeUintegerChecker<uint32_t>(0, 1024))
            .AddAttribute("AckInterval",
                          "The receiver ACKs every this many in-order DATA frames",
                          UintegerValue(1),
                          MakeUintegerAccessor(&RdmaNic::m_ackInterval),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("NackInterval",
                          "The receiver repeats a NACK for the same expected byte "
                          "only after this long",
                          TimeValue(MicroSeconds(500)),
                          MakeTimeAccessor(&RdmaNic::m_nackInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("RetransmitTimeout",
                          "Go back to the first unacknowledged byte when nothing is "
                          "acknowledged for this long",
                          TimeValue(MilliSeconds(4)),
                          MakeTimeAccessor(&RdmaNic::m_retransmitTimeout),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("Ifg",
                          "Gap added to the pacing interval of every DATA frame",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&RdmaNic::m_ifg),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("AckHighPriority",
                          "ACK, NACK and CNP frames travel in the strict-priority control "
                          "queue of switches (HPCC ACK_HIGH_PRIO 1); false: in the data "
                          "queue of their flow's priority group, through the MMU",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RdmaNic::m_ackHighPriority),
                          MakeBooleanChecker());
    return tid;
}

uint32_t
RdmaNic::AddPort(uint32_t linkId, uint64_t rateBps, int64_t delaySteps)
{
    m_egress.emplace_back();
    return RdmaDevice::AddPort(linkId, rateBps, delaySteps);
}

uint32_t
RdmaNic::GetMtu() const
{
    return m_mtu;
}

uint32_t
RdmaNic::GetHeaderBytes() const
{
    return m_headerBytes;
}

uint32_t
RdmaNic::GetAckInterval() const
{
    return m_ackInterval;
}

void
RdmaNic::SetFlowTable(const FlowTable* flows)
{
    m_flows = flows;
}

void
RdmaNic::SetFlowDoneCallback(Callback<void, RdmaQueuePair&> cb)
{
    m_flowDone = cb;
}

void
RdmaNic::DoDispose()
{
    m_egress.clear();
    m_flows = nullptr;
    m_flowDone = Callback<void, RdmaQueuePair&>();
    RdmaDevice::DoDispose();
}

// ---------------------------------------------------------------- sender

void
RdmaNic::StartFlow(RdmaQueuePair& qp)
{
    NS_LOG_FUNCTION(this << qp.id);
    const int64_t now = NowSteps();
    qp.nic = this;
    qp.port = SelectPort(m_index, qp.dst, qp.ecmpKey);
    qp.lineRate = static_cast<double>(m_ports[qp.port].rateBps);
    qp.rate = qp.lineRate;
    qp.nextAvail = static_cast<double>(now);
    qp.startStep = now;
    qp.counters = m_counters;
    qp.cc->Start(&qp);
    m_egress[qp.port].qps.push_back(&qp);
    Kick(qp.port);
}

double
RdmaNic::PacingGap(const RdmaQueuePair& qp, uint32_t wire, double rate) const
{
    // At line rate the port's own serialization is the pacing; a separate,
    // separately rounded gap would only add wake-ups.
    const auto ifg = static_cast<double>(m_ifg.GetTimeStep());
    if (rate >= qp.lineRate && ifg == 0)
    {
        return 0;
    }
    return ifg + static_cast<double>(wire) * 8 * static_cast<double>(m_stepsPerSecond) / rate;
}

void
RdmaNic::SetQpRate(RdmaQueuePair& qp, double bps)
{
    if (bps == qp.rate)
    {
        return;
    }
    const double old = qp.rate;
    qp.rate = bps;
    if (qp.lastWire)
    {
        qp.nextAvail += PacingGap(qp, qp.lastWire, bps) - PacingGap(qp, qp.lastWire, old);
    }
    if (bps > old)
    {
        Kick(qp.port); // the next frame may now leave earlier
    }
}

void
RdmaNic::Kick(uint32_t port)
{
    const RdmaPort& p = m_ports[port];
    const int64_t now = NowSteps();
    if (now < p.busyUntil)
    {
        ScheduleNext(port);
        return;
    }
    if (p.servicePending && p.serviceAt <= now)
    {
        return; // a service runs at this instant anyway
    }
    Service(port);
}

RdmaQueuePair*
RdmaNic::PickQp(Egress& eg, const RdmaPort& port, int64_t now)
{
    const auto n = static_cast<uint32_t>(eg.qps.size());
    const auto t = static_cast<double>(now);
    for (uint32_t k = 1; k <= n; ++k)
    {
        const uint32_t i = (eg.rr + k) % n;
        RdmaQueuePair* qp = eg.qps[i];
        if (!(port.pausedMask >> qp->pg & 1) && HasSendable(*qp) && qp->nextAvail <= t)
        {
            eg.rr = i;
            return qp;
        }
    }
    return nullptr;
}

void
RdmaNic::Service(uint32_t port)
{
    RdmaPort& p = m_ports[port];
    const int64_t now = NowSteps();
    if (now < p.busyUntil)
    {
        ScheduleNext(port); // woken for pacing while a kicked frame is on the wire
        return;
    }
    Egress& eg = m_egress[port];
    RdmaPacket* frame = eg.control.Pop();
    if (!frame)
    {
        if (RdmaQueuePair* qp = PickQp(eg, p, now))
        {
            frame = MakeData(*qp, now);
        }
    }
    if (frame)
    {
        Transmit(p, frame);
    }
    ScheduleNext(port);
}

void
RdmaNic::ScheduleNext(uint32_t port)
{
    RdmaPort& p = m_ports[port];
    const Egress& eg = m_egress[port];
    if (!eg.control.IsEmpty())
    {
        ScheduleService(p, port, p.busyUntil);
        return;
    }
    double earliest = std::numeric_limits<double>::infinity();
    for (const RdmaQueuePair* qp : eg.qps)
    {
        if (!(p.pausedMask >> qp->pg & 1) && HasSendable(*qp))
        {
            earliest = std::min(earliest, qp->nextAvail);
        }
    }
    if (earliest != std::numeric_limits<double>::infinity())
    {
        ScheduleService(p, port, std::max(p.busyUntil, static_cast<int64_t>(std::ceil(earliest))));
    }
}

bool
RdmaNic::HasSendable(const RdmaQueuePair& qp)
{
    return qp.sndNxt < qp.size &&
           (qp.window == 0 || static_cast<double>(qp.sndNxt - qp.sndUna) < qp.window);
}

RdmaPacket*
RdmaNic::MakeData(RdmaQueuePair& qp, int64_t now)
{
    RdmaPacket* p = m_pool->Alloc();
    p->kind = RdmaPacketKind::DATA;
    p->flow = qp.index;
    p->ecmpKey = qp.ecmpKey;
    p->src = m_index;
    p->dst = qp.dst;
    p->pg = static_cast<uint8_t>(qp.pg);
    p->seq = qp.sndNxt;
    p->offset = qp.sndNxt + qp.creditedBytes;
    p->payload = static_cast<uint32_t>(std::min<uint64_t>(m_mtu, qp.size - qp.sndNxt));
    p->wire = p->payload + m_headerBytes + qp.telemetryBytes;
    if (qp.telemetry)
    {
        p->telemetry = m_pool->AllocTelemetry();
        p->telemetry->sentAt = now - qp.clockShift;
        p->telemetry->collectHops = qp.telemetry > 1;
    }

    qp.dataPackets++;
    m_counters->dataPackets++;
    if (p->seq < qp.maxSent)
    {
        qp.retransmitted++;
        m_counters->retransmittedPackets++;
    }
    qp.sndNxt += p->payload;
    qp.maxSent = std::max(qp.maxSent, qp.sndNxt);

    // Pace from the scheduled send time when the frame left within a time
    // step of it (rounding), so the average rate is exact; from now otherwise.
    const auto t = static_cast<double>(now);
    const double base = (t - qp.nextAvail < 1.0) ? qp.nextAvail : t;
    qp.nextAvail = base + PacingGap(qp, p->wire, qp.rate);
    qp.lastWire = p->wire;

    if (!qp.rtoPending)
    {
        qp.lastProgress = now;
        ArmRetransmit(qp, now + m_retransmitTimeout.GetTimeStep());
    }
    return p;
}

void
RdmaNic::ArmRetransmit(RdmaQueuePair& qp, int64_t at)
{
    qp.rtoPending = true;
    m_counters->retransmitEvents++;
    wormhole::OwnerScope owner(qp.links.front());
    qp.rto = Simulator::Schedule(TimeStep(at - NowSteps()), &RdmaNic::RetransmitCheck, this, &qp);
}

void
RdmaNic::RetransmitCheck(RdmaQueuePair* qp)
{
    // One lazily re-armed event per timeout period instead of a restart per ACK.
    qp->rtoPending = false;
    if (qp->sndUna >= qp->sndNxt)
    {
        return; // nothing outstanding; the next DATA frame re-arms
    }
    const int64_t now = NowSteps();
    const int64_t deadline = qp->lastProgress + m_retransmitTimeout.GetTimeStep();
    if (now < deadline)
    {
        ArmRetransmit(*qp, deadline);
        return;
    }
    NS_LOG_LOGIC("flow " << qp->id << " timeout, back to " << qp->sndUna);
    qp->timeouts++;
    m_counters->timeouts++;
    qp->sndNxt = qp->sndUna;
    qp->lastProgress = now;
    ArmRetransmit(*qp, now + m_retransmitTimeout.GetTimeStep());
    Kick(qp->port);
}

void
RdmaNic::ReceiveAck(RdmaPacket& p)
{
    RdmaQueuePair& qp = *(*m_flows)[p.flow];
    if (qp.IsFinished())
    {
        return;
    }
    const bool advanced = p.seq > qp.sndUna;
    if (advanced)
    {
        qp.sndUna = std::min(p.seq, qp.size);
        qp.sndNxt = std::max(qp.sndNxt, qp.sndUna);
        qp.lastProgress = NowSteps();
    }
    if (qp.sndUna >= qp.size)
    {
        Complete(qp);
        return;
    }
    // The echo of a mark on a frame a memo hit froze: the state it restored
    // has already answered it.
    p.cnp = p.cnp && !EcnExempt(p);
    if (p.cnp)
    {
        m_counters->cnps++;
        qp.cc->OnCnp();
    }
    qp.cc->OnAck(p);
    const uint64_t sent = qp.sndNxt;
    if (p.kind == RdmaPacketKind::NACK)
    {
        qp.sndNxt = qp.sndUna; // go-back-N
        Kick(qp.port);
    }
    else if (qp.window != 0 && advanced)
    {
        Kick(qp.port); // the window opened
    }
    // Reported last: the kernel may skip the flow's partition from inside
    // this call (a memo hit, a fast-forward), and what this ACK schedules
    // (the send a window opening wakes) must exist by then to move with the
    // partition. Scheduled after the skip instead, it was an outside event
    // on a skipping link: the hit was undone at once, and the send, timed
    // from the shifted port, stayed at the old skip end (docs/congestion-control.md).
    wormhole::FlowSeam::Progress(qp.id, qp.rate, qp.sndUna, sent);
}

void
RdmaNic::Complete(RdmaQueuePair& qp)
{
    NS_LOG_FUNCTION(this << qp.id);
    qp.finishStep = NowSteps();
    qp.cc->Stop();
    qp.rto.Cancel();
    qp.rtoPending = false;
    Egress& eg = m_egress[qp.port];
    const auto it = std::find(eg.qps.begin(), eg.qps.end(), &qp);
    const auto i = static_cast<uint32_t>(it - eg.qps.begin());
    eg.qps.erase(it);
    // Keep the round robin where it was.
    if (i <= eg.rr && eg.rr > 0)
    {
        eg.rr--;
    }
    if (!m_flowDone.IsNull())
    {
        m_flowDone(qp);
    }
    // Nothing asks a finished flow's controller again (its timers are
    // stopped, and whoever reads its last state, as the Wormhole kernel
    // does, has done so above). Released, it stops costing its few hundred
    // bytes for the rest of a step that starts a million flows.
    qp.cc->Dispose();
    qp.cc = nullptr;
}

int64_t
RdmaNic::CreditFlow(RdmaQueuePair& qp, int64_t bytes, int64_t dtSteps)
{
    if (qp.IsFinished())
    {
        return 0;
    }
    // Never credit bytes already sent, nor take back more than was credited.
    const auto unsent = static_cast<int64_t>(qp.size - qp.sndNxt);
    const int64_t least = -static_cast<int64_t>(qp.creditedBytes);
    int64_t credit = std::clamp(bytes, least, unsent);
    if (credit != unsent)
    {
        // Whole frames (the nearest number), as the flow would have sent
        // them: the frames left keep the reference's packetization, and the
        // ports the credited frames are booked on stay in phase
        // (RdmaNetwork::CreditFlow).
        const auto mtu = static_cast<int64_t>(m_mtu);
        const int64_t rest = credit % mtu;
        credit -= rest;
        if (2 * std::abs(rest) >= mtu)
        {
            credit += rest > 0 ? mtu : -mtu;
        }
        credit = std::clamp(credit, least, unsent);
    }
    qp.size = static_cast<uint64_t>(static_cast<int64_t>(qp.size) - credit);
    qp.creditedBytes = static_cast<uint64_t>(static_cast<int64_t>(qp.creditedBytes) + credit);
    qp.nextAvail += static_cast<double>(dtSteps);
    qp.lastProgress += dtSteps;
    qp.nackUntil += dtSteps;
    qp.clockShift += dtSteps;
    qp.cc->Shift(dtSteps);
    qp.cc->Credited(credit);
    if (dtSteps > 0)
    {
        qp.cc->Skipped(dtSteps);
    }
    if (qp.sndUna >= qp.size)
    {
        Complete(qp);
    }
    return credit;
}

// -------------------------------------------------------------- receiver

void
RdmaNic::Receive(uint32_t port, RdmaPacket* p)
{
    switch (p->kind)
    {
    case RdmaPacketKind::DATA:
        ReceiveData(*p);
        break;
    case RdmaPacketKind::ACK:
    case RdmaPacketKind::NACK:
        ReceiveAck(*p);
        break;
    case RdmaPacketKind::CNP: {
        RdmaQueuePair& qp = *(*m_flows)[p->flow];
        if (!qp.IsFinished() && !EcnExempt(*p))
        {
            m_counters->cnps++;
            qp.cc->OnCnp();
        }
        break;
    }
    case RdmaPacketKind::PAUSE:
        ApplyPfc(port, *p);
        break;
    case RdmaPacketKind::RESUME:
        ApplyPfc(port, *p);
        Kick(port);
        break;
    }
    m_pool->Free(p);
}

void
RdmaNic::ReceiveData(RdmaPacket& p)
{
    RdmaQueuePair& qp = *(*m_flows)[p.flow];
    // The frame is freed after this; what it collected goes with its ACK.
    RdmaTelemetry* echo = p.telemetry;
    p.telemetry = nullptr;
    if (p.seq == qp.rcvNxt)
    {
        qp.rcvNxt += p.payload;
        if (++qp.unacked >= m_ackInterval || qp.rcvNxt >= qp.size)
        {
            qp.unacked = 0;
            SendControl(qp, RdmaPacketKind::ACK, p.ce, std::exchange(echo, nullptr));
        }
        else if (p.ce)
        {
            SendControl(qp, RdmaPacketKind::CNP, true);
        }
    }
    else if (p.seq > qp.rcvNxt)
    {
        // A gap: the frame is discarded (go-back-N) and the sender told where
        // to restart, at most once per NackInterval for the same byte.
        const int64_t now = NowSteps();
        if (now >= qp.nackUntil || qp.lastNack != qp.rcvNxt)
        {
            qp.nackUntil = now + m_nackInterval.GetTimeStep();
            qp.lastNack = qp.rcvNxt;
            SendControl(qp, RdmaPacketKind::NACK, p.ce, std::exchange(echo, nullptr));
        }
        else if (p.ce)
        {
            SendControl(qp, RdmaPacketKind::CNP, true);
        }
    }
    else
    {
        SendControl(qp, RdmaPacketKind::ACK, p.ce, std::exchange(echo, nullptr)); // duplicate: re-ACK
    }
    if (echo)
    {
        m_pool->FreeTelemetry(echo);
    }
}

void
RdmaNic::SendControl(RdmaQueuePair& qp, RdmaPacketKind kind, bool cnp, RdmaTelemetry* echo)
{
    RdmaPacket* c = m_pool->Alloc();
    c->kind = kind;
    c->flow = qp.index;
    c->ecmpKey = qp.ecmpKey;
    c->src = m_index;
    c->dst = qp.src;
    c->seq = qp.rcvNxt;
    c->wire = kRdmaControlBytes + (kind == RdmaPacketKind::CNP ? 0 : qp.telemetryBytes);
    c->cnp = cnp;
    c->telemetry = echo;
    c->pg = m_ackHighPriority ? 0 : static_cast<uint8_t>(qp.pg);
    if (kind == RdmaPacketKind::ACK)
    {
        m_counters->acks++;
    }
    else if (kind == RdmaPacketKind::NACK)
    {
        m_counters->nacks++;
    }
    const uint32_t port = SelectPort(m_index, qp.src, qp.ecmpKey);
    m_egress[port].control.Push(c);
    Kick(port);
}

} // namespace ns3
