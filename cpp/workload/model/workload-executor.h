// ns3::WorkloadExecutor: runs a training-step DAG (compute delays and flows with
// dependencies, built by ns3wormhole.workload.build_dag) inside an ns-3 simulation.
//
// A node starts when all its predecessors have finished (in-degree counters).
// A delay node (op 0) finishes durationNs after it starts (Simulator::Schedule);
// a flow node (op 1) is handed to the transport model through the start-flow
// hook, which returns the model's flow id, and finishes when the model calls
// OnFlowComplete(flowId). The executor knows nothing of the model: the lead
// wires, e.g. for RdmaNetwork,
//
//   exec->SetStartFlowHook([net](uint32_t s, uint32_t d, uint64_t b, uint32_t node) {
//       return net->StartFlowNow(s, d, b, 3, node); });
//   net->FlowComplete hook -> exec->OnFlowComplete(flowId);
//
// Foresight: a flow node whose still-pending predecessors are all running delays
// starts at a time the executor knows (the latest of their ends, plus the launch
// delay). When a node's start becomes certain, the executor announces it to the
// Wormhole kernel as a known start on the links the route hook names, so a
// memoized transient or a skip stops there instead of being cut short
// (docs/memo.md, "Foreseen joins"). Without a route hook, or under another
// kernel, nothing is announced.
//
// Recorded: per-node start/end, per-iteration start/end (first node start, last
// node end), per-collective start/end. No Python in the loop.
#ifndef NS3_WORKLOAD_EXECUTOR_H
#define NS3_WORKLOAD_EXECUTOR_H

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace ns3
{

/// Non-owning view of the DAG arrays (numpy columns cross the bindings as these).
/// Node ids must be 0..numNodes-1; successors in CSR form: the successors of node
/// i are succIdx[succPtr[i] .. succPtr[i+1]).
struct WorkloadDagView
{
    uint32_t numNodes = 0;
    const uint8_t* op = nullptr;          ///< 0 = delay, 1 = flow
    const uint8_t* kind = nullptr;        ///< tag (compute, dp_allreduce, ...); may be null
    const uint32_t* src = nullptr;        ///< GPU (host) id; sender of a flow
    const uint32_t* dst = nullptr;        ///< receiver of a flow
    const uint64_t* bytes = nullptr;      ///< flow payload bytes
    const uint64_t* durationNs = nullptr; ///< delay length
    const uint32_t* iteration = nullptr;  ///< may be null (all 0)
    const int64_t* collective = nullptr;  ///< -1 = none; may be null (all -1)
    const int64_t* succPtr = nullptr;     ///< numNodes + 1 entries
    const uint32_t* succIdx = nullptr;    ///< succPtr[numNodes] entries
};

class WorkloadExecutor : public Object
{
  public:
    enum NodeOp : uint8_t
    {
        OP_DELAY = 0,
        OP_FLOW = 1,
    };

    /// Starts a flow of `bytes` from `src` to `dst` now; returns the flow id the
    /// model will later pass to OnFlowComplete. `node` is the flow's DAG node:
    /// what names the flow in the workload whatever order flows start in
    /// (a model hashes ECMP by it, so both kernels give a flow one path).
    using StartFlowHook = std::function<uint32_t(uint32_t src, uint32_t dst, uint64_t bytes, uint32_t node)>;
    /// Every link (as the Wormhole kernel names them) a flow from `src` to
    /// `dst` may use, whatever path the model gives it; more is safe.
    using RouteLinksHook = std::function<std::vector<uint32_t>(uint32_t src, uint32_t dst)>;

    typedef void (*NodeTracedCallback)(uint32_t node);
    typedef void (*IterationTracedCallback)(uint32_t iteration, Time end);
    typedef void (*FinishedTracedCallback)(Time end);

    static TypeId GetTypeId();
    WorkloadExecutor();
    ~WorkloadExecutor() override;

    /// Copies the DAG. Throws std::invalid_argument (naming the node) for bad sizes,
    /// successor ids out of range, cycles, flows with 0 bytes or src == dst.
    /// Not allowed while running.
    void SetDag(const WorkloadDagView& dag);
    void SetStartFlowHook(StartFlowHook hook);
    void SetRouteLinksHook(RouteLinksHook hook);
    /// Foreseen flow starts announced to the kernel so far (one per flow node at most).
    uint32_t GetNumForeseen() const;

    /// Starts at the current simulation time plus the StartTime attribute: every node
    /// with no predecessor becomes ready (an empty DAG finishes at once). Throws
    /// std::logic_error if already started (SetDag again to rerun) or if the DAG has
    /// flows and no start-flow hook is set.
    void Start();

    /// The transport model's completion hook. Ids the executor did not start are
    /// ignored (logged), so one model can carry other traffic too.
    void OnFlowComplete(uint32_t flowId);

    bool IsStarted() const;
    bool IsFinished() const;
    uint32_t GetNumNodes() const;
    uint32_t GetNumFinished() const;
    uint32_t GetNumFlowsStarted() const;
    uint32_t GetNumIterations() const;
    uint32_t GetNumCollectives() const;

    /// Per-node times in ns; -1 for nodes that have not started / finished.
    const std::vector<int64_t>& GetNodeStartNs() const;
    const std::vector<int64_t>& GetNodeEndNs() const;
    /// Flow id the model gave each flow node (UINT32_MAX if not a started flow).
    const std::vector<uint32_t>& GetNodeFlowId() const;
    /// Per iteration: first node start, last node end (ns; -1 if none yet).
    const std::vector<int64_t>& GetIterationStartNs() const;
    const std::vector<int64_t>& GetIterationEndNs() const;
    /// Per collective id: first node start, last node end (ns; -1 if none yet).
    const std::vector<int64_t>& GetCollectiveStartNs() const;
    const std::vector<int64_t>& GetCollectiveEndNs() const;

  protected:
    void DoDispose() override;

  private:
    void DoStart();
    void MakeReady(uint32_t node);
    void Drain();
    void Launch(uint32_t node);
    void LaunchFlow(uint32_t node);
    void DelayDone(uint32_t node);
    void Finish(uint32_t node);
    /// Predecessor `node` of each successor no longer makes its start
    /// uncertain (a delay started, ending at `endNs`; or any node finished
    /// that had not been counted): announce the successors that became certain.
    void Resolve(uint32_t node, int64_t endNs);

    // DAG (copied)
    uint32_t m_n = 0;
    std::vector<uint8_t> m_op;
    std::vector<uint8_t> m_kind;
    std::vector<uint32_t> m_src, m_dst;
    std::vector<uint64_t> m_bytes, m_durationNs;
    std::vector<uint32_t> m_iteration;
    std::vector<int64_t> m_collective;
    std::vector<int64_t> m_succPtr;
    std::vector<uint32_t> m_succIdx;
    std::vector<uint32_t> m_inDegree; ///< from the DAG, kept for restarts

    // run state
    std::vector<uint32_t> m_pending; ///< unfinished predecessors per node
    std::vector<uint32_t> m_ready;   ///< nodes whose predecessors are all done (FIFO)
    bool m_draining = false;
    bool m_started = false;
    uint32_t m_finished = 0;
    uint32_t m_flowsStarted = 0;
    std::unordered_map<uint32_t, uint32_t> m_flowNode; ///< model flow id -> node
    bool m_inHook = false;                              ///< inside the start-flow hook
    std::vector<uint32_t> m_earlyDone;                  ///< ids completed inside the hook
    std::vector<uint32_t> m_iterRemaining;            ///< unfinished nodes per iteration
    /// Per node: predecessors neither finished nor running delays (its start
    /// is certain once this is 0), and the latest end of its delays so far.
    std::vector<uint32_t> m_uncertain;
    std::vector<int64_t> m_latestDelayEndNs;
    uint32_t m_foreseen = 0;

    // results
    std::vector<int64_t> m_startNs, m_endNs;
    std::vector<uint32_t> m_flowId;
    std::vector<int64_t> m_iterStartNs, m_iterEndNs;
    std::vector<int64_t> m_collStartNs, m_collEndNs;

    StartFlowHook m_startFlow;
    RouteLinksHook m_routeLinks;
    Time m_startTime;
    Time m_flowLaunchDelay;
    bool m_stopWhenDone = true;

    TracedCallback<uint32_t> m_nodeStarted;
    TracedCallback<uint32_t> m_nodeFinished;
    TracedCallback<uint32_t, Time> m_iterationFinished;
    TracedCallback<Time> m_finishedTrace;
};

} // namespace ns3

#endif // NS3_WORKLOAD_EXECUTOR_H
