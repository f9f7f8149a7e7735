// HPCC (SIGCOMM'19, HPCC's CC_MODE 3): every data frame collects in-band
// telemetry at each switch egress; from the echo on its ACK the sender
// estimates each hop's normalised in-flight bytes U and sets the rate so the
// most loaded hop runs at UTarget. See docs/congestion-control.md.
#ifndef HPCC_RATE_CONTROL_H
#define HPCC_RATE_CONTROL_H

#include "ack-clocked-cycle.h"
#include "rdma-congestion-control.h"

#include "ns3/data-rate.h"

#include <array>
#include <vector>

namespace ns3
{

class HpccRateControl : public RdmaCongestionControl
{
  public:
    static TypeId GetTypeId();

    Ptr<RdmaCongestionControl> Fork() const override;
    void OnAck(const RdmaPacket& ack) override;
    void Shift(int64_t dtSteps) override;
    uint8_t GetTelemetry() const override;
    uint32_t GetTelemetryBytes() const override;
    double GetTargetUtilisation() const override;
    /// {rate, reference rate, max U, stage}
    std::vector<double> SaveState() const override;
    void RestoreState(std::span<const double> state) override;

    /// The normalised in-flight estimate of the most loaded hop.
    double GetUtilisation() const;

  protected:
    void DoStart() override;

  private:
    AckClockedCycle* AckClock() override
    {
        return &m_update;
    }

    struct Hop
    {
        int64_t ts = 0;
        uint64_t txBytes = 0;  ///< the port's byte counter, as stamped (not rounded)
        uint64_t credited = 0; ///< of it, bytes skips booked there
        uint64_t qlen = 0;
        double u = 1.0; ///< EWMA of the hop's normalised in-flight bytes
    };

    /// A switch stamp moved onto the flow's present clock: stamps taken
    /// before a skip that has shifted the flow's records since get its shift.
    int64_t StampOnFlowClock(int64_t ts) const;

    /// Fold one ACK's telemetry into the per-hop estimates; false if it
    /// cannot be used (first sample, path changed, stale stamps).
    bool Measure(const RdmaTelemetry& t, double& maxU);

    // Attributes.
    DataRate m_rateAi;
    double m_uTarget;
    uint32_t m_maxStage;
    bool m_fastReact;
    uint32_t m_intMulti;

    double m_ai = 0;
    double m_reference = 0; ///< rate of the last per-RTT update (W_c / T)
    uint32_t m_stage = 0;   ///< per-RTT updates in a row that were additive
    AckClockedCycle m_update; ///< one update per round trip
    bool m_started = false;
    double m_maxU = 1.0;
    uint8_t m_nHops = 0;
    std::array<Hop, RdmaTelemetry::kMaxHops> m_hops{};

    /// Skips (global time they began, shift) whose pre-skip stamps may
    /// still be in flight.
    struct ClockShift
    {
        int64_t at;
        int64_t dt;
    };
    std::vector<ClockShift> m_shifts;
};

} // namespace ns3

#endif
