// Shared-buffer switch MMU (HPCC's SwitchMmu behaviour): ingress accounting
// per (port, queue) with a private reserve, a shared pool under a dynamic
// threshold, and per-port PFC headroom for the bytes still arriving after a
// PAUSE.
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

    static TypeId GetTypeId();

    /// Size the tables: `headroomBytes` and the alpha `shift` per port.
    void Configure(const std::vector<uint64_t>& headroomBytes, const std::vector<uint32_t>& shift);

    bool IsPfcEnabled() const;
    double GetHeadroomRttFactor() const;
    uint32_t GetPfcAlphaShift() const;

    /// A frame of `size` bytes arrives on `in` for queue q of `out`.
    /// @return false when it must be dropped (nothing is accounted then)
    bool Admit(uint32_t in, uint32_t out, uint32_t q, uint32_t size);
    /// The frame leaves queue q of `out`.
    void Release(uint32_t in, uint32_t out, uint32_t q, uint32_t size);
    /// @return true when (in, q) must be paused now (and marks it paused)
    bool CheckPause(uint32_t in, uint32_t q);
    /// @return true when (in, q) must be resumed now (and marks it running)
    bool CheckResume(uint32_t in, uint32_t q);

    uint64_t GetEgressBytes(uint32_t out, uint32_t q) const;
    uint64_t GetSharedUsed() const;
    /// Dynamic PFC threshold of `port`:
    /// (buffer - total headroom - total reserve - shared used) >> shift(port).
    int64_t GetThreshold(uint32_t port) const;

  private:
    uint64_t SharedUsed(uint32_t i) const;

    // Attributes.
    uint64_t m_bufferSize;
    uint64_t m_reserve;
    uint64_t m_resumeOffset;
    double m_headroomRttFactor;
    uint32_t m_pfcAlphaShift;
    bool m_pfcEnabled;

    std::vector<uint64_t> m_headroom; ///< per port
    std::vector<uint32_t> m_shift;    ///< per port
    // Per (port, queue), index port*kQueues + queue.
    std::vector<uint64_t> m_ingress;  ///< bytes held in reserve + shared pool
    std::vector<uint64_t> m_hdrm;     ///< bytes held in headroom
    std::vector<uint64_t> m_egress;   ///< bytes queued for output
    std::vector<uint8_t> m_paused;
    uint64_t m_sharedUsed = 0;
    int64_t m_staticUse = 0; ///< total headroom + total reserve
};

} // namespace ns3

#endif
