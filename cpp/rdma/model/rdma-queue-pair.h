// One flow = one queue pair. Sender state lives at the source NIC, receiver
// state at the destination NIC; both are kept in one record, which frames name
// by its dense index.
#ifndef RDMA_QUEUE_PAIR_H
#define RDMA_QUEUE_PAIR_H

#include "ns3/event-id.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace ns3
{

class RdmaNic;
class RdmaCongestionControl;
struct RdmaCounters;

struct RdmaQueuePair
{
    // Identity.
    uint32_t index = 0; ///< dense internal index (RdmaPacket::flow)
    uint32_t id = 0;    ///< user-visible flow id
    /// What ECMP hashes the flow by (RdmaPacket::ecmpKey): its identity in the
    /// scenario (its place in a flow list, its node in a workload DAG), not
    /// the order flows happened to start in, which moves with event timing
    /// and so would give the two kernels different paths for the same flow.
    uint32_t ecmpKey = 0;
    uint32_t src = 0;
    uint32_t dst = 0;
    uint32_t pg = 3;
    uint64_t bytes = 0; ///< flow size as requested
    uint64_t size = 0;  ///< sequence number that ends the flow: bytes minus kernel credit

    // Path, fixed at start (ECMP is per flow).
    std::vector<uint32_t> links; ///< ordered link ids from src to dst
    double idealFctNs = 0;
    RdmaNic* nic = nullptr; ///< source NIC
    uint32_t port = 0;      ///< source NIC port
    double lineRate = 0;    ///< rate of that port, bit/s
    int64_t baseRtt = 0;    ///< time steps: a full frame out and its ACK back, no queueing
    RdmaCounters* counters = nullptr;

    // Sender.
    uint64_t sndNxt = 0;  ///< next byte to send
    uint64_t sndUna = 0;  ///< first unacknowledged byte
    uint64_t maxSent = 0; ///< end of the highest byte ever sent
    double rate = 0;      ///< pacing rate, bit/s (set by the congestion control)
    double nextAvail = 0; ///< time step (fractional) before which no frame leaves
    uint32_t lastWire = 0;
    Ptr<RdmaCongestionControl> cc;
    double window = 0; ///< bytes in flight allowed (sndNxt - sndUna); 0: no window
    /// Telemetry each DATA frame carries: 0 none, 1 send time, 2 send time
    /// and per-hop INT; and the bytes it adds on the wire (DATA and ACK).
    uint8_t telemetry = 0;
    uint32_t telemetryBytes = 0;
    /// Skipped time the Wormhole kernel credited the flow: send times are
    /// stamped on the flow's own clock (now - clockShift), so an RTT measured
    /// across a skip counts simulated time only.
    int64_t clockShift = 0;
    EventId rto;
    bool rtoPending = false;
    int64_t lastProgress = 0; ///< time step of the last advance of sndUna

    // Receiver.
    uint64_t rcvNxt = 0;       ///< next byte expected
    uint32_t unacked = 0;      ///< in-order frames since the last ACK
    int64_t nackUntil = 0;     ///< NACKs for lastNack are suppressed until then
    uint64_t lastNack = std::numeric_limits<uint64_t>::max();

    // Results.
    int64_t startStep = 0;
    int64_t finishStep = -1;
    uint64_t dataPackets = 0;
    uint64_t retransmitted = 0;
    uint64_t timeouts = 0;
    uint64_t creditedBytes = 0; ///< bytes the Wormhole kernel delivered for the flow

    bool IsFinished() const
    {
        return finishStep >= 0;
    }
};

} // namespace ns3

#endif
