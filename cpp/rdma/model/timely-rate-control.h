// TIMELY (SIGCOMM'15, HPCC's CC_MODE 7): the sender measures each frame's
// RTT from its own send stamp echoed on the ACK and, once per RTT, moves the
// rate against the RTT gradient (additive up when RTT falls or stays below
// TLow, multiplicative down when it rises or exceeds THigh).
// See docs/congestion-control.md.
#ifndef TIMELY_RATE_CONTROL_H
#define TIMELY_RATE_CONTROL_H

#include "ack-clocked-cycle.h"
#include "rdma-congestion-control.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

namespace ns3
{

class TimelyRateControl : public RdmaCongestionControl
{
  public:
    static TypeId GetTypeId();

    Ptr<RdmaCongestionControl> Fork() const override;
    void OnAck(const RdmaPacket& ack) override;
    uint8_t GetTelemetry() const override;
    uint32_t GetTelemetryBytes() const override;
    /// {rate, last RTT (s), RTT difference EWMA (s), stage}
    std::vector<double> SaveState() const override;
    void RestoreState(std::span<const double> state) override;

    /// The latest RTT sample, seconds (0 before the first).
    double GetLastRtt() const;

  protected:
    void DoStart() override;

  private:
    AckClockedCycle* AckClock() override
    {
        return &m_update;
    }

    /// One per-RTT update from RTT sample `rtt` (seconds).
    void Update(double rtt);

    // Attributes.
    DataRate m_rateAi;
    DataRate m_rateHai;
    double m_alpha;
    double m_beta;
    Time m_tLow;
    Time m_tHigh;
    Time m_minRtt;
    uint32_t m_haiThresh;

    double m_ai = 0;
    double m_hai = 0;
    bool m_started = false;
    AckClockedCycle m_update; ///< one update per round trip
    double m_lastRtt = 0;
    double m_rttDiff = 0;
    uint32_t m_stage = 0; ///< consecutive updates with a non-positive gradient
};

} // namespace ns3

#endif
