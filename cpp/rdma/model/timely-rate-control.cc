#include "timely-rate-control.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TimelyRateControl");
NS_OBJECT_ENSURE_REGISTERED(TimelyRateControl);

namespace
{
/// The send stamp on the wire (one 64-bit field).
constexpr uint32_t kStampBytes = 8;
} // namespace

TypeId
TimelyRateControl::GetTypeId()
{
    // Defaults: HPCC `run.py timely` at 100 Gb/s and the TIMELY paper's
    // EWMA weight, decrease factor and thresholds.
    static TypeId tid =
        TypeId("ns3::TimelyRateControl")
            .SetParent<RdmaCongestionControl>()
            .SetGroupName("Rdma")
            .AddConstructor<TimelyRateControl>()
            .AddAttribute("RateAi",
                          "Additive increase per update (delta)",
                          DataRateValue(DataRate("100Mbps")),
                          MakeDataRateAccessor(&TimelyRateControl::m_rateAi),
                          MakeDataRateChecker())
            .AddAttribute("RateHai",
                          "Hyper-active increase per update after HaiThresh "
                          "non-positive gradients in a row",
                          DataRateValue(DataRate("500Mbps")),
                          MakeDataRateAccessor(&TimelyRateControl::m_rateHai),
                          MakeDataRateChecker())
            .AddAttribute("Alpha",
                          "EWMA weight of a new RTT difference",
                          DoubleValue(0.875),
                          MakeDoubleAccessor(&TimelyRateControl::m_alpha),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("Beta",
                          "Multiplicative decrease factor",
                          DoubleValue(0.8),
                          MakeDoubleAccessor(&TimelyRateControl::m_beta),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("TLow",
                          "Below this RTT the rate only increases",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&TimelyRateControl::m_tLow),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("THigh",
                          "Above this RTT the rate decreases in proportion to the excess",
                          TimeValue(MicroSeconds(500)),
                          MakeTimeAccessor(&TimelyRateControl::m_tHigh),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("MinRtt",
                          "RTT that normalises the gradient",
                          TimeValue(MicroSeconds(20)),
                          MakeTimeAccessor(&TimelyRateControl::m_minRtt),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("HaiThresh",
                          "Non-positive gradients in a row before hyper-active increase",
                          UintegerValue(5),
                          MakeUintegerAccessor(&TimelyRateControl::m_haiThresh),
                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

Ptr<RdmaCongestionControl>
TimelyRateControl::Fork() const
{
    return CopyObject<TimelyRateControl>(this);
}

void
TimelyRateControl::DoStart()
{
    m_ai = static_cast<double>(m_rateAi.GetBitRate());
    m_hai = static_cast<double>(m_rateHai.GetBitRate());
}

uint8_t
TimelyRateControl::GetTelemetry() const
{
    return 1;
}

uint32_t
TimelyRateControl::GetTelemetryBytes() const
{
    return kStampBytes;
}

void
TimelyRateControl::OnAck(const RdmaPacket& ack)
{
    if (!ack.telemetry || !m_update.ClosedBy(ack.seq))
    {
        return; // one update per RTT: when the data sent at the last one is acknowledged
    }
    const int64_t flowNow = Simulator::Now().GetTimeStep() - m_qp->clockShift;
    const double rtt = Time(flowNow - ack.telemetry->sentAt).GetSeconds();
    m_update.Open(m_qp->sndNxt, ack.seq);
    if (!m_started)
    {
        m_started = true;
        m_lastRtt = rtt;
        return;
    }
    Update(rtt);
}

void
TimelyRateControl::Update(double rtt)
{
    const double diff = rtt - m_lastRtt;
    m_lastRtt = rtt;
    m_rttDiff = (1 - m_alpha) * m_rttDiff + m_alpha * diff;
    const double gradient = m_rttDiff / m_minRtt.GetSeconds();
    double rate = m_qp->rate;
    if (rtt < m_tLow.GetSeconds())
    {
        rate += m_ai;
        m_stage = 0;
    }
    else if (rtt > m_tHigh.GetSeconds())
    {
        rate *= 1 - m_beta * (1 - m_tHigh.GetSeconds() / rtt);
        m_stage = 0;
    }
    else if (gradient <= 0)
    {
        ++m_stage;
        rate += m_stage >= m_haiThresh ? m_hai : m_ai;
    }
    else
    {
        rate *= 1 - m_beta * gradient;
        m_stage = 0;
    }
    SetRate(ClampRate(rate));
}

std::vector<double>
TimelyRateControl::SaveState() const
{
    return {GetRate(), m_lastRtt, m_rttDiff, static_cast<double>(m_stage)};
}

void
TimelyRateControl::RestoreState(std::span<const double> state)
{
    if (state.size() != 4)
    {
        RdmaCongestionControl::RestoreState(state);
        return;
    }
    m_started = state[1] > 0;
    m_lastRtt = state[1];
    m_rttDiff = state[2];
    m_stage = static_cast<uint32_t>(state[3]);
    m_update.Open(m_qp->sndNxt, m_qp->sndUna);
    SetRate(ClampRate(state[0]));
}

double
TimelyRateControl::GetLastRtt() const
{
    return m_lastRtt;
}

} // namespace ns3
