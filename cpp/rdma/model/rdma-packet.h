// Lean frames of the RoCEv2 model: our own header fields, no ns3::Packet, no
// payload bytes, recycled through a free list so the steady state allocates
// nothing per packet.
#ifndef RDMA_PACKET_H
#define RDMA_PACKET_H

#include <cstdint>
#include <memory>
#include <vector>

namespace ns3
{

/// Wire size of ACK, NACK, CNP and PFC frames.
constexpr uint32_t kRdmaControlBytes = 64;

enum class RdmaPacketKind : uint8_t
{
    DATA,
    ACK,    ///< cumulative: seq = next byte expected by the receiver
    NACK,   ///< go-back-N request: seq = next byte expected by the receiver
    CNP,    ///< congestion notification not carried by an ACK/NACK
    PAUSE,  ///< PFC: stop priority `pg` (the pause-time field is not modelled)
    RESUME, ///< PFC: restart priority `pg`
};

/// What one switch egress reports for HPCC's in-band telemetry (INT).
struct RdmaIntHop
{
    int64_t ts;       ///< time step of the dequeue
    uint64_t txBytes; ///< bytes the port has sent, this frame included (skipped ones too)
    uint64_t credited; ///< of those, the bytes skips booked on the port (RdmaPort::txCredited)
    uint64_t qlen;    ///< bytes queued at the port behind this frame
    uint64_t rateBps; ///< line rate of the port
};

/// Telemetry a sender asked for: its send time (TIMELY's RTT), and for HPCC
/// one record per switch egress. Data frames of controllers that need none
/// carry none: the field stays null and switches do no per-hop work.
struct RdmaTelemetry
{
    static constexpr uint32_t kMaxHops = 5;

    RdmaTelemetry* next; ///< free list
    int64_t sentAt;      ///< sender's flow clock at send (see RdmaQueuePair::clockShift)
    bool collectHops;    ///< switches append an RdmaIntHop (until kMaxHops)
    uint8_t nHops;
    RdmaIntHop hops[kMaxHops];
};

/// One frame. Fields a kind does not use are zero.
struct RdmaPacket
{
    RdmaPacket* next; ///< intrusive link: the free list or the one FIFO holding it
    uint64_t seq;     ///< DATA: first byte; ACK/NACK: next expected byte
    /// DATA: seq plus the bytes a fast-forward credited the flow before this
    /// frame was made: its first byte as a packet-level run numbers it (the
    /// key of its ECN marking draws).
    uint64_t offset;
    uint32_t flow;    ///< internal flow index (dense)
    uint32_t ecmpKey; ///< the flow's ECMP hash key (RdmaQueuePair::ecmpKey)
    uint32_t src;     ///< model node index of the sender of this frame
    uint32_t dst;     ///< model node index of its destination host
    uint32_t payload; ///< flow bytes carried (DATA)
    uint32_t wire;    ///< bytes on the wire
    uint16_t inPort;  ///< ingress port at the switch holding it (MMU release)
    RdmaPacketKind kind;
    uint8_t pg;       ///< priority group; PAUSE/RESUME: the priority concerned
    bool ce;          ///< ECN congestion experienced (DATA)
    bool cnp;         ///< ACK/NACK: the acknowledged data carried CE
    /// DATA: what the sender's congestion control asked to collect; ACK:
    /// the acknowledged frame's, echoed. Owned by the frame.
    RdmaTelemetry* telemetry;
};

/// Free-list pool. Memory is held in chunks and given back when the pool dies,
/// so frames still in flight at Simulator::Destroy() need no cleanup.
class RdmaPacketPool
{
  public:
    RdmaPacket* Alloc()
    {
        if (!m_free)
        {
            Grow();
        }
        RdmaPacket* p = m_free;
        m_free = p->next;
        *p = RdmaPacket{};
        return p;
    }

    void Free(RdmaPacket* p)
    {
        if (p->telemetry)
        {
            FreeTelemetry(p->telemetry);
        }
        p->next = m_free;
        m_free = p;
    }

    RdmaTelemetry* AllocTelemetry()
    {
        if (!m_freeTelemetry)
        {
            m_telemetryChunks.push_back(std::make_unique<RdmaTelemetry[]>(1024));
            RdmaTelemetry* chunk = m_telemetryChunks.back().get();
            for (size_t i = 0; i < 1024; ++i)
            {
                chunk[i].next = (i + 1 < 1024) ? &chunk[i + 1] : nullptr;
            }
            m_freeTelemetry = chunk;
        }
        RdmaTelemetry* t = m_freeTelemetry;
        m_freeTelemetry = t->next;
        t->next = nullptr;
        t->nHops = 0;
        return t;
    }

    void FreeTelemetry(RdmaTelemetry* t)
    {
        t->next = m_freeTelemetry;
        m_freeTelemetry = t;
    }

  private:
    void Grow();

    RdmaPacket* m_free = nullptr;
    std::vector<std::unique_ptr<RdmaPacket[]>> m_chunks;
    RdmaTelemetry* m_freeTelemetry = nullptr;
    std::vector<std::unique_ptr<RdmaTelemetry[]>> m_telemetryChunks;
};

/// FIFO of frames linked through RdmaPacket::next.
class RdmaPacketQueue
{
  public:
    bool IsEmpty() const
    {
        return m_head == nullptr;
    }

    uint64_t GetBytes() const
    {
        return m_bytes;
    }

    void Push(RdmaPacket* p)
    {
        p->next = nullptr;
        if (m_tail)
        {
            m_tail->next = p;
        }
        else
        {
            m_head = p;
        }
        m_tail = p;
        m_bytes += p->wire;
    }

    template <typename F>
    void ForEach(F&& f) const
    {
        for (const RdmaPacket* p = m_head; p; p = p->next)
        {
            f(*p);
        }
    }

    /// @return the oldest frame, or nullptr when empty
    RdmaPacket* Pop()
    {
        RdmaPacket* p = m_head;
        if (p)
        {
            m_head = p->next;
            if (!m_head)
            {
                m_tail = nullptr;
            }
            m_bytes -= p->wire;
        }
        return p;
    }

  private:
    RdmaPacket* m_head = nullptr;
    RdmaPacket* m_tail = nullptr;
    uint64_t m_bytes = 0;
};

} // namespace ns3

#endif
