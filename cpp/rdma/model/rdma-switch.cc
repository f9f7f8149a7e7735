#include "rdma-switch.h"

#include "flow-seam.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaSwitch");
NS_OBJECT_ENSURE_REGISTERED(RdmaSwitch);

TypeId
RdmaSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaSwitch")
            .SetParent<RdmaDevice>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaSwitch>()
            .AddAttribute("EcnEnabled",
                          "Mark CE on DATA frames at dequeue",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RdmaSwitch::m_ecnEnabled),
                          MakeBooleanChecker())
            .AddAttribute("KminPer100G",
                          "ECN Kmin in bytes for a 100 Gb/s port (scaled with the port rate)",
                          UintegerValue(400000),
                          MakeUintegerAccessor(&RdmaSwitch::m_kminPer100G),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("KmaxPer100G",
                          "ECN Kmax in bytes for a 100 Gb/s port (scaled with the port rate)",
                          UintegerValue(1600000),
                          MakeUintegerAccessor(&RdmaSwitch::m_kmaxPer100G),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Pmax",
                          "Marking probability at Kmax",
                          DoubleValue(0.2),
                          MakeDoubleAccessor(&RdmaSwitch::m_pmax),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("EcnMap",
                          "Per link rate thresholds, overriding the per-100G rule for "
                          "ports of those rates: comma-separated "
                          "rate_bps:kmin_bytes:kmax_bytes:pmax entries (empty: none)",
                          StringValue(""),
                          MakeStringAccessor(&RdmaSwitch::m_ecnMap),
                          MakeStringChecker())
            .AddAttribute("EcmpSeed",
                          "Mixed with the network seed and the node index into this "
                          "switch's ECMP hash seed",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdmaSwitch::m_ecmpSeed),
                          MakeUintegerChecker<uint64_t>())
            .AddTraceSource("Pfc",
                            "A PFC frame is sent: port, priority, true for PAUSE",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_pfcTrace),
                            "ns3::RdmaSwitch::PfcTracedCallback")
            .AddTraceSource("Drop",
                            "The MMU dropped a frame: ingress port, frame",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_dropTrace),
                            "ns3::RdmaSwitch::DropTracedCallback");
    return tid;
}

uint32_t
RdmaSwitch::AddPort(uint32_t linkId, uint64_t rateBps, int64_t delaySteps)
{
    m_egress.emplace_back();
    return RdmaDevice::AddPort(linkId, rateBps, delaySteps);
}

void
RdmaSwitch::SetMmu(Ptr<RdmaSwitchMmu> mmu)
{
    m_mmu = mmu;
}

Ptr<RdmaSwitchMmu>
RdmaSwitch::GetMmu() const
{
    return m_mmu;
}

namespace
{

/// Port rate -> (Kmin, Kmax, Pmax), from the EcnMap attribute's text.
std::map<uint64_t, std::tuple<uint64_t, uint64_t, double>>
ParseEcnMap(const std::string& text)
{
    std::map<uint64_t, std::tuple<uint64_t, uint64_t, double>> map;
    std::istringstream entries(text);
    std::string entry;
    while (std::getline(entries, entry, ','))
    {
        if (entry.find_first_not_of(" \t") == std::string::npos)
        {
            continue;
        }
        std::istringstream in(entry);
        uint64_t rate = 0;
        uint64_t kmin = 0;
        uint64_t kmax = 0;
        double pmax = 0;
        char c1 = 0;
        char c2 = 0;
        char c3 = 0;
        if (!(in >> rate >> c1 >> kmin >> c2 >> kmax >> c3 >> pmax) || c1 != ':' || c2 != ':' ||
            c3 != ':' || !(in >> std::ws).eof() || rate == 0 || kmin > kmax || !(pmax >= 0 && pmax <= 1) ||
            !map.emplace(rate, std::make_tuple(kmin, kmax, pmax)).second)
        {
            throw std::invalid_argument("ns3::RdmaSwitch::EcnMap: bad entry '" + entry +
                                        "' (want rate_bps:kmin_bytes:kmax_bytes:pmax, "
                                        "kmin <= kmax, 0 <= pmax <= 1, each rate once)");
        }
    }
    return map;
}

} // namespace

