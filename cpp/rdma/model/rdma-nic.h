// Host RDMA NIC: one queue pair per flow, go-back-N transport, per-flow rate
// pacing set by the congestion control, and the receiver's ACK/NACK/CNP.
#ifndef RDMA_NIC_H
#define RDMA_NIC_H

#include "rdma-device.h"
#include "rdma-queue-pair.h"

#include "ns3/callback.h"
#include "ns3/nstime.h"

#include <memory>
#include <vector>

namespace ns3
{

class RdmaNic : public RdmaDevice
{
  public:
    using FlowTable = std::vector<std::unique_ptr<RdmaQueuePair>>;

    static TypeId GetTypeId();

    void Receive(uint32_t port, RdmaPacket* p) override;
    uint32_t AddPort(uint32_t linkId, uint64_t rateBps, int64_t delaySteps) override;

    uint32_t GetMtu() const;
    uint32_t GetHeaderBytes() const;
    uint32_t GetAckInterval() const;

    /// The flows of the network, indexed by RdmaPacket::flow.
    void SetFlowTable(const FlowTable* flows);
    /// Called when a flow sourced here has all its bytes acknowledged.
    void SetFlowDoneCallback(Callback<void, RdmaQueuePair&> cb);

    /// Start sending `qp` (sourced here; its cc is set) on the ECMP-chosen port.
    void StartFlow(RdmaQueuePair& qp);
    /// New sending rate from the congestion control. The gap before the next
    /// frame is re-paced at the new rate, as HPCC's ChangeRate does.
    void SetQpRate(RdmaQueuePair& qp, double bps);
    /// The Wormhole kernel delivered `bytes` of the flow in dtSteps of skipped
    /// time (both negative on a skip-back): the flow ends that much earlier in
    /// sequence space, so frames in flight stay valid, and its timestamps move.
    /// @return the bytes taken (clamped to what is unsent / was credited)
    int64_t CreditFlow(RdmaQueuePair& qp, int64_t bytes, int64_t dtSteps);

  protected:
    void Service(uint32_t port) override;
    void DoDispose() override;

  private:
    /// Egress state of one port: control frames first, then round robin
    /// over the queue pairs bound to it.
    struct Egress
    {
        RdmaPacketQueue control;
        std::vector<RdmaQueuePair*> qps;
        uint32_t rr = 0; ///< index of the last queue pair served
    };

    /// Something became sendable on `port`: send now if it is free, else
    /// make sure it is served when it frees up.
    void Kick(uint32_t port);
    /// Schedule the next service: when the wire frees up, or at the earliest
    /// pacing time of an unpaused queue pair with bytes left.
    void ScheduleNext(uint32_t port);
    RdmaQueuePair* PickQp(Egress& eg, const RdmaPort& port, int64_t now);
    RdmaPacket* MakeData(RdmaQueuePair& qp, int64_t now);
    /// Pacing gap, in time steps, after a frame of `wire` bytes at `rate`.
    double PacingGap(const RdmaQueuePair& qp, uint32_t wire, double rate) const;

    /// The queue pair may send: bytes left and, under a window, room in it.
    static bool HasSendable(const RdmaQueuePair& qp);

    void ReceiveData(RdmaPacket& p);
    void ReceiveAck(RdmaPacket& p);
    /// `echo`: telemetry of the acknowledged frame, handed to the ACK/NACK.
    void SendControl(RdmaQueuePair& qp, RdmaPacketKind kind, bool cnp, RdmaTelemetry* echo = nullptr);

    void ArmRetransmit(RdmaQueuePair& qp, int64_t at);
    void RetransmitCheck(RdmaQueuePair* qp);
    void Complete(RdmaQueuePair& qp);

    // Attributes.
    uint32_t m_mtu;
    uint32_t m_headerBytes;
    uint32_t m_ackInterval;
    Time m_nackInterval;
    Time m_retransmitTimeout;
    Time m_ifg;
    bool m_ackHighPriority;

    std::vector<Egress> m_egress;
    const FlowTable* m_flows = nullptr;
    Callback<void, RdmaQueuePair&> m_flowDone;
};

} // namespace ns3

#endif
