// Builds and runs a RoCEv2 fabric: nodes, host NICs, switches, links, BFS/ECMP
// routes and flows; collects results as plain structs (bulk arrays for the
// bindings). See docs/rdma-model-contract.md.
#ifndef RDMA_NETWORK_H
#define RDMA_NETWORK_H

#include "rdma-congestion-control.h"
#include "rdma-device.h"
#include "rdma-nic.h"
#include "rdma-qlen-monitor.h"
#include "rdma-queue-pair.h"
#include "rdma-switch.h"

#include "flow-seam.h"

#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

/// Undirected full-duplex link; its index in the list is its link id.
struct RdmaLinkSpec
{
    uint32_t a;
    uint32_t b;
    uint64_t rateBps;
    uint64_t delayNs;
    double errorRate = 0; ///< probability that a frame sent either way is lost
};

struct RdmaFlowSpec
{
    uint32_t id;
    uint32_t src;
    uint32_t dst;
    uint32_t pg;
    uint64_t bytes;
    uint64_t startNs;
};

struct RdmaFlowRecord
{
    uint32_t id;
    uint32_t src;
    uint32_t dst;
    uint32_t pg;
    uint64_t bytes;
    int64_t startNs;   ///< actual start, or the requested one if not started yet
    int64_t finishNs;  ///< last byte acknowledged; -1 if not finished
    int64_t fctNs;     ///< finish - start; -1 if not finished
    double idealFctNs; ///< alone on its path (0 if not started yet)
    uint64_t dataPackets;
    uint64_t retransmittedPackets;
    uint64_t timeouts;
    uint64_t creditedBytes;
};

/// PFC frames sent by one switch port.
struct RdmaPfcRecord
{
    uint32_t node;
    uint32_t port;
    uint32_t link;
    uint64_t pauses;
    uint64_t resumes;
};

/// A PFC frame arrived at `node`'s `port` (HPCC's PFC_OUTPUT_FILE line): the
/// sender of that port was paused or resumed for `priority`.
struct RdmaPfcEvent
{
    int64_t timeNs;
    uint32_t node;
    uint32_t port;
    uint32_t priority;
    bool pause;
};

/// Bytes queued at one switch egress port (ports with empty queues are not recorded).
struct RdmaQueueSample
{
    int64_t timeNs;
    uint32_t link;
    uint32_t node;
    uint64_t bytes;
};

struct RdmaRateSample
{
    int64_t timeNs;
    uint32_t flow;
    double rateBps;          ///< congestion-control rate
    uint64_t deliveredBytes; ///< payload acknowledged so far, kernel credit included
};

class RdmaNetwork : public Object, public wormhole::FlowCreditor
{
  public:
    static TypeId GetTypeId();

    /// Signature of the "FlowComplete" trace.
    typedef void (*FlowCompleteTracedCallback)(uint32_t flowId);
    /// Signature of the "Pfc" trace.
    typedef void (*PfcTracedCallback)(uint32_t node,
                                      uint32_t port,
                                      uint32_t link,
                                      uint32_t priority,
                                      bool pause);

    RdmaNetwork();
    ~RdmaNetwork() override;

    /// Attributes of the devices Build() creates (before Build). Unknown
    /// names or bad values throw std::invalid_argument.
    void SetNicAttribute(const std::string& name, const AttributeValue& value);
    void SetSwitchAttribute(const std::string& name, const AttributeValue& value);
    void SetMmuAttribute(const std::string& name, const AttributeValue& value);
    /// Congestion control of every flow (default ns3::DcqcnRateControl).
    void SetCongestionControl(const std::string& typeId);
    void SetCongestionControlAttribute(const std::string& name, const AttributeValue& value);
    /// By short name (dcqcn, hpcc, timely, dctcp) or TypeId name: the
    /// CongestionControl attribute.
    void SetCongestionControlName(std::string name);
    std::string GetCongestionControlName() const;