void
RdmaSwitch::ConfigureEcn(uint64_t seed)
{
    const auto map = ParseEcnMap(m_ecnMap);
    for (size_t i = 0; i < m_ports.size(); ++i)
    {
        Egress& eg = m_egress[i];
        eg.ecnKey = wormhole::Mix64(seed ^ wormhole::Mix64(i));
        const auto it = map.find(m_ports[i].rateBps);
        if (it != map.end())
        {
            std::tie(eg.kmin, eg.kmax, eg.pmax) = it->second;
            continue;
        }
        const double scale = static_cast<double>(m_ports[i].rateBps) / 100e9;
        eg.kmin = static_cast<uint64_t>(static_cast<double>(m_kminPer100G) * scale);
        eg.kmax = static_cast<uint64_t>(static_cast<double>(m_kmaxPer100G) * scale);
        eg.pmax = m_pmax;
    }
}

void
RdmaSwitch::GetEcnThresholds(uint32_t port, uint64_t& kmin, uint64_t& kmax, double& pmax) const
{
    const Egress& eg = m_egress.at(port);
    kmin = eg.kmin;
    kmax = eg.kmax;
    pmax = eg.pmax;
}

uint64_t
RdmaSwitch::GetEcmpSeed() const
{
    return m_ecmpSeed;
}

uint64_t
RdmaSwitch::GetQueueBytes(uint32_t port) const
{
    const Egress& eg = m_egress.at(port);
    uint64_t bytes = eg.pfc.GetBytes() + BacklogLeft(port, NowSteps());
    for (const auto& q : eg.queues)
    {
        bytes += q.GetBytes();
    }
    // Waived bytes leave without wire time: they delay nothing behind them.
    return bytes - std::min(bytes, WaivedLeft(port));
}

uint64_t
RdmaSwitch::GetPausesSent(uint32_t port) const
{
    return m_egress.at(port).pauses;
}

uint64_t
RdmaSwitch::GetResumesSent(uint32_t port) const
{
    return m_egress.at(port).resumes;
}

void
RdmaSwitch::DoDispose()
{
    for (auto& eg : m_egress)
    {
        eg.settle.Cancel();
    }
    m_egress.clear();
    m_mmu = nullptr;
    RdmaDevice::DoDispose();
}

void
RdmaSwitch::Receive(uint32_t in, RdmaPacket* p)
{
    switch (p->kind)
    {
    case RdmaPacketKind::PAUSE:
        ApplyPfc(in, *p);
        m_pool->Free(p);
        return;
    case RdmaPacketKind::RESUME:
        ApplyPfc(in, *p);
        m_pool->Free(p);
        Kick(in);
        return;
    default:
        break;
    }
    if (!HasRoute(p->dst))
    {
        m_counters->unroutable++; // cut off by link failures
        m_pool->Free(p);
        return;
    }
    const uint32_t out = SelectPort(p->src, p->dst, p->ecmpKey);
    // Control frames use queue 0, outside the MMU (as HPCC): never dropped
    // or paused-for. ACKs sent without high priority carry their flow's
    // priority group and are queued like data.
    const uint32_t q = p->pg;
    if (q != 0)
    {
        SettleBacklogs();
        const RdmaSwitchMmu::Arrival verdict = m_mmu->Arrive(in, out, q, p->wire);
        if (verdict == RdmaSwitchMmu::Arrival::DROPPED)
        {
            NS_LOG_LOGIC("drop flow " << p->flow << " seq " << p->seq << " at port " << in);
            m_counters->drops++;
            m_dropTrace(in, *p);
            m_pool->Free(p);
            return;
        }
        if (verdict == RdmaSwitchMmu::Arrival::PAUSE)
        {
            SendPfc(in, q, true);
        }
    }
    p->inPort = static_cast<uint16_t>(in);
    Egress& eg = m_egress[out];
    if (p->kind == RdmaPacketKind::DATA && EcnExempt(*p))
    {
        eg.exemptQueued[q] += p->wire;
    }
    eg.queues[q].Push(p);
    eg.nonEmpty |= static_cast<uint8_t>(1u << q);
    Kick(out);
}

