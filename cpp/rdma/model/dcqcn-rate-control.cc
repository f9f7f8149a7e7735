#include "dcqcn-rate-control.h"

#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("DcqcnRateControl");
NS_OBJECT_ENSURE_REGISTERED(DcqcnRateControl);

TypeId
DcqcnRateControl::GetTypeId()
{
    // Defaults: HPCC `run.py dcqcn` at 100 Gb/s.
    static TypeId tid =
        TypeId("ns3::DcqcnRateControl")
            .SetParent<RdmaCongestionControl>()
            .SetGroupName("Rdma")
            .AddConstructor<DcqcnRateControl>()
            .AddAttribute("AlphaResumeInterval",
                          "Period of the alpha update",
                          TimeValue(MicroSeconds(1)),
                          MakeTimeAccessor(&DcqcnRateControl::m_alphaInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RateDecreaseInterval",
                          "Period of the rate-decrease check",
                          TimeValue(MicroSeconds(4)),
                          MakeTimeAccessor(&DcqcnRateControl::m_decreaseInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RpTimer",
                          "Period of the rate-increase timer",
                          TimeValue(MicroSeconds(300)),
                          MakeTimeAccessor(&DcqcnRateControl::m_rpTimer),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("EwmaGain",
                          "Gain g of the alpha EWMA",
                          DoubleValue(1.0 / 256),
                          MakeDoubleAccessor(&DcqcnRateControl::m_g),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("FastRecoveryTimes",
                          "Increase stages spent in fast recovery",
                          UintegerValue(1),
                          MakeUintegerAccessor(&DcqcnRateControl::m_fastRecoveryTimes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("RateAi",
                          "Additive increase of the target rate",
                          DataRateValue(DataRate("20Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_rateAi),
                          MakeDataRateChecker())
            .AddAttribute("RateHai",
                          "Hyper increase of the target rate",
                          DataRateValue(DataRate("200Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_rateHai),
                          MakeDataRateChecker())
            .AddAttribute("ClampTargetRate",
                          "Set the target to the current rate on every decrease",
                          BooleanValue(false),
                          MakeBooleanAccessor(&DcqcnRateControl::m_clampTargetRate),
                          MakeBooleanChecker())
            .AddAttribute("RateOnFirstCnp",
                          "Rate factor applied on the first CNP of a flow",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&DcqcnRateControl::m_rateOnFirstCnp),
                          MakeDoubleChecker<double>(0.0, 1.0));
    return tid;
}

Ptr<RdmaCongestionControl>
DcqcnRateControl::Fork() const
{
    return CopyObject<DcqcnRateControl>(this);
}

void
DcqcnRateControl::DoStart()
{
    m_alphaSteps = m_alphaInterval.GetTimeStep();
    m_decreaseSteps = m_decreaseInterval.GetTimeStep();
    m_nsStep = NanoSeconds(1).GetTimeStep();
    m_ai = static_cast<double>(m_rateAi.GetBitRate());
    m_hai = static_cast<double>(m_rateHai.GetBitRate());
    m_min = MinRateBps();
    m_target = m_qp->rate;
}

void
DcqcnRateControl::Shift(int64_t dtSteps)
{
    m_anchor += dtSteps;
}

void
DcqcnRateControl::Skipped(int64_t dtSteps)
{
    // The target rate is the slowest part of DCQCN's state: only a decrease
    // that follows an increase stage resets it, to the rate then, about once
    // per cycle of the flows' shares (milliseconds), and after a change of
    // the pattern it takes several such cycles to settle. A skip
    // freezes it at the last reset before the skip, while the reference goes
    // on resetting it: the flow then leaves the skip with a stale target,
    // and after the next change (its competitor gone) climbs towards it
    // faster than the reference's flow does (docs/fast-forward.md, "A skip
    // freezes slow control state"). A skip that spans an increase period
    // spans such a reset, and the rate the flow holds once past fast
    // recovery is the value one gives it: the reference's resets fall a few
    // increase stages in, the cycles lasting several increase periods.
    // Before that (stage <= FastRecoveryTimes) the rate is still near a
    // cut's low, no value a reset takes: the target stays. A skip cut short
    // by a skip-back keeps the reset, one the reference makes within a cycle.
    if (!m_firstCnp && m_stage > m_fastRecoveryTimes && dtSteps >= m_rpTimer.GetTimeStep())
    {
        m_target = m_qp->rate;
    }
}

void
DcqcnRateControl::Stop()
{
    m_checkEvent.Cancel();
    m_increaseEvent.Cancel();
}

void
DcqcnRateControl::OnCnp()
{
    const int64_t now = Simulator::Now().GetTimeStep();
    m_cnpSinceCheck = true;
    if (m_firstCnp)
    {
        m_firstCnp = false;
        m_alpha = 1.0;
        m_anchor = now;
        m_nextCheck = 1;
        m_alphaDone = 0;
        m_cnpSlot = 0;
        m_checkEvent = ScheduleTimer(m_decreaseInterval + NanoSeconds(1),
                                     &DcqcnRateControl::CheckRateDecrease,
                                     this);
        m_target = m_rateOnFirstCnp * m_qp->rate;
        SetRate(m_target);
        return;
    }
    // The CNP counts for the alpha update that closes the interval it fell in
    // (an update at this very instant runs after it, as the timer was
    // scheduled later than the frame's arrival), and never for one a check
    // already applied.
    const int64_t since = now - m_anchor;
    const auto slot = std::max(static_cast<uint64_t>((since + m_alphaSteps - 1) / m_alphaSteps),
                               m_alphaDone + 1);
    AdvanceAlpha(slot - 1);
    m_cnpSlot = slot;
}

uint64_t
DcqcnRateControl::AlphaUpdatesBefore(uint64_t m) const
{
    return static_cast<uint64_t>((static_cast<int64_t>(m) * m_decreaseSteps + m_nsStep) /
                                 m_alphaSteps);
}

void
DcqcnRateControl::AdvanceAlpha(uint64_t k)
{
    while (m_alphaDone < k)
    {
        ++m_alphaDone;
        m_alpha = (m_alphaDone == m_cnpSlot) ? (1 - m_g) * m_alpha + m_g : (1 - m_g) * m_alpha;
    }
}

void
DcqcnRateControl::CheckRateDecrease()
{
    AdvanceAlpha(AlphaUpdatesBefore(m_nextCheck));
    ++m_nextCheck;
    m_checkEvent =
        ScheduleTimer(m_decreaseInterval, &DcqcnRateControl::CheckRateDecrease, this);
    if (!m_cnpSinceCheck)
    {
        return;
    }
    m_cnpSinceCheck = false;
    if (m_clampTargetRate || m_stage != 0)
    {
        m_target = m_qp->rate;
    }
    m_stage = 0;
    m_increaseEvent.Cancel();
    m_increaseEvent = ScheduleTimer(m_rpTimer, &DcqcnRateControl::IncreaseRate, this);
    SetRate(std::max(m_min, m_qp->rate * (1 - m_alpha / 2)));
}

void
DcqcnRateControl::IncreaseRate()
{
    const double line = m_qp->lineRate;
    if (m_stage == m_fastRecoveryTimes)
    {
        m_target = std::min(m_target + m_ai, line);
    }
    else if (m_stage > m_fastRecoveryTimes)
    {
        m_target = std::min(m_target + m_hai, line);
    }
    ++m_stage;
    double rate = (m_qp->rate + m_target) / 2;
    // Rates below 1 bit/s apart are equal (HPCC keeps integer bit/s); this
    // lets the rate reach the target instead of halving the gap forever.
    if (m_target - rate < 1.0)
    {
        rate = m_target;
    }
    SetRate(rate);
    // At line rate (so the target is there too) further increases change
    // nothing until the next decrease restarts the timer.
    if (rate < line)
    {
        m_increaseEvent = ScheduleTimer(m_rpTimer, &DcqcnRateControl::IncreaseRate, this);
    }
}

std::vector<double>
DcqcnRateControl::SaveState() const
{
    return {GetRate(),
            m_target,
            m_alpha,
            static_cast<double>(m_stage),
            m_firstCnp ? 0.0 : 1.0,
            m_increaseEvent.IsExpired() ? 0.0 : 1.0,
            m_increaseEvent.IsExpired() ? 0.0 : static_cast<double>(Simulator::GetDelayLeft(m_increaseEvent).GetTimeStep())};
}

void
DcqcnRateControl::RestoreState(std::span<const double> state)
{
    if (state.size() != 6 && state.size() != 7)
    {
        RdmaCongestionControl::RestoreState(state);
        return;
    }
    const double line = m_qp->lineRate;
    if (state[4] > 0)
    {
        const int64_t now = Simulator::Now().GetTimeStep();
        if (m_firstCnp)
        {
            // Start the alpha and decrease timers as a first CNP would,
            // without its rate cut: the state below is already converged.
            m_firstCnp = false;
            m_anchor = now;
            m_nextCheck = 1;
            m_alphaDone = 0;
            m_cnpSlot = 0;
            m_checkEvent = ScheduleTimer(m_decreaseInterval + NanoSeconds(1),
                                         &DcqcnRateControl::CheckRateDecrease,
                                         this);
        }
        else
        {
            AdvanceAlpha(static_cast<uint64_t>((now - m_anchor) / m_alphaSteps));
        }
        m_alpha = state[2];
        m_cnpSinceCheck = false;
    }
    m_target = std::min(state[1] > 0 ? state[1] : line, line);
    m_stage = static_cast<uint32_t>(state[3]);
    m_increaseEvent.Cancel();
    const double rate = std::min(state[0], line);
    if (state[5] > 0 && rate < line)
    {
        // Where the saved state says how far its increase timer had run,
        // resume it there, not from a fresh period.
        const Time left = state.size() > 6 && state[6] > 0 ? TimeStep(static_cast<uint64_t>(state[6])) : m_rpTimer;
        m_increaseEvent = ScheduleTimer(std::min(left, m_rpTimer), &DcqcnRateControl::IncreaseRate, this);
    }
    SetRate(rate);
}

double
DcqcnRateControl::GetAlpha() const
{
    return m_alpha;
}

double
DcqcnRateControl::GetTargetRate() const
{
    return m_target;
}

} // namespace ns3
