// ns3::WorkloadExecutor: see workload-executor.h.
#include "workload-executor.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

// Events the executor schedules belong to no link. Flow completions arrive inside
// the transport model's events, which carry a link owner tag for the Wormhole
// kernel; compute delays scheduled from there must not inherit it.
#if __has_include("flow-seam.h")
#include "flow-seam.h"
#define NS3WH_NO_OWNER_SCOPE ::ns3::wormhole::OwnerScope ns3whNoOwner(::ns3::wormhole::kNoOwner)
#else
#define NS3WH_NO_OWNER_SCOPE ((void)0)
#endif

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadExecutor");
NS_OBJECT_ENSURE_REGISTERED(WorkloadExecutor);

namespace
{
constexpr uint32_t kNoFlow = std::numeric_limits<uint32_t>::max();

std::string
NodeMsg(uint32_t node, const std::string& what)
{
    return "WorkloadExecutor: node " + std::to_string(node) + ": " + what;
}
} // namespace

TypeId
WorkloadExecutor::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::WorkloadExecutor")
            .SetParent<Object>()
            .SetGroupName("Wormhole")
            .AddConstructor<WorkloadExecutor>()
            .AddAttribute("StartTime",
                          "Delay from Start() until the DAG's source nodes become ready.",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&WorkloadExecutor::m_startTime),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("FlowLaunchDelay",
                          "Delay between a flow node becoming ready and the flow being started on "
                          "the transport model (a send latency, as SimAI's AS_SEND_LAT).",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&WorkloadExecutor::m_flowLaunchDelay),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("StopWhenDone",
                          "Call Simulator::Stop() when the last node has finished (the transport "
                          "model may keep periodic events alive).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&WorkloadExecutor::m_stopWhenDone),
                          MakeBooleanChecker())
            .AddTraceSource("NodeStarted",
                            "A DAG node started (its predecessors have all finished).",
                            MakeTraceSourceAccessor(&WorkloadExecutor::m_nodeStarted),
                            "ns3::WorkloadExecutor::NodeTracedCallback")
            .AddTraceSource("NodeFinished",
                            "A DAG node finished.",
                            MakeTraceSourceAccessor(&WorkloadExecutor::m_nodeFinished),
                            "ns3::WorkloadExecutor::NodeTracedCallback")
            .AddTraceSource("IterationFinished",
                            "The last node of an iteration finished (iteration, time).",
                            MakeTraceSourceAccessor(&WorkloadExecutor::m_iterationFinished),
                            "ns3::WorkloadExecutor::IterationTracedCallback")
            .AddTraceSource("Finished",
                            "Every node of the DAG has finished (time).",
                            MakeTraceSourceAccessor(&WorkloadExecutor::m_finishedTrace),
                            "ns3::WorkloadExecutor::FinishedTracedCallback");
    return tid;
}

WorkloadExecutor::WorkloadExecutor()
{
    NS_LOG_FUNCTION(this);
}

WorkloadExecutor::~WorkloadExecutor()
{
    NS_LOG_FUNCTION(this);
}

void
WorkloadExecutor::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_startFlow = nullptr;
    m_flowNode.clear();
    Object::DoDispose();
}