    /// Create nodes, devices, ports and routes. Throws std::invalid_argument
    /// naming the offending link.
    void Build(uint32_t numNodes,
               const std::vector<uint8_t>& isSwitch,
               const std::vector<RdmaLinkSpec>& links);
    /// Schedule a flow to start at startNs. Throws std::invalid_argument
    /// naming the flow's index (the order of AddFlow/StartFlowNow calls).
    void AddFlow(const RdmaFlowSpec& flow);
    /// Start a flow now (for a workload executor); @return its id. `ecmpKey`
    /// names the flow in the scenario (a workload's DAG node) for ECMP: the
    /// same flow then takes the same path under either kernel, whatever
    /// order flows start in (RdmaQueuePair::ecmpKey).
    uint32_t StartFlowNow(uint32_t src, uint32_t dst, uint64_t bytes, uint32_t pg, uint32_t ecmpKey);
    /// Take link `linkId` down (up = false) or bring it back at `atNs`:
    /// routes are recomputed then and flows move to their new paths; flows
    /// left without one stall. Call after Build. Throws std::invalid_argument
    /// naming the event's index (the order of calls).
    void ScheduleLinkEvent(uint32_t linkId, uint64_t atNs, bool up);
    /// Every link a flow from host src to host dst may use on the current
    /// routes (any ECMP path, both directions), as the Wormhole kernel names
    /// links: what a foreseen start of such a flow is announced on.
    std::vector<uint32_t> RouteLinks(uint32_t src, uint32_t dst) const;
    /// Ids of unfinished flows that had no path at the last link event.
    std::vector<uint32_t> GetStalledFlows() const;
    /// Plain hook for C++ callers, called with the flow id on completion.
    void SetFlowCompleteCallback(std::function<void(uint32_t)> cb);

    /// Wormhole kernel: the flow delivered `bytes` in skipped time dtNs.
    int64_t CreditFlow(uint32_t flowId, int64_t bytes, int64_t dtNs) override;
    /// Wormhole kernel: the link's pending events moved by dtNs.
    void ShiftLink(uint32_t linkId, int64_t dtNs) override;
    /// Wormhole kernel: line and payload capacity of the link.
    void GetLinkCapacity(uint32_t linkId, double& lineBps, double& payloadBps) const override;
    double GetQueueDrainBps(uint32_t linkId) const override;
    /// Wormhole kernel: propagation delay and frame loss rate of the link.
    void GetLinkWire(uint32_t linkId, uint64_t& delayNs, double& lossRate) const override;
    /// Wormhole kernel: the period of the flow's frames at line rate.
    bool GetLineRatePeriod(uint32_t flowId, uint64_t& periodNs, uint64_t& payloadBytes) const override;
    /// Wormhole kernel: the flow's congestion-control state, saved and restored.
    std::vector<double> SaveFlowState(uint32_t flowId) const override;
    void RestoreFlowState(uint32_t flowId, std::span<const double> state) override;
    void GetPathBacklog(uint32_t flowId, std::vector<std::pair<uint64_t, uint64_t>>& hops) const override;
    uint64_t GetPortBacklog(uint64_t portKey) const override;
    void AddBacklog(uint64_t portKey,
                    const std::vector<std::pair<uint32_t, uint64_t>>& shares,
                    int64_t fromNs) override;
    void DropBacklog(uint64_t portKey) override;
    void WaiveBytes(uint64_t portKey, uint64_t bytes) override;
    void SetInFlightEcnExempt(const std::vector<uint32_t>& flowIds, bool exempt) override;
    uint64_t GetFlowInFlight(uint32_t flowId) const override;
    bool SharesDrawnAt(uint32_t flowId, uint64_t portKey) const override;
    uint64_t GetFramePayload(uint32_t flowId) const override;
    double GetAckWireRatio(uint32_t flowId) const override;

    // Results (valid during and after Simulator::Run()).
    std::vector<RdmaFlowRecord> GetFlowRecords() const;
    std::vector<RdmaPfcRecord> GetPfcRecords() const;
    /// Every PFC frame received, in time order.
    const std::vector<RdmaPfcEvent>& GetPfcEvents() const;
    /// Queue-length histograms (empty unless QlenMonitorEnd is set).
    const std::vector<RdmaQlenHistogram>& GetQlenHistograms() const;
    const std::vector<RdmaQueueSample>& GetQueueSamples() const;
    const std::vector<RdmaRateSample>& GetRateSamples() const;
    const RdmaCounters& GetCounters() const;
    uint32_t GetNFlows() const;
    uint32_t GetNCompletedFlows() const;
    /// Ordered link ids of a started flow's path.
    std::vector<uint32_t> GetFlowPath(uint32_t flowId) const;
    Ptr<RdmaCongestionControl> GetFlowCongestionControl(uint32_t flowId) const;

    uint32_t GetNNodes() const;
    Ptr<Node> GetNode(uint32_t i) const;
    Ptr<RdmaNic> GetNic(uint32_t i) const;       ///< null for a switch
    Ptr<RdmaSwitch> GetSwitch(uint32_t i) const; ///< null for a host

  protected:
    void DoDispose() override;

