#include "rdma-congestion-control.h"

#include <algorithm>

#include "rdma-nic.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaCongestionControl");
NS_OBJECT_ENSURE_REGISTERED(RdmaCongestionControl);

TypeId
RdmaCongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaCongestionControl").SetParent<Object>().SetGroupName("Rdma");
    return tid;
}

void
RdmaCongestionControl::Start(RdmaQueuePair* qp)
{
    m_qp = qp;
    DoStart();
}

void
RdmaCongestionControl::OnAck(const RdmaPacket&)
{
}

void
RdmaCongestionControl::Shift(int64_t)
{
}

double
RdmaCongestionControl::GetRate() const
{
    return m_qp ? m_qp->rate : 0.0;
}

std::vector<double>
RdmaCongestionControl::SaveState() const
{
    return {GetRate()};
}

void
RdmaCongestionControl::RestoreState(const std::vector<double>& state)
{
    if (!state.empty() && state[0] > 0)
    {
        SetRate(std::min(state[0], m_qp->lineRate));
    }
}

void
RdmaCongestionControl::SetRate(double bps)
{
    m_qp->nic->SetQpRate(*m_qp, bps);
}

void
RdmaCongestionControl::DoDispose()
{
    m_qp = nullptr;
    Object::DoDispose();
}

} // namespace ns3