void
WorkloadExecutor::SetDag(const WorkloadDagView& d)
{
    NS_LOG_FUNCTION(this << d.numNodes);
    if (m_started && !IsFinished())
    {
        throw std::logic_error("WorkloadExecutor::SetDag: the executor is running");
    }
    const uint32_t n = d.numNodes;
    if (n > 0 && (!d.op || !d.src || !d.dst || !d.bytes || !d.durationNs || !d.succPtr))
    {
        throw std::invalid_argument("WorkloadExecutor::SetDag: op, src, dst, bytes, durationNs and succPtr are required");
    }
    if (n > 0 && d.succPtr[0] != 0)
    {
        throw std::invalid_argument("WorkloadExecutor::SetDag: succPtr[0] must be 0");
    }
    const int64_t numEdges = n > 0 ? d.succPtr[n] : 0;
    if (numEdges > 0 && !d.succIdx)
    {
        throw std::invalid_argument("WorkloadExecutor::SetDag: succIdx is required");
    }

    std::vector<uint32_t> inDeg(n, 0);
    for (uint32_t i = 0; i < n; ++i)
    {
        if (d.succPtr[i + 1] < d.succPtr[i])
        {
            throw std::invalid_argument(NodeMsg(i, "succPtr decreases"));
        }
        if (d.op[i] > OP_FLOW)
        {
            throw std::invalid_argument(NodeMsg(i, "op must be 0 (delay) or 1 (flow)"));
        }
        if (d.op[i] == OP_FLOW && d.bytes[i] == 0)
        {
            throw std::invalid_argument(NodeMsg(i, "flow of 0 bytes"));
        }
        if (d.op[i] == OP_FLOW && d.src[i] == d.dst[i])
        {
            throw std::invalid_argument(NodeMsg(i, "flow with src == dst (" + std::to_string(d.src[i]) + ")"));
        }
        for (int64_t e = d.succPtr[i]; e < d.succPtr[i + 1]; ++e)
        {
            const uint32_t s = d.succIdx[e];
            if (s >= n)
            {
                throw std::invalid_argument(NodeMsg(i, "successor " + std::to_string(s) + " out of range"));
            }
            if (inDeg[s] == std::numeric_limits<uint32_t>::max())
            {
                throw std::invalid_argument(NodeMsg(s, "too many predecessors"));
            }
            ++inDeg[s];
        }
    }
    // Kahn's algorithm: every node must be reachable from the sources (no cycle).
    {
        std::vector<uint32_t> deg = inDeg;
        std::vector<uint32_t> stack;
        for (uint32_t i = 0; i < n; ++i)
        {
            if (deg[i] == 0)
            {
                stack.push_back(i);
            }
        }
        uint32_t seen = 0;
        while (!stack.empty())
        {
            const uint32_t v = stack.back();
            stack.pop_back();
            ++seen;
            for (int64_t e = d.succPtr[v]; e < d.succPtr[v + 1]; ++e)
            {
                if (--deg[d.succIdx[e]] == 0)
                {
                    stack.push_back(d.succIdx[e]);
                }
            }
        }
        if (seen != n)
        {
            uint32_t bad = 0;
            while (bad < n && deg[bad] == 0)
            {
                ++bad;
            }
            throw std::invalid_argument(NodeMsg(bad, "is on a dependency cycle"));
        }
    }

    m_n = n;
    m_op.assign(d.op, d.op + n);
    if (d.kind)
    {
        m_kind.assign(d.kind, d.kind + n);
    }
    else
    {
        m_kind.assign(n, 0);
    }
    m_src.assign(d.src, d.src + n);
    m_dst.assign(d.dst, d.dst + n);
    m_bytes.assign(d.bytes, d.bytes + n);
    m_durationNs.assign(d.durationNs, d.durationNs + n);
    if (d.iteration)
    {
        m_iteration.assign(d.iteration, d.iteration + n);
    }
    else
    {
        m_iteration.assign(n, 0);
    }
    if (d.collective)
    {
        m_collective.assign(d.collective, d.collective + n);
    }
    else
    {
        m_collective.assign(n, -1);
    }
    m_succPtr.assign(d.succPtr, d.succPtr + (n > 0 ? n + 1 : 0));
    if (numEdges > 0)
    {
        m_succIdx.assign(d.succIdx, d.succIdx + numEdges);
    }
    else
    {
        m_succIdx.clear();
    }
    m_inDegree = std::move(inDeg);

    uint32_t iters = 0;
    int64_t colls = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        iters = std::max(iters, m_iteration[i] + 1);
        colls = std::max(colls, m_collective[i] + 1);
    }
    m_iterStartNs.assign(iters, -1);
    m_iterEndNs.assign(iters, -1);
    m_collStartNs.assign(static_cast<size_t>(colls), -1);
    m_collEndNs.assign(static_cast<size_t>(colls), -1);
    m_iterRemaining.assign(iters, 0);
    for (uint32_t i = 0; i < n; ++i)
    {
        ++m_iterRemaining[m_iteration[i]];
    }
    m_startNs.assign(n, -1);
    m_endNs.assign(n, -1);
    m_flowId.assign(n, kNoFlow);
    m_pending = m_inDegree;
    m_uncertain = m_inDegree;
    m_latestDelayEndNs.assign(n, -1);
    m_foreseen = 0;
    m_ready.clear();
    m_flowNode.clear();
    m_earlyDone.clear();
    m_finished = 0;
    m_flowsStarted = 0;
    m_started = false;
}

void
WorkloadExecutor::SetStartFlowHook(StartFlowHook hook)
{
    m_startFlow = std::move(hook);
}

void
WorkloadExecutor::SetRouteLinksHook(RouteLinksHook hook)
{
    m_routeLinks = std::move(hook);
}

uint32_t
WorkloadExecutor::GetNumForeseen() const
{
    return m_foreseen;
}