void
RdmaSwitch::Kick(uint32_t port)
{
    RdmaPort& p = m_ports[port];
    if (p.servicePending)
    {
        return; // a pending service runs at busyUntil, or finds the port busy and moves there
    }
    if (NowSteps() >= p.busyUntil)
    {
        Service(port);
    }
    else
    {
        ScheduleService(p, port, p.busyUntil);
    }
}

RdmaPacket*
RdmaSwitch::Dequeue(Egress& eg, uint8_t paused, uint32_t& q)
{
    if (!eg.pfc.IsEmpty())
    {
        q = kQueues;
        return eg.pfc.Pop();
    }
    const uint32_t ready = eg.nonEmpty & ~paused;
    if (!ready)
    {
        return nullptr;
    }
    if (ready & 1)
    {
        q = 0; // control: strict priority
    }
    else
    {
        for (uint32_t k = 1; k < kQueues; ++k)
        {
            q = (eg.rr + k - 1) % (kQueues - 1) + 1;
            if (ready >> q & 1)
            {
                break;
            }
        }
        eg.rr = static_cast<uint8_t>(q);
    }
    RdmaPacket* p = eg.queues[q].Pop();
    if (eg.queues[q].IsEmpty())
    {
        eg.nonEmpty &= static_cast<uint8_t>(~(1u << q));
    }
    return p;
}

void
RdmaSwitch::Service(uint32_t port)
{
    RdmaPort& p = m_ports[port];
    if (NowSteps() < p.busyUntil)
    {
        ScheduleService(p, port, p.busyUntil); // a frameless backlog put in front (AddBacklog)
        return;
    }
    Egress& eg = m_egress[port];
    uint32_t q = 0;
    RdmaPacket* frame = Dequeue(eg, p.pausedMask, q);
    if (!frame)
    {
        return;
    }
    const bool data = q != 0 && q != kQueues;
    const uint32_t in = frame->inPort;
    bool resume = false;
    if (data)
    {
        SettleBacklogs();
        resume = m_mmu->Depart(in, port, q, frame->wire);
        const bool exempt = frame->kind == RdmaPacketKind::DATA && EcnExempt(*frame);
        if (exempt)
        {
            eg.exemptQueued[q] -= std::min<uint64_t>(eg.exemptQueued[q], frame->wire);
        }
        // What is ahead in time: queued frames and frameless backlog, less
        // the waived bytes that leave without wire time and the exempt frames.
        const uint64_t ahead = m_mmu->GetEgressBytes(port, q) + BacklogLeft(port, NowSteps());
        const uint64_t queued = ahead - std::min(ahead, WaivedLeft(port) + eg.exemptQueued[q]);
        if (frame->kind == RdmaPacketKind::DATA && m_ecnEnabled && !exempt && ShouldMark(eg, queued, *frame))
        {
            frame->ce = true;
            m_counters->ecnMarks++;
        }
        if (queued > frame->wire)
        {
            // A kernel that decoupled this port from its flows judges
            // whether the queue stands (docs/coupling.md).
            wormhole::FlowSeam::Queued(p.linkId, queued, frame->wire);
        }
    }
    if (frame->telemetry && frame->kind == RdmaPacketKind::DATA)
    {
        AppendIntHop(port, *frame->telemetry, frame->wire);
    }
    Transmit(p, frame);
    if (resume)
    {
        SendPfc(in, q, false);
    }
    if (!eg.pfc.IsEmpty() || (eg.nonEmpty & ~p.pausedMask))
    {
        ScheduleService(p, port, p.busyUntil);
    }
}

