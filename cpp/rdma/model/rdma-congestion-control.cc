#include "rdma-congestion-control.h"

#include <algorithm>

#include "rdma-nic.h"

#include "ns3/boolean.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaCongestionControl");
NS_OBJECT_ENSURE_REGISTERED(RdmaCongestionControl);

TypeId
RdmaCongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaCongestionControl")
            .SetParent<Object>()
            .SetGroupName("Rdma")
            .AddAttribute("MinRate",
                          "Floor of the sending rate",
                          DataRateValue(DataRate("1000Mbps")),
                          MakeDataRateAccessor(&RdmaCongestionControl::m_minRate),
                          MakeDataRateChecker())
            .AddAttribute("Window",
                          "Limit bytes in flight to a window (HPCC HAS_WIN): the "
                          "bandwidth-delay product of the flow's line rate and base RTT",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaCongestionControl::m_window),
                          MakeBooleanChecker())
            .AddAttribute("VariableWindow",
                          "Scale the window with the sending rate (HPCC VAR_WIN): "
                          "window = rate x base RTT",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaCongestionControl::m_variableWindow),
                          MakeBooleanChecker());
    return tid;
}

void
RdmaCongestionControl::Start(RdmaQueuePair* qp)
{
    m_qp = qp;
    qp->telemetry = GetTelemetry();
    qp->telemetryBytes = GetTelemetryBytes();
    SetRate(qp->rate);
    DoStart();
}

uint8_t
RdmaCongestionControl::GetTelemetry() const
{
    return 0;
}

uint32_t
RdmaCongestionControl::GetTelemetryBytes() const
{
    return 0;
}

double
RdmaCongestionControl::GetTargetUtilisation() const
{
    return 1.0;
}

double
RdmaCongestionControl::MinRateBps() const
{
    return static_cast<double>(m_minRate.GetBitRate());
}

double
RdmaCongestionControl::ClampRate(double bps) const
{
    return std::clamp(bps, std::min(MinRateBps(), m_qp->lineRate), m_qp->lineRate);
}

double
RdmaCongestionControl::BaseRttSeconds() const
{
    return Time(m_qp->baseRtt).GetSeconds();
}

void
RdmaCongestionControl::Stop()
{
}

void
RdmaCongestionControl::OnCnp()
{
}

void
RdmaCongestionControl::OnAck(const RdmaPacket&)
{
}

void
RdmaCongestionControl::Shift(int64_t)
{
}

void
RdmaCongestionControl::Skipped(int64_t)
{
}

void
RdmaCongestionControl::Credited(int64_t bytes)
{
    // A cycle not opened yet (no ACK so far) has nothing to move: its
    // first opening starts it afresh.
    if (AckClockedCycle* cycle = AckClock())
    {
        cycle->Credit(bytes, m_qp->sndUna);
    }
}

AckClockedCycle*
RdmaCongestionControl::AckClock()
{
    return nullptr;
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
RdmaCongestionControl::RestoreState(std::span<const double> state)
{
    if (!state.empty() && state[0] > 0)
    {
        SetRate(std::min(state[0], m_qp->lineRate));
    }
}

void
RdmaCongestionControl::SetRate(double bps)
{
    // Each algorithm keeps its rate within [MinRate, line rate] itself.
    const double rate = bps;
    if (m_window)
    {
        const double shown = m_variableWindow ? rate : m_qp->lineRate;
        m_qp->window = std::max(1.0, shown * BaseRttSeconds() / 8);
    }
    m_qp->nic->SetQpRate(*m_qp, rate);
}

void
RdmaCongestionControl::DoDispose()
{
    m_qp = nullptr;
    Object::DoDispose();
}

} // namespace ns3
