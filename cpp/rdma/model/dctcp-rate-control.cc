#include "dctcp-rate-control.h"

#include "ns3/double.h"
#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("DctcpRateControl");
NS_OBJECT_ENSURE_REGISTERED(DctcpRateControl);

TypeId
DctcpRateControl::GetTypeId()
{
    // Defaults: HPCC `run.py dctcp` at 100 Gb/s.
    static TypeId tid =
        TypeId("ns3::DctcpRateControl")
            .SetParent<RdmaCongestionControl>()
            .SetGroupName("Rdma")
            .AddConstructor<DctcpRateControl>()
            .AddAttribute("RateAi",
                          "Rate added per window without a cut (one MTU per RTT)",
                          DataRateValue(DataRate("615Mbps")),
                          MakeDataRateAccessor(&DctcpRateControl::m_rateAi),
                          MakeDataRateChecker())
            .AddAttribute("EwmaGain",
                          "Gain g of the alpha average, once per window",
                          DoubleValue(1.0 / 16),
                          MakeDoubleAccessor(&DctcpRateControl::m_g),
                          MakeDoubleChecker<double>(0.0, 1.0));
    return tid;
}

Ptr<RdmaCongestionControl>
DctcpRateControl::Fork() const
{
    return CopyObject<DctcpRateControl>(this);
}

void
DctcpRateControl::DoStart()
{
    m_ai = static_cast<double>(m_rateAi.GetBitRate());
}

void
DctcpRateControl::OpenWindow()
{
    m_windowEnd = m_qp->sndNxt;
    m_acks = 0;
    m_marked = 0;
}

void
DctcpRateControl::OnAck(const RdmaPacket& ack)
{
    if (!m_started)
    {
        m_started = true;
        OpenWindow();
    }
    ++m_acks;
    m_marked += ack.cnp ? 1 : 0;
    double rate = m_qp->rate;
    if (m_reducing && ack.seq > m_recoverEnd)
    {
        m_reducing = false;
    }
    if (ack.seq > m_windowEnd)
    {
        // A window of data is acknowledged: fold its marked fraction into
        // alpha and, if it saw no cut, grow by one step.
        const double fraction = static_cast<double>(m_marked) / static_cast<double>(m_acks);
        m_alpha = (1 - m_g) * m_alpha + m_g * fraction;
        if (!m_reducing)
        {
            rate = std::min(rate + m_ai, m_qp->lineRate);
        }
        OpenWindow();
    }
    if (ack.cnp && !m_reducing)
    {
        rate = std::max(rate * (1 - m_alpha / 2), MinRateBps());
        m_reducing = true;
        m_recoverEnd = m_qp->sndNxt;
    }
    SetRate(rate);
}

std::vector<double>
DctcpRateControl::SaveState() const
{
    return {GetRate(), m_alpha};
}

void
DctcpRateControl::RestoreState(const std::vector<double>& state)
{
    if (state.size() != 2)
    {
        RdmaCongestionControl::RestoreState(state);
        return;
    }
    m_alpha = state[1];
    m_reducing = false;
    m_started = true;
    OpenWindow();
    SetRate(ClampRate(state[0]));
}

double
DctcpRateControl::GetAlpha() const
{
    return m_alpha;
}

} // namespace ns3