void
WorkloadExecutor::Start()
{
    NS_LOG_FUNCTION(this);
    if (m_started)
    {
        throw std::logic_error("WorkloadExecutor::Start: already started (call SetDag again to rerun)");
    }
    if (!m_startFlow && std::find(m_op.begin(), m_op.end(), OP_FLOW) != m_op.end())
    {
        throw std::logic_error("WorkloadExecutor::Start: the DAG has flows but no start-flow hook is set");
    }
    m_started = true;
    NS3WH_NO_OWNER_SCOPE;
    Simulator::Schedule(m_startTime, &WorkloadExecutor::DoStart, this);
}

void
WorkloadExecutor::DoStart()
{
    NS_LOG_FUNCTION(this);
    if (m_n == 0)
    {
        m_finishedTrace(Simulator::Now());
        if (m_stopWhenDone)
        {
            Simulator::Stop();
        }
        return;
    }
    for (uint32_t i = 0; i < m_n; ++i)
    {
        if (m_pending[i] == 0)
        {
            m_ready.push_back(i);
        }
    }
    Drain();
}

void
WorkloadExecutor::MakeReady(uint32_t node)
{
    m_ready.push_back(node);
}

void
WorkloadExecutor::Drain()
{
    if (m_draining)
    {
        return; // the outer Drain picks up what was queued
    }
    // First in, first out: nodes made ready together start in the order they were
    // released (sources in id order), which keeps runs deterministic and readable.
    m_draining = true;
    for (size_t head = 0; head < m_ready.size(); ++head)
    {
        Launch(m_ready[head]);
    }
    m_ready.clear();
    m_draining = false;
}

void
WorkloadExecutor::Launch(uint32_t node)
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    NS_LOG_LOGIC("start node " << node << " op " << unsigned(m_op[node]) << " at " << now);
    m_startNs[node] = now;
    const uint32_t it = m_iteration[node];
    if (m_iterStartNs[it] < 0)
    {
        m_iterStartNs[it] = now;
    }
    const int64_t c = m_collective[node];
    if (c >= 0 && m_collStartNs[c] < 0)
    {
        m_collStartNs[c] = now;
    }
    m_nodeStarted(node);

    NS3WH_NO_OWNER_SCOPE;
    if (m_op[node] == OP_FLOW)
    {
        if (m_flowLaunchDelay.IsStrictlyPositive())
        {
            Simulator::Schedule(m_flowLaunchDelay, &WorkloadExecutor::LaunchFlow, this, node);
        }
        else
        {
            LaunchFlow(node);
        }
    }
    else
    {
        // Its end is known from now on: successors waiting only on it (and
        // on other such delays) have a known start.
        Resolve(node, now + static_cast<int64_t>(m_durationNs[node]));
        if (m_durationNs[node] == 0)
        {
            Finish(node);
        }
        else
        {
            Simulator::Schedule(NanoSeconds(m_durationNs[node]), &WorkloadExecutor::DelayDone, this, node);
        }
    }
}

void
WorkloadExecutor::LaunchFlow(uint32_t node)
{
    m_inHook = true;
    m_earlyDone.clear();
    uint32_t id;
    {
        NS3WH_NO_OWNER_SCOPE;
        id = m_startFlow(m_src[node], m_dst[node], m_bytes[node], node);
    }
    m_inHook = false;
    NS_LOG_LOGIC("node " << node << " -> flow " << id << " " << m_src[node] << "->" << m_dst[node] << " "
                         << m_bytes[node] << " B");
    ++m_flowsStarted;
    m_flowId[node] = id;
    if (std::find(m_earlyDone.begin(), m_earlyDone.end(), id) != m_earlyDone.end())
    {
        m_earlyDone.clear();
        Finish(node); // the model completed it synchronously
        Drain();
        return;
    }
    if (!m_flowNode.emplace(id, node).second)
    {
        NS_FATAL_ERROR("WorkloadExecutor: the transport model returned flow id " << id
                                                                                << " twice (nodes "
                                                                                << m_flowNode[id] << " and "
                                                                                << node << ")");
    }
}

void
WorkloadExecutor::OnFlowComplete(uint32_t flowId)
{
    auto it = m_flowNode.find(flowId);
    if (it == m_flowNode.end())
    {
        if (m_inHook)
        {
            m_earlyDone.push_back(flowId);
        }
        else
        {
            NS_LOG_DEBUG("flow " << flowId << " completed but was not started by this executor");
        }
        return;
    }
    const uint32_t node = it->second;
    m_flowNode.erase(it);
    Finish(node);
    Drain();
}

void
WorkloadExecutor::DelayDone(uint32_t node)
{
    Finish(node);
    Drain();
}

