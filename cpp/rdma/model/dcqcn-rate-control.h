// DCQCN as in Mellanox NICs (CX4+), the variant of HPCC's RdmaHw::*Mlx:
// no byte counter, alpha and rate-decrease timers started by the first CNP.
#ifndef DCQCN_RATE_CONTROL_H
#define DCQCN_RATE_CONTROL_H

#include "rdma-congestion-control.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

namespace ns3
{

class DcqcnRateControl : public RdmaCongestionControl
{
  public:
    static TypeId GetTypeId();

    Ptr<RdmaCongestionControl> Fork() const override;
    void Stop() override;
    void OnCnp() override;

    bool ReactsToEcn() const override
    {
        return true;
    }
    void Shift(int64_t dtSteps) override;
    void Skipped(int64_t dtSteps) override;
    /// {rate, target, alpha, stage, started, increase timer pending}
    std::vector<double> SaveState() const override;
    void RestoreState(std::span<const double> state) override;

    double GetAlpha() const;
    double GetTargetRate() const;

  protected:
    void DoStart() override;

  private:
    /// Rate-decrease check, every RateDecreaseInterval after the first CNP
    /// (+1 ns, so it follows the alpha update of the same instant).
    void CheckRateDecrease();
    /// Rate-increase timer, every RpTimer after the last decrease.
    void IncreaseRate();
    /// Apply alpha updates 1..k (the k-th falls at anchor + k*AlphaResumeInterval).
    void AdvanceAlpha(uint64_t k);
    /// Number of alpha updates that precede decrease check m.
    uint64_t AlphaUpdatesBefore(uint64_t m) const;

    // Attributes.
    Time m_alphaInterval;
    Time m_decreaseInterval;
    Time m_rpTimer;
    double m_g;
    uint32_t m_fastRecoveryTimes;
    DataRate m_rateAi;
    DataRate m_rateHai;
    bool m_clampTargetRate;
    double m_rateOnFirstCnp;

    // The rate attributes in bit/s, read at start.
    double m_ai = 0;
    double m_hai = 0;
    double m_min = 0;

    // Per-flow state.
    double m_alpha = 1.0;
    double m_target = 0.0;
    bool m_firstCnp = true;
    bool m_cnpSinceCheck = false;
    uint32_t m_stage = 0; ///< rate-increase stage (rpTimeStage)

    // The alpha timer fires every AlphaResumeInterval but only its value at a
    // decrease check matters, so its updates are applied in bulk there and on
    // CNP arrival: identical arithmetic, without an event per update.
    int64_t m_alphaSteps = 0;
    int64_t m_decreaseSteps = 0;
    int64_t m_nsStep = 0;
    int64_t m_anchor = 0;       ///< time step of the first CNP
    uint64_t m_nextCheck = 1;   ///< index of the pending decrease check
    uint64_t m_alphaDone = 0;   ///< alpha updates applied
    uint64_t m_cnpSlot = 0;     ///< alpha update whose interval saw a CNP (0: none)

    EventId m_checkEvent;
    EventId m_increaseEvent;
};

} // namespace ns3

#endif
