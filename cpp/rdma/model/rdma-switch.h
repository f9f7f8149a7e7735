// Output-queued switch: ECMP forwarding, 8 priority queues per egress port
// (control frames strict in queue 0, data round robin in its priority group),
// a shared-buffer MMU with PFC, and ECN marking at dequeue.
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

    void SetMmu(Ptr<RdmaSwitchMmu> mmu);
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
        uint64_t pauses = 0;
        uint64_t resumes = 0;
    };

    void Kick(uint32_t port);
    /// @return the next frame and its queue (kQueues for a PFC frame)
    RdmaPacket* Dequeue(Egress& eg, uint8_t paused, uint32_t& q);
    void SendPfc(uint32_t port, uint32_t q, bool pause);
    /// HPCC's in-band telemetry: record this egress on a DATA frame that
    /// asked for it, at dequeue (before `wire` bytes go out).
    void AppendIntHop(uint32_t port, RdmaTelemetry& t, uint32_t wire) const;
    bool ShouldMark(Egress& eg, uint64_t queueBytes, const RdmaPacket& frame);

    // Attributes.
    bool m_ecnEnabled;
    uint64_t m_kminPer100G;
    uint64_t m_kmaxPer100G;
    double m_pmax;
    std::string m_ecnMap;
    uint64_t m_ecmpSeed;

    Ptr<RdmaSwitchMmu> m_mmu;
    std::vector<Egress> m_egress;

    TracedCallback<uint32_t, uint32_t, bool> m_pfcTrace; ///< port, priority, pause
    TracedCallback<uint32_t, const RdmaPacket&> m_dropTrace; ///< ingress port, frame
};

} // namespace ns3

#endif