void
WorkloadExecutor::Finish(uint32_t node)
{
    const Time now = Simulator::Now();
    const int64_t ns = now.GetNanoSeconds();
    NS_LOG_LOGIC("end node " << node << " at " << ns);
    NS_ASSERT_MSG(m_endNs[node] < 0, "node " << node << " finished twice");
    m_endNs[node] = ns;
    ++m_finished;
    const int64_t c = m_collective[node];
    if (c >= 0)
    {
        m_collEndNs[c] = std::max(m_collEndNs[c], ns);
    }
    m_nodeFinished(node);
    for (int64_t e = m_succPtr[node]; e < m_succPtr[node + 1]; ++e)
    {
        const uint32_t s = m_succIdx[e];
        NS_ASSERT(m_pending[s] > 0);
        if (--m_pending[s] == 0)
        {
            MakeReady(s);
        }
    }
    if (m_op[node] == OP_FLOW)
    {
        Resolve(node, -1); // a delay resolved its successors when it started
    }
    const uint32_t it = m_iteration[node];
    m_iterEndNs[it] = std::max(m_iterEndNs[it], ns);
    if (--m_iterRemaining[it] == 0)
    {
        NS_LOG_INFO("iteration " << it << " finished at " << now.As(Time::US));
        m_iterationFinished(it, now);
    }
    if (m_finished == m_n)
    {
        NS_LOG_INFO("workload finished at " << now.As(Time::US) << ", " << m_flowsStarted << " flows");
        m_finishedTrace(now);
        if (m_stopWhenDone)
        {
            Simulator::Stop();
        }
    }
}

void
WorkloadExecutor::Resolve(uint32_t node, int64_t endNs)
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    for (int64_t e = m_succPtr[node]; e < m_succPtr[node + 1]; ++e)
    {
        const uint32_t s = m_succIdx[e];
        NS_ASSERT(m_uncertain[s] > 0);
        m_latestDelayEndNs[s] = std::max(m_latestDelayEndNs[s], endNs);
        if (--m_uncertain[s] > 0 || m_op[s] != OP_FLOW)
        {
            continue;
        }
        // Every predecessor has finished or is a delay that ends at a known
        // time: the flow starts when the last of them ends (it cannot start
        // before now), after the launch delay. A start now needs no notice:
        // it happens in this very event.
        const int64_t at = std::max(m_latestDelayEndNs[s], now) + m_flowLaunchDelay.GetNanoSeconds();
        if (at <= now || !m_routeLinks)
        {
            continue;
        }
#if __has_include("flow-seam.h")
        if (wormhole::FlowSeam::listener)
        {
            // An interrupt, not a flow: the model has not chosen the flow's id.
            wormhole::FlowSeam::Interrupt(static_cast<uint64_t>(at), m_routeLinks(m_src[s], m_dst[s]));
            ++m_foreseen;
        }
#endif
    }
}

bool
WorkloadExecutor::IsStarted() const
{
    return m_started;
}

bool
WorkloadExecutor::IsFinished() const
{
    return m_started && m_finished == m_n;
}

uint32_t
WorkloadExecutor::GetNumNodes() const
{
    return m_n;
}

uint32_t
WorkloadExecutor::GetNumFinished() const
{
    return m_finished;
}

uint32_t
WorkloadExecutor::GetNumFlowsStarted() const
{
    return m_flowsStarted;
}

uint32_t
WorkloadExecutor::GetNumIterations() const
{
    return static_cast<uint32_t>(m_iterStartNs.size());
}

uint32_t
WorkloadExecutor::GetNumCollectives() const
{
    return static_cast<uint32_t>(m_collStartNs.size());
}

const std::vector<int64_t>&
WorkloadExecutor::GetNodeStartNs() const
{
    return m_startNs;
}

const std::vector<int64_t>&
WorkloadExecutor::GetNodeEndNs() const
{
    return m_endNs;
}

const std::vector<uint32_t>&
WorkloadExecutor::GetNodeFlowId() const
{
    return m_flowId;
}

const std::vector<int64_t>&
WorkloadExecutor::GetIterationStartNs() const
{
    return m_iterStartNs;
}

const std::vector<int64_t>&
WorkloadExecutor::GetIterationEndNs() const
{
    return m_iterEndNs;
}

const std::vector<int64_t>&
WorkloadExecutor::GetCollectiveStartNs() const
{
    return m_collStartNs;
}

const std::vector<int64_t>&
WorkloadExecutor::GetCollectiveEndNs() const
{
    return m_collEndNs;
}

} // namespace ns3