void
RdmaSwitch::AppendIntHop(uint32_t port, RdmaTelemetry& t, uint32_t wire) const
{
    if (!t.collectHops || t.nHops >= RdmaTelemetry::kMaxHops)
    {
        return;
    }
    const RdmaPort& p = m_ports[port];
    // The frame counts as sent; the queue is what stays behind it.
    t.hops[t.nHops++] = RdmaIntHop{NowSteps(), p.txBytes + wire, p.txCredited, GetQueueBytes(port), p.rateBps};
}

bool
RdmaSwitch::ShouldMark(Egress& eg, uint64_t queueBytes, const RdmaPacket& frame)
{
    if (queueBytes > eg.kmax)
    {
        return true;
    }
    if (queueBytes <= eg.kmin)
    {
        return false;
    }
    const double u = RdmaCounterUniform(eg.ecnKey, wormhole::Mix64(frame.flow) + frame.offset);
    return u < eg.pmax * static_cast<double>(queueBytes - eg.kmin) /
                   static_cast<double>(eg.kmax - eg.kmin);
}

void
RdmaSwitch::AddBacklog(uint32_t port, const std::vector<BacklogShare>& shares, int64_t from)
{
    uint64_t total = 0;
    for (const BacklogShare& s : shares)
    {
        total += s.bytes;
    }
    if (total == 0)
    {
        return;
    }
    SettleBacklogs();
    RdmaDevice::AddBacklog(port, total, from);
    Egress& eg = m_egress[port];
    if (eg.charged == 0)
    {
        m_chargedPorts++;
    }
    std::vector<BacklogShare> pause;
    for (const BacklogShare& s : shares)
    {
        if (s.bytes == 0 || s.q == 0)
        {
            continue; // queue 0 is not charged to the buffer (§1)
        }
        if (m_mmu->ChargeBacklog(s.in, s.q, s.bytes))
        {
            pause.push_back(s);
        }
        eg.charges.push_back(s);
        eg.charged += s.bytes;
    }
    if (eg.charged == 0)
    {
        m_chargedPorts--;
    }
    // Charged now, when the hit puts the queue back. The partition is frozen
    // until `from` (its events were moved there), so a PAUSE goes out then:
    // a frame of its own sent inside the skip would read as traffic from
    // outside and skip the partition back.
    for (const BacklogShare& s : pause)
    {
        SendPfc(s.in, s.q, true, from);
    }
    PlanSettle(port);
}

void
RdmaSwitch::RecountEcnExempt(uint32_t port)
{
    Egress& eg = m_egress.at(port);
    for (uint32_t q = 0; q < kQueues; ++q)
    {
        eg.exemptQueued[q] = 0;
        eg.queues[q].ForEach([&](const RdmaPacket& p) {
            eg.exemptQueued[q] += p.kind == RdmaPacketKind::DATA && EcnExempt(p) ? p.wire : 0;
        });
    }
}

void
RdmaSwitch::DropBacklog(uint32_t port, int64_t now)
{
    SettleBacklogs();
    Egress& eg = m_egress[port];
    // The unsent part never leaves: what it holds is given back at once.
    std::vector<BacklogShare> charges;
    charges.swap(eg.charges);
    if (eg.charged > 0)
    {
        m_chargedPorts--;
    }
    eg.charged = 0;
    const bool begun = now > m_ports[port].backlogStart;
    if (!begun && eg.settle.IsPending())
    {
        Simulator::Remove(eg.settle); // as if never planned: the run counts no event of it
    }
    eg.settle.Cancel();
    RdmaDevice::DropBacklog(port, now);
    for (const BacklogShare& s : charges)
    {
        if (m_mmu->ReleaseBacklog(s.in, s.q, s.bytes))
        {
            SendPfc(s.in, s.q, false);
        }
    }
}

