// DCTCP as a rate controller (HPCC's CC_MODE 8): alpha, the fraction of
// ECN-echoing ACKs, is averaged once per window of data; the rate is cut by
// alpha/2 at most once per window and grows by RateAi per window otherwise.
// See docs/congestion-control.md.
#ifndef DCTCP_RATE_CONTROL_H
#define DCTCP_RATE_CONTROL_H

#include "ack-clocked-cycle.h"
#include "rdma-congestion-control.h"

#include "ns3/data-rate.h"

namespace ns3
{

class DctcpRateControl : public RdmaCongestionControl
{
  public:
    static TypeId GetTypeId();

    Ptr<RdmaCongestionControl> Fork() const override;
    void OnAck(const RdmaPacket& ack) override;
    void Shift(int64_t dtSteps) override;
    void Skipped(int64_t dtSteps) override;

    bool ReactsToEcn() const override
    {
        return true;
    }
    /// {rate, alpha}
    std::vector<double> SaveState() const override;
    void RestoreState(std::span<const double> state) override;

    double GetAlpha() const;

  protected:
    void DoStart() override;

  private:
    AckClockedCycle* AckClock() override
    {
        return &m_window;
    }

    /// Start a new observation window at an ACK for `ackSeq`: it closes
    /// once every byte sent by now is acknowledged.
    void OpenWindow(uint64_t ackSeq);

    // Attributes.
    DataRate m_rateAi;
    double m_g;

    double m_ai = 0;
    double m_alpha = 1.0;
    bool m_started = false; ///< the first ACK opened the first window
    AckClockedCycle m_window; ///< the observation window, a round trip of data
    uint64_t m_acks = 0;   ///< ACKs in the current window
    uint64_t m_marked = 0; ///< of which echoed ECN
    bool m_reducing = false; ///< a cut happened; no further cut until recoverEnd is acked
    uint64_t m_recoverEnd = 0;
    double m_lastFraction = 0; ///< marked fraction of the last window folded into alpha
    int64_t m_windowOpened = 0;  ///< time step the current window opened
    int64_t m_lastWindow = 0;    ///< time steps the last window took (0: none closed yet)

    /// The decay the last skip applied, while a skip-back may still cut it
    /// (until the flow's next ACK).
    struct SkipDecay
    {
        int64_t span = 0;   ///< time steps skipped (0: no decay to revise)
        int64_t window = 1; ///< the window it decayed per
        double alpha = 1.0; ///< alpha before the skip
    };
    SkipDecay m_skip;
};

} // namespace ns3

#endif
