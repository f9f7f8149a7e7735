// Port-level network partitions (Wormhole §4.1, Alg. 1-2), maintained
// incrementally: flows that share a link (transitively) form one partition.
// A new flow that bridges partitions merges them; a departure that
// disconnects a partition splits it. Knows nothing of RDMA or of events.
#ifndef NS3_WORMHOLE_PARTITION_TRACKER_H
#define NS3_WORMHOLE_PARTITION_TRACKER_H

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ns3
{
namespace wormhole
{

class PartitionTracker
{
  public:
    static constexpr uint32_t kNone = 0xffffffffu;

    struct Partition
    {
        uint32_t id = kNone;
        bool alive = false;
        std::vector<uint32_t> flows;
        std::vector<uint32_t> links;
    };

    struct Counters
    {
        uint64_t formed = 0; ///< partitions created for a flow that overlapped none
        uint64_t merged = 0; ///< merge operations (a flow bridged >= 2 partitions)
        uint64_t split = 0;  ///< split operations (a departure disconnected one)
    };

    /// Alive partitions the given links belong to (no duplicates).
    std::vector<uint32_t> PartitionsOfLinks(const std::vector<uint32_t>& links) const;

    /// Adds a flow; returns the id of the partition it is now in (a new id
    /// when partitions were merged: the merged ones are dead afterwards).
    uint32_t AddFlow(uint32_t flow, std::vector<uint32_t> links);

    /// Removes a flow; returns the alive partitions its former partition
    /// became: none (it was the last flow), the same id, or new ids (split).
    std::vector<uint32_t> RemoveFlow(uint32_t flow);

    bool HasFlow(uint32_t flow) const;
    uint32_t PartitionOfFlow(uint32_t flow) const;
    uint32_t PartitionOfLink(uint32_t link) const;
    const Partition& Get(uint32_t id) const;
    const std::vector<uint32_t>& LinksOfFlow(uint32_t flow) const;
    uint32_t AliveCount() const;
    const Counters& GetCounters() const;

  private:
    uint32_t NewPartition();
    void Assign(uint32_t partition, uint32_t flow);

    std::vector<Partition> m_partitions; ///< indexed by id; ids are never reused
    std::vector<uint32_t> m_linkPartition;
    std::vector<uint32_t> m_linkFlowCount;
    std::unordered_map<uint32_t, std::vector<uint32_t>> m_flowLinks;
    std::unordered_map<uint32_t, uint32_t> m_flowPartition;
    std::vector<uint32_t> m_firstFlowOnLink; ///< RemoveFlow's scratch: kNone outside a call
    uint32_t m_alive = 0;
    Counters m_counters;
};

} // namespace wormhole
} // namespace ns3

#endif