void
RdmaSwitch::SettleBacklog(uint32_t port)
{
    Egress& eg = m_egress[port];
    if (eg.charged == 0)
    {
        return;
    }
    // Each charge keeps the share of the unsent backlog it had of the whole;
    // all of it is given back once the backlog is sent.
    const uint64_t left = BacklogLeft(port, NowSteps());
    if (left >= eg.charged)
    {
        return;
    }
    std::vector<BacklogShare> resume;
    uint64_t charged = 0;
    for (BacklogShare& s : eg.charges)
    {
        const auto keep = static_cast<uint64_t>(static_cast<unsigned __int128>(s.bytes) * left / eg.charged);
        const uint64_t sent = s.bytes - keep;
        s.bytes = keep;
        charged += keep;
        if (sent > 0 && m_mmu->ReleaseBacklog(s.in, s.q, sent))
        {
            resume.push_back(s);
        }
    }
    std::erase_if(eg.charges, [](const BacklogShare& s) { return s.bytes == 0; });
    eg.charged = charged;
    if (charged == 0)
    {
        m_chargedPorts--;
        eg.settle.Cancel();
    }
    // Sent once the state is whole: sending may serve a port, which settles.
    for (const BacklogShare& s : resume)
    {
        SendPfc(s.in, s.q, false);
    }
}

void
RdmaSwitch::PlanSettle(uint32_t port)
{
    Egress& eg = m_egress[port];
    eg.settle.Cancel();
    if (eg.charged == 0)
    {
        return;
    }
    const RdmaPort& p = m_ports[port];
    // Port bytes to send before the first paused ingress could resume, were
    // the threshold to stay as it is. It rises as the other ingresses shed
    // their charges too, so look again half way: the RESUME is late by at
    // most the last step (one kibibyte of the port's time).
    constexpr uint64_t kMinStep = 1024;
    uint64_t step = BacklogLeft(port, NowSteps());
    for (const BacklogShare& s : eg.charges)
    {
        if (!m_mmu->IsPaused(s.in, s.q))
        {
            continue;
        }
        const uint64_t need = m_mmu->GetResumeDistance(s.in, s.q);
        const auto portBytes = static_cast<uint64_t>(static_cast<unsigned __int128>(need) * eg.charged / s.bytes);
        step = std::min(step, std::max(portBytes / 2, kMinStep));
    }
    const int64_t now = NowSteps();
    const int64_t begin = std::max(now, p.backlogStart);
    const auto steps = static_cast<int64_t>(static_cast<double>(step) * 8.0 * static_cast<double>(m_stepsPerSecond) /
                                            static_cast<double>(p.rateBps));
    const int64_t at = std::min(std::max(begin + steps, now + 1), std::max(p.backlogEnd, now + 1));
    wormhole::OwnerScope owner(p.linkId);
    m_counters->serviceEvents++;
    eg.settle = Simulator::Schedule(TimeStep(at - now), &RdmaSwitch::SettleEvent, this, port);
}

void
RdmaSwitch::SettleEvent(uint32_t port)
{
    SettleBacklog(port);
    PlanSettle(port);
}

void
RdmaSwitch::SendPfc(uint32_t port, uint32_t q, bool pause, int64_t notBefore)
{
    NS_LOG_LOGIC((pause ? "PAUSE" : "RESUME") << " port " << port << " priority " << q);
    RdmaPacket* f = m_pool->Alloc();
    f->kind = pause ? RdmaPacketKind::PAUSE : RdmaPacketKind::RESUME;
    f->pg = static_cast<uint8_t>(q);
    f->src = m_index;
    f->wire = kRdmaControlBytes;
    Egress& eg = m_egress[port];
    eg.pfc.Push(f);
    if (pause)
    {
        eg.pauses++;
        m_counters->pauses++;
    }
    else
    {
        eg.resumes++;
        m_counters->resumes++;
    }
    m_pfcTrace(port, q, pause);
    RdmaPort& p = m_ports[port];
    if (notBefore > NowSteps())
    {
        ScheduleService(p, port, std::max(p.busyUntil, notBefore));
        return;
    }
    Kick(port);
}

} // namespace ns3
