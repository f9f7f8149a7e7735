// Output-queued switch: ECMP forwarding, 8 priority queues per egress port
// (control frames strict in queue 0, data round robin in its priority group),
// a shared-buffer MMU with PFC, ECN marking at dequeue, and the ingress
// charge of a frameless backlog the Wormhole kernel restores on a port.
#ifndef RDMA_SWITCH_H
#define RDMA_SWITCH_H

#include "rdma-device.h"
#include "rdma-switch-mmu.h"

#include "ns3/traced-callback.h"

#include <string>
#include <vector>

namespace ns3
{

class RdmaSwitch : public RdmaDevice
{
  public:
    static TypeId GetTypeId();

    /// Signature of the "Pfc" trace: a PFC frame leaves `port`.
    typedef void (*PfcTracedCallback)(uint32_t port, uint32_t priority, bool pause);
    /// Signature of the "Drop" trace.
    typedef void (*DropTracedCallback)(uint32_t inPort, const RdmaPacket& frame);

    void Receive(uint32_t port, RdmaPacket* p) override;
    uint32_t AddPort(uint32_t linkId, uint64_t rateBps, int64_t delaySteps) override;

    /// Bytes of a frameless backlog that stand for frames of one ingress.
    struct BacklogShare
    {
        uint32_t in;    ///< ingress port the frames would have come in on
        uint32_t q;     ///< their priority (0: not charged, as queue 0's frames)
        uint64_t bytes;
    };

    using RdmaDevice::AddBacklog;
    /// A frameless backlog on egress `port` from `from` on (RdmaDevice::
    /// AddBacklog, of the shares' total), charged to the ingresses its frames
    /// would have come in on (docs/switch-buffer-model.md §10): PFC sees it
    /// as it would have seen the frames, and each charge is given back as
    /// the port sends the backlog.
    void AddBacklog(uint32_t port, const std::vector<BacklogShare>& shares, int64_t from);
    /// RdmaDevice::DropBacklog, giving back what the unsent part still holds.
    void DropBacklog(uint32_t port, int64_t now) override;

    void SetMmu(Ptr<RdmaSwitchMmu> mmu);
    /// Counts again the exempt frames queued at `port` (an exemption was set
    /// or lifted while they waited).
    void RecountEcnExempt(uint32_t port);
    Ptr<RdmaSwitchMmu> GetMmu() const;
    /// Derive the per-port ECN thresholds from the port rates (EcnMap, else
    /// the linear per-100G rule) and key each port's marking draws by
    /// (seed, port) and the frame; call after all ports are added. Throws
    /// std::invalid_argument for a malformed EcnMap.
    void ConfigureEcn(uint64_t seed);
    /// ECN thresholds in force on `port`: Kmin, Kmax (bytes) and Pmax.
    void GetEcnThresholds(uint32_t port, uint64_t& kmin, uint64_t& kmax, double& pmax) const;
    uint64_t GetEcmpSeed() const;

    uint64_t GetQueueBytes(uint32_t port) const;
    uint64_t GetPausesSent(uint32_t port) const;
    uint64_t GetResumesSent(uint32_t port) const;

  protected:
    void Service(uint32_t port) override;
    void DoDispose() override;

  private:
    static constexpr uint32_t kQueues = RdmaSwitchMmu::kQueues;

    struct Egress
    {
        RdmaPacketQueue pfc; ///< PFC frames: never paused, ahead of everything
        RdmaPacketQueue queues[kQueues];
        uint8_t nonEmpty = 0; ///< bit q: queues[q] holds frames
        uint8_t rr = kQueues - 1; ///< last data queue served (1..7)
        uint64_t kmin = 0;
        uint64_t kmax = 0;
        double pmax = 0;
        /// Marking draws are counter-based and keyed by the frame: the draw
        /// of a frame here is a hash of (ecnKey, its flow, its offset in the
        /// flow as a packet-level run numbers it). It depends on that frame
        /// only, never on other ports' or flows' traffic (isolation), and a
        /// fast-forward moves no draw of a frame it did not skip
        /// (docs/fast-forward.md).
        uint64_t ecnKey = 0;
        uint64_t exemptQueued[kQueues] = {}; ///< bytes of ECN-exempt data frames in queues[q]
        uint64_t pauses = 0;
        uint64_t resumes = 0;
        /// What the frameless backlog still holds at its ingresses (§10):
        /// `charged` in all, given back in proportion as it is sent.
        std::vector<BacklogShare> charges;
        uint64_t charged = 0;
        EventId settle; ///< next look at the charges (a RESUME may be due)
    };

    void Kick(uint32_t port);
    /// @return the next frame and its queue (kQueues for a PFC frame)
    RdmaPacket* Dequeue(Egress& eg, uint8_t paused, uint32_t& q);
    /// Queue a PFC frame on `port`, sent when the port is free and not
    /// before time step `notBefore`.
    void SendPfc(uint32_t port, uint32_t q, bool pause, int64_t notBefore = 0);
    /// HPCC's in-band telemetry: record this egress on a DATA frame that
    /// asked for it, at dequeue (before `wire` bytes go out).
    void AppendIntHop(uint32_t port, RdmaTelemetry& t, uint32_t wire) const;
    bool ShouldMark(Egress& eg, uint64_t queueBytes, const RdmaPacket& frame);
    /// Give back the ingress charges of the part of `port`'s backlog sent by
    /// now, resuming the ingresses that may resume.
    void SettleBacklog(uint32_t port);
    /// SettleBacklog on every port holding charges: before the MMU is
    /// consulted, so it sees the backlog as it stands.
    void SettleBacklogs()
    {
        if (m_chargedPorts > 0)
        {
            for (uint32_t port = 0; port < m_egress.size(); ++port)
            {
                SettleBacklog(port);
            }
        }
    }
    /// Plan the next SettleBacklog of `port`: when a paused ingress may
    /// have shed enough to resume, and at the end of the backlog.
    void PlanSettle(uint32_t port);
    void SettleEvent(uint32_t port);

    // Attributes.
    bool m_ecnEnabled;
    uint64_t m_kminPer100G;
    uint64_t m_kmaxPer100G;
    double m_pmax;
    std::string m_ecnMap;
    uint64_t m_ecmpSeed;

    Ptr<RdmaSwitchMmu> m_mmu;
    std::vector<Egress> m_egress;
    uint32_t m_chargedPorts = 0; ///< egresses whose backlog holds ingress charges

    TracedCallback<uint32_t, uint32_t, bool> m_pfcTrace; ///< port, priority, pause
    TracedCallback<uint32_t, const RdmaPacket&> m_dropTrace; ///< ingress port, frame
};

} // namespace ns3

#endif
