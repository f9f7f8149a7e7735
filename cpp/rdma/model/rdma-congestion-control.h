// Sender-side congestion control, one instance per queue pair. The NIC only
// talks to this interface (DCQCN, HPCC, TIMELY, DCTCP sit behind it). The base
// owns what every algorithm shares: the rate floor and the in-flight window
// (docs/congestion-control.md).
#ifndef RDMA_CONGESTION_CONTROL_H
#define RDMA_CONGESTION_CONTROL_H

#include "ack-clocked-cycle.h"
#include "rdma-device.h"
#include "rdma-packet.h"
#include "rdma-queue-pair.h"

#include "flow-seam.h"

#include "ns3/data-rate.h"
#include "ns3/object.h"
#include "ns3/simulator.h"

#include <span>
#include <vector>

namespace ns3
{

class RdmaCongestionControl : public Object
{
  public:
    static TypeId GetTypeId();

    /// A controller with this one's parameters and fresh state, for one flow.
    virtual Ptr<RdmaCongestionControl> Fork() const = 0;

    /// The flow starts, at the line rate of its NIC port.
    void Start(RdmaQueuePair* qp);
    /// The flow completed: cancel every timer. Default: nothing (no timers).
    virtual void Stop();
    /// A congestion notification reached the sender (ACK/NACK flag or CNP
    /// frame). Default: nothing (algorithms that ignore ECN or read it in OnAck).
    virtual void OnCnp();
    /// Whether ECN marks move its rate (a CNP, or the ACK's echo of a mark):
    /// where marks are drawn by probability, its share is then a draw too.
    /// Default: false.
    virtual bool ReactsToEcn() const
    {
        return false;
    }
    /// Every ACK/NACK, after the sender state has advanced. Default: nothing.
    virtual void OnAck(const RdmaPacket& ack);
    /// The Wormhole kernel moved this flow's pending timers by dtSteps: move
    /// any absolute timestamps kept outside events too. Default: nothing.
    virtual void Shift(int64_t dtSteps);
    /// The Wormhole kernel skipped dtSteps (> 0) of this flow's steady state:
    /// its rate stands for the skipped span, but state its control cycles
    /// would have reset in that span has to be set as they would leave it.
    /// Called after Shift. Default: nothing (no such state).
    virtual void Skipped(int64_t dtSteps);
    /// The kernel credited (bytes > 0) or took back (< 0) this many of the
    /// flow's bytes without sending them. A cycle clocked by acknowledged
    /// bytes (AckClock) keeps the phase the reference's would have after
    /// sending them. Called after Shift.
    void Credited(int64_t bytes);

    /// What the NIC stamps on each DATA frame for this controller (the
    /// RdmaQueuePair::telemetry codes) and the bytes that adds on the wire
    /// of DATA frames and their ACKs. Default: nothing, 0 bytes.
    virtual uint8_t GetTelemetry() const;
    virtual uint32_t GetTelemetryBytes() const;

    /// The share of a bottleneck's capacity this controller aims to fill in
    /// steady state (HPCC: UTarget). Default 1.
    virtual double GetTargetUtilisation() const;

    double GetRate() const;
    /// The controller's state as numbers (rate first), for the Wormhole
    /// kernel's memo of contention patterns. Default: the rate alone.
    virtual std::vector<double> SaveState() const;
    /// Put back a state SaveState() gave (possibly from another flow of an
    /// isomorphic pattern); timers keep or take up their period from now.
    virtual void RestoreState(std::span<const double> state);

  protected:
    void DoDispose() override;
    virtual void DoStart() = 0;
    /// The controller's cycle clocked by acknowledged bytes, which a credit
    /// moves (HPCC's and TIMELY's per-RTT updates, DCTCP's window). Default:
    /// none.
    virtual AckClockedCycle* AckClock();

    /// Apply a new sending rate to the flow (pacing), clamped to
    /// [MinRate, line rate], and the window that follows from it.
    void SetRate(double bps);
    /// The rate floor in bit/s.
    double MinRateBps() const;
    /// `bps` kept within [MinRate, line rate].
    double ClampRate(double bps) const;
    /// The flow's base RTT in seconds (RdmaQueuePair::baseRtt).
    double BaseRttSeconds() const;

    /// Schedule a timer of this flow: owned by its host link, run in the
    /// context of the node it is scheduled from (the source host).
    template <typename MEM, typename OBJ>
    EventId ScheduleTimer(const Time& delay, MEM mem, OBJ obj)
    {
        m_qp->counters->ccEvents++;
        wormhole::OwnerScope owner(m_qp->links.front());
        return Simulator::Schedule(delay, mem, obj);
    }

    RdmaQueuePair* m_qp = nullptr;

  private:
    DataRate m_minRate;
    bool m_window;
    bool m_variableWindow;
};

} // namespace ns3

#endif