  private:
    /// The switch port a key of GetPathBacklog names: (node + 1) << 32 | port.
    struct SwitchPort
    {
        uint32_t node;
        uint32_t port;
    };
    /// Decodes a port key; asserts that it names a switch's port.
    SwitchPort SwitchPortOf(uint64_t portKey) const;
    void ComputeRoutes();
    /// Port p of device u is on a shortest path to host d (hop counts `dist`
    /// to d) over links that are up.
    bool IsRoutePort(uint32_t u, uint32_t p, uint32_t d, const std::vector<uint32_t>& dist) const;
    void SetLinkState(uint32_t linkId, bool up);
    /// After a routing change: every started, unfinished flow takes its new path.
    void Reroute();
    /// The flow's data links on the current routes; false if it has none.
    bool TryDataLinks(uint32_t index, std::vector<uint32_t>& links) const;
    /// Validate and register a flow starting at time step `startStep`; @return its index.
    uint32_t AddQueuePair(const RdmaFlowSpec& spec, int64_t startStep, uint32_t ecmpKey);
    void StartFlowEvent(uint32_t index);
    /// Links of the flow's data path, in order.
    std::vector<uint32_t> DataLinks(uint32_t index) const;
    /// What the kernel is told a flow uses: its data path, then any link
    /// only its acknowledgements take.
    std::vector<uint32_t> KernelLinks(uint32_t index) const;
    /// Calls visit(node, egress port) at each hop from `from` to `to` on the
    /// route a flow with ECMP key `ecmpKey` takes (RdmaQueuePair::ecmpKey).
    void ForEachHop(uint32_t from,
                    uint32_t to,
                    uint32_t ecmpKey,
                    const std::function<void(uint32_t, uint32_t)>& visit) const;
    void StartFlow(uint32_t index);
    double IdealFctNs(const RdmaQueuePair& qp) const;
    /// Time steps for one full frame out and its ACK back on an idle path.
    int64_t BaseRttSteps(const RdmaQueuePair& qp) const;
    void FlowDone(RdmaQueuePair& qp);
    void ForwardPfc(uint32_t node, uint32_t port, uint32_t priority, bool pause);
    void RecordPfcReceived(uint32_t node, uint32_t port, uint32_t priority, bool pause);
    const RdmaQueuePair& FlowById(uint32_t flowId) const;
    void StartSamplers();
    void SampleQueues();
    void SampleRates();
    bool SamplersShouldRun() const;

    // Attributes.
    uint64_t m_seed;
    uint64_t m_intCounterSeed; ///< 0: switch byte counters start at 0
    std::string m_ccName = "dcqcn";
    Time m_queueSampleInterval;
    Time m_rateSampleInterval;
    Time m_qlenStart;
    Time m_qlenEnd;
    Time m_qlenInterval;
    Time m_qlenDump;

    ObjectFactory m_nicFactory;
    ObjectFactory m_switchFactory;
    ObjectFactory m_mmuFactory;
    ObjectFactory m_ccFactory;
    Ptr<RdmaCongestionControl> m_ccPrototype;

    bool m_built = false;
    std::vector<RdmaLinkSpec> m_links;
    /// Per link: (node, port) of its end at a, then at b.
    std::vector<std::array<std::pair<uint32_t, uint32_t>, 2>> m_linkEnds;
    std::vector<uint8_t> m_isSwitch;
    std::vector<uint8_t> m_linkDown; ///< per link: failed now
    uint32_t m_linkEvents = 0;
    /// Per host: hops from each node to it on the current routes (BFS of
    /// ComputeRoutes; UINT32_MAX unreached); empty for a switch.
    std::vector<std::vector<uint32_t>> m_hopsTo;
    std::vector<uint32_t> m_stalled; ///< flow indexes without a path
    std::vector<Ptr<Node>> m_nodes;
    std::vector<Ptr<RdmaDevice>> m_devices;
    std::vector<Ptr<RdmaNic>> m_nics;
    std::vector<Ptr<RdmaSwitch>> m_switches;

    RdmaPacketPool m_pool;
    RdmaCounters m_counters;
    std::vector<uint64_t> m_ecnExemptBelow; ///< per flow index (SetInFlightEcnExempt)
    std::vector<uint32_t> m_flowIds;        ///< per flow index, its id (RdmaDevice::SetFlowIds)
    RdmaNic::FlowTable m_flows;
    std::unordered_map<uint32_t, uint32_t> m_flowIndex; ///< flow id -> index
    uint32_t m_nextId = 0;
    uint32_t m_pendingStarts = 0;
    uint32_t m_activeFlows = 0;
    uint32_t m_completedFlows = 0;

    bool m_queueSamplerRunning = false;
    bool m_rateSamplerRunning = false;
    std::vector<RdmaQueueSample> m_queueSamples;
    std::vector<RdmaRateSample> m_rateSamples;
    std::vector<RdmaPfcEvent> m_pfcEvents;
    RdmaQlenMonitor m_qlen;

    std::function<void(uint32_t)> m_flowCompleteHook;
    TracedCallback<uint32_t> m_flowCompleteTrace;
    TracedCallback<uint32_t, uint32_t, uint32_t, uint32_t, bool> m_pfcTrace;
};

} // namespace ns3

#endif
