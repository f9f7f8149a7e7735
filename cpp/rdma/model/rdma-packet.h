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

/// One frame. Fields a kind does not use are zero.
struct RdmaPacket
{
    RdmaPacket* next; ///< intrusive link: the free list or the one FIFO holding it
    uint64_t seq;     ///< DATA: first byte; ACK/NACK: next expected byte
    uint32_t flow;    ///< internal flow index (dense)
    uint32_t src;     ///< model node index of the sender of this frame
    uint32_t dst;     ///< model node index of its destination host
    uint32_t payload; ///< flow bytes carried (DATA)
    uint32_t wire;    ///< bytes on the wire
    uint16_t inPort;  ///< ingress port at the switch holding it (MMU release)
    RdmaPacketKind kind;
    uint8_t pg;       ///< priority group; PAUSE/RESUME: the priority concerned
    bool ce;          ///< ECN congestion experienced (DATA)
    bool cnp;         ///< ACK/NACK: the acknowledged data carried CE
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
        p->next = m_free;
        m_free = p;
    }

  private:
    void Grow();

    RdmaPacket* m_free = nullptr;
    std::vector<std::unique_ptr<RdmaPacket[]>> m_chunks;
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
