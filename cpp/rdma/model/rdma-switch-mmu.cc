// Buffer accounting of docs/switch-buffer-model.md; section numbers refer to it.
#include "rdma-switch-mmu.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaSwitchMmu");
NS_OBJECT_ENSURE_REGISTERED(RdmaSwitchMmu);

TypeId
RdmaSwitchMmu::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaSwitchMmu")
            .SetParent<Object>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaSwitchMmu>()
            .AddAttribute("BufferSize",
                          "Bytes of packet memory of the whole switch",
                          UintegerValue(32 * 1024 * 1024),
                          MakeUintegerAccessor(&RdmaSwitchMmu::m_bufferSize),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("ReservePerQueue",
                          "Bytes guaranteed to an ingress queue before it draws on the "
                          "shared pool (set aside once per port)",
                          UintegerValue(4 * 1024),
                          MakeUintegerAccessor(&RdmaSwitchMmu::m_reserve),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("ResumeOffset",
                          "Hysteresis: a paused ingress resumes once its shared use is "
                          "this many bytes under its threshold",
                          UintegerValue(3 * 1024),
                          MakeUintegerAccessor(&RdmaSwitchMmu::m_resumeOffset),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("HeadroomRttFactor",
                          "PFC headroom of a port, in one-way bandwidth-delay products "
                          "of its link",
                          DoubleValue(3.0),
                          MakeDoubleAccessor(&RdmaSwitchMmu::m_headroomRttFactor),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("PfcAlphaShift",
                          "A port may take (free shared pool) / 2^shift; one less per "
                          "halving that brings the port rate to the host NIC rate",
                          UintegerValue(3),
                          MakeUintegerAccessor(&RdmaSwitchMmu::m_pfcAlphaShift),
                          MakeUintegerChecker<uint32_t>(0, 30))
            .AddAttribute("PfcEnabled",
                          "Lossless data priorities (PAUSE/RESUME); when false a frame "
                          "over its threshold is dropped",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RdmaSwitchMmu::m_pfcEnabled),
                          MakeBooleanChecker());
    return tid;
}

void
RdmaSwitchMmu::AddPort(uint64_t rateBps, uint64_t delayNs, uint64_t nicRateBps)
{
    // §2: bytes that can still arrive once a PAUSE is decided.
    const uint64_t headroom =
        m_pfcEnabled ? static_cast<uint64_t>(m_headroomRttFactor * static_cast<double>(rateBps) *
                                             static_cast<double>(delayNs) * 1e-9 / 8)
                     : 0;
    // §4: a port k halvings faster than the NICs gets 2^k times the share.
    uint32_t halvings = 0;
    while (nicRateBps > 0 && halvings < m_pfcAlphaShift && (rateBps >> halvings) > nicRateBps)
    {
        ++halvings;
    }
    m_ports.push_back({headroom, m_pfcAlphaShift - halvings});
    m_ingress.resize(m_ports.size() * kQueues);
    m_egress.resize(m_ports.size() * kQueues, 0);
    m_setAside += headroom + m_reserve;
}

RdmaSwitchMmu::IngressState&
RdmaSwitchMmu::Ingress(uint32_t port, uint32_t q)
{
    return m_ingress[port * kQueues + q];
}

uint64_t
RdmaSwitchMmu::GetThreshold(uint32_t port) const
{
    const uint64_t taken = m_setAside + m_sharedUsed;
    return m_bufferSize > taken ? (m_bufferSize - taken) >> m_ports[port].shift : 0;
}

bool
RdmaSwitchMmu::Charge(IngressState& ing, uint32_t port, uint64_t wire)
{
    const uint64_t limit = GetThreshold(port);
    const uint64_t headroomCap = m_ports[port].headroom;
    // §5.1: lossless traffic is lost only with both headroom and pool full.
    if (m_pfcEnabled && ing.headroom + wire > headroomCap && ing.shared + wire > limit)
    {
        return false;
    }
    const uint64_t room = m_reserve - ing.guaranteed;
    if (wire <= room)
    {
        ing.guaranteed += wire; // §5.2
        return true;
    }
    const uint64_t spill = wire - room;
    if (ing.shared + spill > limit)
    {
        if (!m_pfcEnabled)
        {
            return false;
        }
        ing.headroom += wire; // §5.3: in flight after the pause decision
        return true;
    }
    ing.guaranteed = m_reserve; // §5.4
    ing.shared += spill;
    m_sharedUsed += spill;
    return true;
}

bool
RdmaSwitchMmu::PauseDue(IngressState& ing, uint32_t port)
{
    // §7a, judged against the threshold as it is after the charge.
    if (m_pfcEnabled && !ing.paused && (ing.headroom > 0 || ing.shared >= GetThreshold(port)))
    {
        ing.paused = true;
        return true;
    }
    return false;
}

RdmaSwitchMmu::Arrival
RdmaSwitchMmu::Arrive(uint32_t in, uint32_t out, uint32_t q, uint32_t wire)
{
    IngressState& ing = Ingress(in, q);
    if (!Charge(ing, in, wire))
    {
        return Arrival::DROPPED;
    }
    m_egress[out * kQueues + q] += wire;
    return PauseDue(ing, in) ? Arrival::PAUSE : Arrival::QUEUED;
}

bool
RdmaSwitchMmu::Release(IngressState& ing, uint32_t port, uint64_t wire)
{
    // §6: headroom, then shared pool, then guarantee.
    uint64_t left = wire;
    auto drain = [&left](uint64_t& pool) {
        const uint64_t take = std::min(left, pool);
        pool -= take;
        left -= take;
        return take;
    };
    drain(ing.headroom);
    m_sharedUsed -= drain(ing.shared);
    ing.guaranteed -= std::min(left, ing.guaranteed);
    // §7b
    if (!ing.paused || ing.headroom > 0)
    {
        return false;
    }
    if (ing.shared > 0 && ing.shared + m_resumeOffset > GetThreshold(port))
    {
        return false;
    }
    ing.paused = false;
    return true;
}

bool
RdmaSwitchMmu::Depart(uint32_t in, uint32_t out, uint32_t q, uint32_t wire)
{
    m_egress[out * kQueues + q] -= wire;
    return Release(Ingress(in, q), in, wire);
}

bool
RdmaSwitchMmu::ChargeBacklog(uint32_t in, uint32_t q, uint64_t bytes)
{
    // §10: in frame-sized steps, so that each step meets the threshold as it
    // stands after the steps before it, as arriving frames would. What fits
    // nowhere stays in the shared pool over the threshold: the bytes were
    // delivered in the stored run and cannot be lost here.
    IngressState& ing = Ingress(in, q);
    constexpr uint64_t kStep = 1024;
    for (uint64_t left = bytes; left > 0;)
    {
        const uint64_t w = std::min(left, kStep);
        if (!Charge(ing, in, w))
        {
            const uint64_t room = m_reserve - ing.guaranteed;
            ing.guaranteed = m_reserve;
            ing.shared += w - std::min(w, room);
            m_sharedUsed += w - std::min(w, room);
        }
        left -= w;
    }
    return PauseDue(ing, in);
}

bool
RdmaSwitchMmu::ReleaseBacklog(uint32_t in, uint32_t q, uint64_t bytes)
{
    return Release(Ingress(in, q), in, bytes);
}

uint64_t
RdmaSwitchMmu::GetResumeDistance(uint32_t in, uint32_t q) const
{
    const IngressState& ing = m_ingress[in * kQueues + q];
    if (!ing.paused)
    {
        return 0;
    }
    // §7b: headroom empty, and shared empty or `ResumeOffset` under T.
    const uint64_t level = GetThreshold(in) > m_resumeOffset ? GetThreshold(in) - m_resumeOffset : 0;
    return ing.headroom + (ing.shared > level ? ing.shared - level : 0);
}

bool
RdmaSwitchMmu::IsPaused(uint32_t in, uint32_t q) const
{
    return m_ingress.at(in * kQueues + q).paused;
}

uint64_t
RdmaSwitchMmu::GetIngressBytes(uint32_t in, uint32_t q) const
{
    const IngressState& ing = m_ingress.at(in * kQueues + q);
    return ing.guaranteed + ing.shared + ing.headroom;
}

uint64_t
RdmaSwitchMmu::GetEgressBytes(uint32_t out, uint32_t q) const
{
    return m_egress[out * kQueues + q];
}

uint64_t
RdmaSwitchMmu::GetSharedUsed() const
{
    return m_sharedUsed;
}

uint64_t
RdmaSwitchMmu::GetHeadroom(uint32_t port) const
{
    return m_ports.at(port).headroom;
}

} // namespace ns3
