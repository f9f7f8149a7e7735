#include "hpcc-rate-control.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("HpccRateControl");
NS_OBJECT_ENSURE_REGISTERED(HpccRateControl);

namespace
{
/// INT field units (bytes) before INT_MULTI: HPCC packs each hop into 64
/// bits, so queue length and byte counter travel in coarse units.
constexpr uint64_t kQlenUnit = 80;
constexpr uint64_t kBytesUnit = 128;
/// INT header on the wire: a 2-byte hop count and 8 bytes per hop slot.
constexpr uint32_t kIntHeaderBytes = 2 + 8 * RdmaTelemetry::kMaxHops;
} // namespace

TypeId
HpccRateControl::GetTypeId()
{
    // Defaults: HPCC `run.py hp` at 100 Gb/s.
    static TypeId tid =
        TypeId("ns3::HpccRateControl")
            .SetParent<RdmaCongestionControl>()
            .SetGroupName("Rdma")
            .AddConstructor<HpccRateControl>()
            .AddAttribute("RateAi",
                          "Additive increase per update (W_AI / T)",
                          DataRateValue(DataRate("40Mbps")),
                          MakeDataRateAccessor(&HpccRateControl::m_rateAi),
                          MakeDataRateChecker())
            .AddAttribute("UTarget",
                          "Target utilisation eta of the most loaded hop",
                          DoubleValue(0.95),
                          MakeDoubleAccessor(&HpccRateControl::m_uTarget),
                          MakeDoubleChecker<double>(0.01, 1.0))
            .AddAttribute("MiThresh",
                          "Additive-only updates allowed in a row below UTarget "
                          "before a multiplicative one (maxStage)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&HpccRateControl::m_maxStage),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("FastReact",
                          "Apply a rate computed on every ACK, not only once per RTT",
                          BooleanValue(true),
                          MakeBooleanAccessor(&HpccRateControl::m_fastReact),
                          MakeBooleanChecker())
            .AddAttribute("IntMulti",
                          "Multiplier of the INT units of queue length (80 B) and "
                          "transmitted bytes (128 B)",
                          UintegerValue(4),
                          MakeUintegerAccessor(&HpccRateControl::m_intMulti),
                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

Ptr<RdmaCongestionControl>
HpccRateControl::Fork() const
{
    return CopyObject<HpccRateControl>(this);
}

void
HpccRateControl::DoStart()
{
    m_ai = static_cast<double>(m_rateAi.GetBitRate());
    m_reference = m_qp->rate;
}

uint8_t
HpccRateControl::GetTelemetry() const
{
    return 2;
}

uint32_t
HpccRateControl::GetTelemetryBytes() const
{
    return kIntHeaderBytes;
}

double
HpccRateControl::GetTargetUtilisation() const
{
    return m_uTarget;
}

void
HpccRateControl::Shift(int64_t dtSteps)
{
    // Switches sent nothing for the flow during the skip: the next sample's
    // interval must not count the skipped time. Frames stamped before the
    // skip and still in flight echo stamps of the old clock: they are read
    // with the shift added (StampOnFlowClock), or they would look older
    // than the record and be dropped, a round trip of updates the
    // reference makes and a skipped flow would not.
    for (Hop& h : m_hops)
    {
        h.ts += dtSteps;
    }
    if (dtSteps > 0)
    {
        m_shifts.push_back(ClockShift{Simulator::Now().GetTimeStep(), dtSteps});
        return;
    }
    // Taken back (a skip cut short, or undone for a replay that re-runs the
    // flow from the skip's start): the frozen flow stamped nothing since,
    // so the shift stamps of before the skip need shrinks by as much.
    for (int64_t back = -dtSteps; back > 0 && !m_shifts.empty();)
    {
        ClockShift& last = m_shifts.back();
        const int64_t taken = std::min(back, last.dt);
        last.dt -= taken;
        back -= taken;
        if (last.dt == 0)
        {
            m_shifts.pop_back();
        }
    }
}

int64_t
HpccRateControl::StampOnFlowClock(int64_t ts) const
{
    for (const ClockShift& s : m_shifts)
    {
        if (ts <= s.at)
        {
            ts += s.dt;
        }
    }
    return ts;
}

bool
HpccRateControl::Measure(const RdmaTelemetry& t, double& maxU)
{
    const uint64_t qUnit = kQlenUnit * m_intMulti;
    const uint64_t bUnit = kBytesUnit * m_intMulti;
    const double rtt = BaseRttSeconds();
    if (t.nHops != m_nHops || rtt <= 0)
    {
        m_nHops = t.nHops;
        for (uint32_t i = 0; i < t.nHops; ++i)
        {
            m_hops[i] = Hop{t.hops[i].ts, t.hops[i].txBytes, t.hops[i].credited, t.hops[i].qlen / qUnit * qUnit, 1.0};
        }
        return false;
    }
    // Frames arrive in order on their path: once a frame stamped after a
    // skip is back, no frame stamped before it is still in flight.
    std::erase_if(m_shifts, [&t](const ClockShift& s) { return t.hops[0].ts > s.at; });
    bool used = false;
    maxU = 0;
    for (uint32_t i = 0; i < t.nHops; ++i)
    {
        const RdmaIntHop& now = t.hops[i];
        Hop& h = m_hops[i];
        // The counter counts skipped frames (the reference's reading, whose
        // 128-byte rounding phase later samples inherit); what skips booked
        // since the record was sent in time the flow's clock does not count,
        // so the record is read as if stamped after them.
        const uint64_t moved = h.txBytes + (now.credited - h.credited);
        const uint64_t before = moved / bUnit * bUnit;
        const uint64_t bytes = now.txBytes / bUnit * bUnit;
        const uint64_t qlen = now.qlen / qUnit * qUnit;
        const int64_t ts = StampOnFlowClock(now.ts);
        const double tau = Time(ts - h.ts).GetSeconds();
        if (tau > 0 && bytes >= before)
        {
            const auto rate = static_cast<double>(now.rateBps);
            const double txRate = static_cast<double>(bytes - before) * 8 / tau;
            const double u = txRate / rate + static_cast<double>(std::min(qlen, h.qlen)) * 8 / (rate * rtt);
            const double w = std::min(tau, rtt) / rtt;
            h.u = (1 - w) * h.u + w * u;
            h.ts = ts;
            h.txBytes = now.txBytes;
            h.credited = now.credited;
            h.qlen = qlen;
            used = true;
        }
        maxU = std::max(maxU, h.u);
    }
    return used;
}

void
HpccRateControl::OnAck(const RdmaPacket& ack)
{
    if (!ack.telemetry)
    {
        return;
    }
    const bool perRtt = m_update.ClosedBy(ack.seq);
    if (!m_started)
    {
        m_started = true;
        m_update.Open(m_qp->sndNxt, ack.seq);
        Measure(*ack.telemetry, m_maxU);
        return;
    }
    double u = 0;
    if (!Measure(*ack.telemetry, u))
    {
        return;
    }
    m_maxU = u;
    if (!perRtt && !m_fastReact)
    {
        return;
    }
    const bool multiplicative = u >= m_uTarget || m_stage >= m_maxStage;
    double rate = multiplicative ? m_reference / (u / m_uTarget) + m_ai : m_reference + m_ai;
    rate = ClampRate(rate);
    if (perRtt)
    {
        m_reference = rate;
        m_stage = multiplicative ? 0 : m_stage + 1;
        m_update.Open(m_qp->sndNxt, ack.seq);
    }
    SetRate(rate);
}

std::vector<double>
HpccRateControl::SaveState() const
{
    return {GetRate(), m_reference, m_maxU, static_cast<double>(m_stage)};
}

void
HpccRateControl::RestoreState(std::span<const double> state)
{
    if (state.size() != 4)
    {
        RdmaCongestionControl::RestoreState(state);
        return;
    }
    m_reference = ClampRate(state[1]);
    m_maxU = state[2];
    m_stage = static_cast<uint32_t>(state[3]);
    for (uint32_t i = 0; i < m_nHops; ++i)
    {
        m_hops[i].u = m_maxU;
    }
    m_update.Open(m_qp->sndNxt, m_qp->sndUna);
    SetRate(ClampRate(state[0]));
}

double
HpccRateControl::GetUtilisation() const
{
    return m_maxU;
}

} // namespace ns3
