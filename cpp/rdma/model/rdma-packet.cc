#include "rdma-packet.h"

#include <algorithm>

namespace ns3
{

void
RdmaPacketPool::Grow()
{
    // Chunks grow with the pool so a large fabric settles after a few dozen.
    const size_t n = m_chunks.empty() ? 1024 : 1024u << std::min<size_t>(m_chunks.size(), 8);
    m_chunks.push_back(std::make_unique<RdmaPacket[]>(n));
    RdmaPacket* chunk = m_chunks.back().get();
    for (size_t i = 0; i < n; ++i)
    {
        chunk[i].next = (i + 1 < n) ? &chunk[i + 1] : m_free;
    }
    m_free = chunk;
}

} // namespace ns3
