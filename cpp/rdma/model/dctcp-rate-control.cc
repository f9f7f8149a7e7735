#include "dctcp-rate-control.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>

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
DctcpRateControl::OpenWindow(uint64_t ackSeq)
{
    m_window.Open(m_qp->sndNxt, ackSeq);
    m_acks = 0;
    m_marked = 0;
    m_windowOpened = Simulator::Now().GetTimeStep();
}

void
DctcpRateControl::Shift(int64_t dtSteps)
{
    // The open window's age counts the flow's time, not the skip's.
    m_windowOpened += dtSteps;
    if (dtSteps < 0 && m_skip.span > 0)
    {
        // The skip was cut short (or undone for a replay): alpha decays over
        // what was skipped, not over what the skip was planned to span.
        // Recomputed from alpha before the skip, so an undone skip leaves it
        // exactly as it was.
        m_skip.span = std::max<int64_t>(0, m_skip.span + dtSteps);
        m_alpha = m_skip.alpha * std::pow(1 - m_g, static_cast<double>(m_skip.span / m_skip.window));
    }
}

void
DctcpRateControl::Skipped(int64_t dtSteps)
{
    // Alpha is DCTCP's slow state: an average of the marked fraction with
    // gain g per window of data (a round trip), so it takes dozens of round
    // trips to forget. A flow whose last window and the open one saw no mark
    // is in a pattern without marks, and the skip stands for more of it:
    // alpha decays once per window the skipped span holds, as it would have.
    // Frozen instead, a lone flow skipped a few round trips after its start
    // kept the start's alpha near 1 on long links; a flow joining it then
    // met an incumbent that halved its rate at the first mark, and the pair
    // split the port evenly where the reference's incumbent keeps most of
    // it (benchmarks/README.md). With marks the average is taken to be at
    // its level for them, and stays.
    m_skip.span = 0;
    if (!m_started || m_lastFraction > 0 || m_marked > 0)
    {
        return;
    }
    // A window lasts a round trip: the last one's, or before any closed (a
    // flow skipped in its first round trips) the base round trip.
    const int64_t window =
        m_lastWindow > 0 ? m_lastWindow : Seconds(BaseRttSeconds()).GetTimeStep();
    if (window > 0)
    {
        m_skip = SkipDecay{dtSteps, window, m_alpha};
        m_alpha *= std::pow(1 - m_g, static_cast<double>(dtSteps / window));
    }
}

void
DctcpRateControl::OnAck(const RdmaPacket& ack)
{
    if (!m_started)
    {
        m_started = true;
        OpenWindow(ack.seq);
    }
    m_skip.span = 0; // the skip is over: nothing takes it back now
    ++m_acks;
    m_marked += ack.cnp ? 1 : 0;
    double rate = m_qp->rate;
    if (m_reducing && ack.seq > m_recoverEnd)
    {
        m_reducing = false;
    }
    if (m_window.ClosedBy(ack.seq))
    {
        // A window of data is acknowledged: fold its marked fraction into
        // alpha and, if it saw no cut, grow by one step.
        const double fraction = static_cast<double>(m_marked) / static_cast<double>(m_acks);
        m_alpha = (1 - m_g) * m_alpha + m_g * fraction;
        m_lastFraction = fraction;
        m_lastWindow = Simulator::Now().GetTimeStep() - m_windowOpened;
        if (!m_reducing)
        {
            rate = std::min(rate + m_ai, m_qp->lineRate);
        }
        OpenWindow(ack.seq);
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
DctcpRateControl::RestoreState(std::span<const double> state)
{
    if (state.size() != 2)
    {
        RdmaCongestionControl::RestoreState(state);
        return;
    }
    m_alpha = state[1];
    m_reducing = false;
    m_started = true;
    OpenWindow(m_qp->sndUna);
    SetRate(ClampRate(state[0]));
}

double
DctcpRateControl::GetAlpha() const
{
    return m_alpha;
}

} // namespace ns3
