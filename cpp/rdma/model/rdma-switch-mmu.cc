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
                          "Shared buffer of the switch, bytes",
                          UintegerValue(32 * 1024 * 1024),
                          MakeUintegerAccessor(&RdmaSwitchMmu::m_bufferSize),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("ReservePerQueue",
                          "Private bytes of every ingress (port, queue)",
                          UintegerValue(4 * 1024),
                          MakeUintegerAccessor(&RdmaSwitchMmu::m_reserve),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("ResumeOffset",
                          "RESUME once the shared use is this far below the threshold",
                          UintegerValue(3 * 1024),
                          MakeUintegerAccessor(&RdmaSwitchMmu::m_resumeOffset),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("HeadroomRttFactor",
                          "PFC headroom per port = factor x rate x delay / 8",
                          DoubleValue(3.0),
                          MakeDoubleAccessor(&RdmaSwitchMmu::m_headroomRttFactor),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("PfcAlphaShift",
                          "Dynamic threshold = free shared buffer >> shift; reduced by "
                          "one per doubling of the port rate above the NIC rate",
                          UintegerValue(3),
                          MakeUintegerAccessor(&RdmaSwitchMmu::m_pfcAlphaShift),
                          MakeUintegerChecker<uint32_t>(0, 30))
            .AddAttribute("PfcEnabled",
                          "Lossless priorities with PFC; when false, frames above the "
                          "dynamic threshold are dropped",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RdmaSwitchMmu::m_pfcEnabled),
                          MakeBooleanChecker());
    return tid;
}

void
RdmaSwitchMmu::Configure(const std::vector<uint64_t>& headroomBytes,
                         const std::vector<uint32_t>& shift)
{
    const size_t n = headroomBytes.size();
    m_headroom = headroomBytes;
    m_shift = shift;
    m_ingress.assign(n * kQueues, 0);
    m_hdrm.assign(n * kQueues, 0);
    m_egress.assign(n * kQueues, 0);
    m_paused.assign(n * kQueues, 0);
    m_sharedUsed = 0;
    uint64_t totalHeadroom = 0;
    if (m_pfcEnabled)
    {
        for (uint64_t h : m_headroom)
        {
            totalHeadroom += h;
        }
    }
    // One reserve per port, as HPCC counts it: in practice one lossless
    // queue per port holds data.
    m_staticUse = static_cast<int64_t>(totalHeadroom + m_reserve * n);
}

bool
RdmaSwitchMmu::IsPfcEnabled() const
{
    return m_pfcEnabled;
}

double
RdmaSwitchMmu::GetHeadroomRttFactor() const
{
    return m_headroomRttFactor;
}

uint32_t
RdmaSwitchMmu::GetPfcAlphaShift() const
{
    return m_pfcAlphaShift;
}

uint64_t
RdmaSwitchMmu::SharedUsed(uint32_t i) const
{
    return m_ingress[i] > m_reserve ? m_ingress[i] - m_reserve : 0;
}

int64_t
RdmaSwitchMmu::GetThreshold(uint32_t port) const
{
    const int64_t free = static_cast<int64_t>(m_bufferSize) - m_staticUse -
                         static_cast<int64_t>(m_sharedUsed);
    return std::max<int64_t>(free, 0) >> m_shift[port];
}

bool
RdmaSwitchMmu::Admit(uint32_t in, uint32_t out, uint32_t q, uint32_t size)
{
    const uint32_t i = in * kQueues + q;
    const uint64_t total = m_ingress[i] + size;
    if (m_pfcEnabled)
    {
        // Dropped only when both the headroom and the shared pool are full.
        if (size + m_hdrm[i] > m_headroom[in] &&
            static_cast<int64_t>(size + SharedUsed(i)) > GetThreshold(in))
        {
            return false;
        }
        if (total <= m_reserve)
        {
            m_ingress[i] = total;
        }
        else if (static_cast<int64_t>(total - m_reserve) > GetThreshold(in))
        {
            m_hdrm[i] += size; // above the threshold: the upstream is (being) paused
        }
        else
        {
            m_sharedUsed += std::min<uint64_t>(size, total - m_reserve);
            m_ingress[i] = total;
        }
    }
    else
    {
        if (total > m_reserve)
        {
            if (static_cast<int64_t>(total - m_reserve) > GetThreshold(in))
            {
                return false;
            }
            m_sharedUsed += std::min<uint64_t>(size, total - m_reserve);
        }
        m_ingress[i] = total;
    }
    m_egress[out * kQueues + q] += size;
    return true;
}

void
RdmaSwitchMmu::Release(uint32_t in, uint32_t out, uint32_t q, uint32_t size)
{
    const uint32_t i = in * kQueues + q;
    // Headroom drains first, then the shared pool, then the reserve.
    const uint64_t fromHdrm = std::min<uint64_t>(m_hdrm[i], size);
    const uint64_t fromShared = std::min<uint64_t>(size - fromHdrm, SharedUsed(i));
    m_hdrm[i] -= fromHdrm;
    m_ingress[i] -= size - fromHdrm;
    m_sharedUsed -= fromShared;
    m_egress[out * kQueues + q] -= size;
}

bool
RdmaSwitchMmu::CheckPause(uint32_t in, uint32_t q)
{
    const uint32_t i = in * kQueues + q;
    if (!m_pfcEnabled || m_paused[i])
    {
        return false;
    }
    if (m_hdrm[i] > 0 || static_cast<int64_t>(SharedUsed(i)) >= GetThreshold(in))
    {
        m_paused[i] = 1;
        return true;
    }
    return false;
}

bool
RdmaSwitchMmu::CheckResume(uint32_t in, uint32_t q)
{
    const uint32_t i = in * kQueues + q;
    if (!m_paused[i] || m_hdrm[i] > 0)
    {
        return false;
    }
    const uint64_t shared = SharedUsed(i);
    if (shared == 0 || static_cast<int64_t>(shared + m_resumeOffset) <= GetThreshold(in))
    {
        m_paused[i] = 0;
        return true;
    }
    return false;
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

} // namespace ns3
