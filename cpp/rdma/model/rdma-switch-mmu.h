// Shared-buffer memory-management unit of an RdmaSwitch, written from
// docs/switch-buffer-model.md: per-port reserve and PFC headroom, one shared
// pool under a dynamic threshold, ingress (PFC) and egress (ECN) accounting,
// and the pause/resume hysteresis, and the ingress charge of a frameless
// backlog (§10). It owns buffer state only; the switch sends the PFC frames
// it asks for.
#ifndef RDMA_SWITCH_MMU_H
#define RDMA_SWITCH_MMU_H

#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class RdmaSwitchMmu : public Object
{
  public:
    static constexpr uint32_t kQueues = 8;

    /// What became of an arriving data frame.
    enum class Arrival : uint8_t
    {
        DROPPED, ///< no room: nothing was charged
        QUEUED,  ///< charged to its ingress and egress
        PAUSE,   ///< charged, and its ingress must now send a PAUSE upstream
    };

    static TypeId GetTypeId();

    /// Append the next port: its link's rate and one-way delay size the PFC
    /// headroom; `nicRateBps` (fastest host link, 0 if unknown) sets how much
    /// of the free pool the port may take (spec §2, §4).
    void AddPort(uint64_t rateBps, uint64_t delayNs, uint64_t nicRateBps);

    /// A data frame of `wire` bytes arrives on ingress `in`, queue q, bound for `out`.
    Arrival Arrive(uint32_t in, uint32_t out, uint32_t q, uint32_t wire);
    /// The frame leaves egress `out`. @return true when ingress (in, q) must
    /// now send a RESUME upstream.
    bool Depart(uint32_t in, uint32_t out, uint32_t q, uint32_t wire);

    /// A frameless backlog of `bytes` stands for frames that came in on
    /// ingress (in, q) (spec §10): charge them as that many frames arriving
    /// one after another would be, but not to any egress (ECN reads the
    /// backlog itself). Never dropped. @return true when the ingress must
    /// now send a PAUSE upstream.
    bool ChargeBacklog(uint32_t in, uint32_t q, uint64_t bytes);
    /// `bytes` of such a backlog have been sent. @return true when ingress
    /// (in, q) must now send a RESUME upstream.
    bool ReleaseBacklog(uint32_t in, uint32_t q, uint64_t bytes);
    /// Bytes ingress (in, q) must release before it may resume, judged
    /// against the threshold now; 0 when it is not paused.
    uint64_t GetResumeDistance(uint32_t in, uint32_t q) const;
    /// A PAUSE is standing for ingress (in, q).
    bool IsPaused(uint32_t in, uint32_t q) const;
    /// What ingress (in, q) holds in guarantee, shared pool and headroom.
    uint64_t GetIngressBytes(uint32_t in, uint32_t q) const;

    /// Bytes waiting in egress (out, q): what ECN marking reads.
    uint64_t GetEgressBytes(uint32_t out, uint32_t q) const;
    /// Bytes of all ingresses in the shared pool.
    uint64_t GetSharedUsed() const;
    /// The dynamic threshold of `port` now (spec §4).
    uint64_t GetThreshold(uint32_t port) const;
    /// PFC headroom of `port`, bytes (0 when PFC is off).
    uint64_t GetHeadroom(uint32_t port) const;

  private:
    /// What one ingress (port, queue) holds, filled and drained in a fixed order.
    struct IngressState
    {
        uint64_t guaranteed = 0; ///< in its port's reserve, <= m_reserve
        uint64_t shared = 0;     ///< in the shared pool (only once guaranteed is full)
        uint64_t headroom = 0;   ///< in its port's headroom
        bool paused = false;     ///< a PAUSE is standing for it
    };

    struct PortBudget
    {
        uint64_t headroom; ///< bytes
        uint32_t shift;    ///< the threshold is the free pool >> shift
    };

    IngressState& Ingress(uint32_t port, uint32_t q);
    /// Where an admitted frame is charged; false when it must be dropped.
    bool Charge(IngressState& ing, uint32_t port, uint64_t wire);
    /// §7a once `ing` has been charged.
    bool PauseDue(IngressState& ing, uint32_t port);
    /// §6 then §7b: give `wire` bytes back and tell whether to resume.
    bool Release(IngressState& ing, uint32_t port, uint64_t wire);

    // Attributes.
    uint64_t m_bufferSize;
    uint64_t m_reserve;
    uint64_t m_resumeOffset;
    double m_headroomRttFactor;
    uint32_t m_pfcAlphaShift;
    bool m_pfcEnabled;

    std::vector<PortBudget> m_ports;
    std::vector<IngressState> m_ingress; ///< port * kQueues + q
    std::vector<uint64_t> m_egress;      ///< port * kQueues + q
    uint64_t m_setAside = 0;            ///< reserves + headrooms of all ports
    uint64_t m_sharedUsed = 0;
};

} // namespace ns3

#endif
