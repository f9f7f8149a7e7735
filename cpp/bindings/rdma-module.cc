// Runs one RDMA fabric simulation from bulk arrays and returns bulk arrays.
// Python never sees a packet or an event: it hands over the topology, flows
// and attribute strings, and gets numpy columns back.
#include "rdma-network.h"
#ifdef NS3WH_HAVE_WORKLOAD
#include "workload-executor.h"
#endif
#include "wormhole-simulator-impl.h"

#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <stdexcept>

namespace py = pybind11;
using namespace ns3;

namespace ns3wh
{
namespace
{

template <typename T>
std::vector<T>
ToVector(const py::array_t<T, py::array::c_style | py::array::forcecast>& a)
{
    return std::vector<T>(a.data(), a.data() + a.size());
}

/// Length of a numpy array as a size_t (pybind11 reports a signed size).
size_t
Len(const py::array& a)
{
    return static_cast<size_t>(a.size());
}

template <typename Rec, typename F>
auto
Column(const std::vector<Rec>& recs, F field)
{
    using V = std::decay_t<decltype(field(recs.front()))>;
    py::array_t<V> out(recs.size());
    auto* p = out.mutable_data();
    for (size_t i = 0; i < recs.size(); ++i)
    {
        p[i] = field(recs[i]);
    }
    return out;
}

void
ApplyDefaults(const std::map<std::string, std::string>& attributes)
{
    // ns-3's own default event queue unless the caller names another (a
    // global value: an earlier run's choice would otherwise persist).
    GlobalValue::Bind("SchedulerType", StringValue("ns3::MapScheduler"));
    for (const auto& [name, value] : attributes)
    {
        if (name == "SchedulerType")
        {
            if (!GlobalValue::BindFailSafe(name, StringValue(value)))
            {
                throw std::invalid_argument("unknown scheduler " + value);
            }
            continue;
        }
        if (!Config::SetDefaultFailSafe(name, StringValue(value)))
        {
            throw std::invalid_argument("unknown or invalid ns-3 attribute " + name + " = " + value);
        }
    }
}

/// Polls Python (Ctrl-C, progress display) every `interval` of simulated
/// time while flows remain, from an event that belongs to no link, so it
/// never moves with a fast-forwarded partition.
struct Watchdog
{
    Ptr<RdmaNetwork> net;
    Time interval;
    py::object progress;
    std::function<bool()> busy;
    bool interrupted = false;
    std::chrono::steady_clock::time_point lastCall = std::chrono::steady_clock::now();

    void Tick()
    {
        {
            py::gil_scoped_acquire gil;
            if (PyErr_CheckSignals() != 0)
            {
                interrupted = true;
                PyErr_Clear();
                Simulator::Stop();
                return;
            }
            auto now = std::chrono::steady_clock::now();
            if (!progress.is_none() && now - lastCall > std::chrono::milliseconds(200))
            {
                lastCall = now;
                try
                {
                    progress(Simulator::Now().GetNanoSeconds(), net->GetNCompletedFlows(), net->GetNFlows());
                }
                catch (py::error_already_set&)
                {
                    // A callback that raises stops the run as Ctrl-C does (the Python
                    // layer kept the exception and reports it); unwinding through
                    // Simulator::Run would leave ns-3 mid-event.
                    interrupted = true;
                    Simulator::Stop();
                    return;
                }
            }
        }
        if (busy())
        {
            Simulator::Schedule(interval, &Watchdog::Tick, this);
        }
    }
};

using U8 = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;
using U32 = py::array_t<uint32_t, py::array::c_style | py::array::forcecast>;
using U64 = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>;
using I64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
using F64 = py::array_t<double, py::array::c_style | py::array::forcecast>;

/// Topology columns as they come from ns3wormhole.topology.Topology.
struct TopologyArrays
{
    uint32_t numNodes;
    U8 isSwitch;
    U32 linkA, linkB;
    U64 rateBps, delayNs;
    F64 errorRate; ///< per link, probability a frame is lost
    U64 eventTimeNs; ///< link failures/recoveries: when,
    U32 eventLink;   ///< which link,
    U8 eventUp;      ///< 1 = back up, 0 = down
};

/// Selects the kernel, applies attribute defaults and builds the fabric.
Ptr<RdmaNetwork>
BuildNetwork(const TopologyArrays& topo, const std::map<std::string, std::string>& attributes, const std::string& kernel)
{
    const size_t nLinks = Len(topo.linkA);
    if (Len(topo.linkB) != nLinks || Len(topo.rateBps) != nLinks || Len(topo.delayNs) != nLinks ||
        Len(topo.errorRate) != nLinks)
    {
        throw std::invalid_argument("link arrays differ in length");
    }
    Simulator::Destroy(); // whatever an earlier run in this process left
    const std::string impl = kernel == "baseline" ? "ns3::DefaultSimulatorImpl"
                             : kernel == "wormhole"
                                 ? "ns3::WormholeSimulatorImpl"
                                 : throw std::invalid_argument("kernel must be baseline or wormhole, not " + kernel);
    GlobalValue::Bind("SimulatorImplementationType", StringValue(impl));
    ApplyDefaults(attributes);
    Ptr<RdmaNetwork> net = CreateObject<RdmaNetwork>();
    std::vector<RdmaLinkSpec> links(nLinks);
    for (size_t i = 0; i < nLinks; ++i)
    {
        links[i] = {topo.linkA.data()[i],
                    topo.linkB.data()[i],
                    topo.rateBps.data()[i],
                    topo.delayNs.data()[i],
                    topo.errorRate.data()[i]};
    }
    net->Build(topo.numNodes, ToVector(topo.isSwitch), links);
    const size_t nEvents = Len(topo.eventTimeNs);
    if (Len(topo.eventLink) != nEvents || Len(topo.eventUp) != nEvents)
    {
        throw std::invalid_argument("link event arrays differ in length");
    }
    for (size_t i = 0; i < nEvents; ++i)
    {
        net->ScheduleLinkEvent(topo.eventLink.data()[i], topo.eventTimeNs.data()[i], topo.eventUp.data()[i] != 0);
    }
    return net;
}

/// Runs to the end (or stop time, or Ctrl-C) with the watchdog polling
/// Python; returns run-level facts.
py::dict
RunSimulation(Ptr<RdmaNetwork> net,
              std::function<bool()> busy,
              int64_t stopNs,
              py::object progress,
              int64_t watchdogIntervalNs,
              std::chrono::steady_clock::time_point setupStart)
{
    Watchdog watchdog{net, NanoSeconds(watchdogIntervalNs), progress, std::move(busy)};
    if (watchdogIntervalNs > 0)
    {
        Simulator::Schedule(NanoSeconds(watchdogIntervalNs), &Watchdog::Tick, &watchdog);
    }
    if (stopNs > 0)
    {
        Simulator::Stop(NanoSeconds(stopNs));
    }
    auto t1 = std::chrono::steady_clock::now();
    {
        py::gil_scoped_release release;
        Simulator::Run();
    }
    auto t2 = std::chrono::steady_clock::now();
    py::dict out;
    out["wall_s"] = std::chrono::duration<double>(t2 - t1).count();
    out["setup_s"] = std::chrono::duration<double>(t1 - setupStart).count();
    out["events"] = Simulator::GetEventCount();
    out["sim_time_ns"] = Simulator::Now().GetNanoSeconds();
    out["interrupted"] = watchdog.interrupted;
    return out;
}

/// Copies the network's results into `out` as numpy columns.
void
CollectNetwork(Ptr<RdmaNetwork> net, py::dict& out)
{
    const auto flows = net->GetFlowRecords();
    py::dict f;
    f["id"] = Column(flows, [](const RdmaFlowRecord& r) { return r.id; });
    f["src"] = Column(flows, [](const RdmaFlowRecord& r) { return r.src; });
    f["dst"] = Column(flows, [](const RdmaFlowRecord& r) { return r.dst; });
    f["pg"] = Column(flows, [](const RdmaFlowRecord& r) { return r.pg; });
    f["bytes"] = Column(flows, [](const RdmaFlowRecord& r) { return r.bytes; });
    f["start_ns"] = Column(flows, [](const RdmaFlowRecord& r) { return r.startNs; });
    f["finish_ns"] = Column(flows, [](const RdmaFlowRecord& r) { return r.finishNs; });
    f["fct_ns"] = Column(flows, [](const RdmaFlowRecord& r) { return r.fctNs; });
    f["ideal_fct_ns"] = Column(flows, [](const RdmaFlowRecord& r) { return r.idealFctNs; });
    f["data_packets"] = Column(flows, [](const RdmaFlowRecord& r) { return r.dataPackets; });
    f["retransmitted_packets"] = Column(flows, [](const RdmaFlowRecord& r) { return r.retransmittedPackets; });
    f["timeouts"] = Column(flows, [](const RdmaFlowRecord& r) { return r.timeouts; });
    f["credited_bytes"] = Column(flows, [](const RdmaFlowRecord& r) { return r.creditedBytes; });
    out["flows"] = f;

    const auto pfc = net->GetPfcRecords();
    py::dict p;
    p["node"] = Column(pfc, [](const RdmaPfcRecord& r) { return r.node; });
    p["port"] = Column(pfc, [](const RdmaPfcRecord& r) { return r.port; });
    p["link"] = Column(pfc, [](const RdmaPfcRecord& r) { return r.link; });
    p["pauses"] = Column(pfc, [](const RdmaPfcRecord& r) { return r.pauses; });
    p["resumes"] = Column(pfc, [](const RdmaPfcRecord& r) { return r.resumes; });
    out["pfc"] = p;

    const auto& pe = net->GetPfcEvents();
    py::dict e;
    e["time_ns"] = Column(pe, [](const RdmaPfcEvent& r) { return r.timeNs; });
    e["node"] = Column(pe, [](const RdmaPfcEvent& r) { return r.node; });
    e["port"] = Column(pe, [](const RdmaPfcEvent& r) { return r.port; });
    e["priority"] = Column(pe, [](const RdmaPfcEvent& r) { return r.priority; });
    e["pause"] = Column(pe, [](const RdmaPfcEvent& r) { return static_cast<uint8_t>(r.pause); });
    out["pfc_events"] = e;

    py::list qlen;
    for (const auto& h : net->GetQlenHistograms())
    {
        qlen.append(py::make_tuple(h.timeNs, h.node, h.port, py::cast(h.counts)));
    }
    out["qlen"] = qlen;

    const auto& qs = net->GetQueueSamples();
    py::dict q;
    q["time_ns"] = Column(qs, [](const RdmaQueueSample& r) { return r.timeNs; });
    q["link"] = Column(qs, [](const RdmaQueueSample& r) { return r.link; });
    q["node"] = Column(qs, [](const RdmaQueueSample& r) { return r.node; });
    q["bytes"] = Column(qs, [](const RdmaQueueSample& r) { return r.bytes; });
    out["queues"] = q;

    const auto& rs = net->GetRateSamples();
    py::dict r;
    r["time_ns"] = Column(rs, [](const RdmaRateSample& s) { return s.timeNs; });
    r["flow"] = Column(rs, [](const RdmaRateSample& s) { return s.flow; });
    r["rate_bps"] = Column(rs, [](const RdmaRateSample& s) { return s.rateBps; });
    r["delivered_bytes"] = Column(rs, [](const RdmaRateSample& s) { return s.deliveredBytes; });
    out["rates"] = r;

    const RdmaCounters& c = net->GetCounters();
    py::dict counters;
    counters["data_packets"] = c.dataPackets;
    counters["retransmitted_packets"] = c.retransmittedPackets;
    counters["acks"] = c.acks;
    counters["nacks"] = c.nacks;
    counters["cnps"] = c.cnps;
    counters["timeouts"] = c.timeouts;
    counters["drops"] = c.drops;
    counters["link_losses"] = c.linkLosses;
    counters["unroutable"] = c.unroutable;
    counters["ecn_marks"] = c.ecnMarks;
    counters["pauses"] = c.pauses;
    counters["resumes"] = c.resumes;
    out["counters"] = counters;

    // Paths, for the kernel's partition view and for reports.
    py::list paths;
    for (const auto& rec : flows)
    {
        std::vector<uint32_t> path;
        try
        {
            path = net->GetFlowPath(rec.id);
        }
        catch (const std::exception&)
        {
            // never started (the run stopped first): no path yet
        }
        paths.append(py::cast(path));
    }
    out["stalled"] = Column(net->GetStalledFlows(), [](uint32_t id) { return id; });
    out["paths"] = paths;

}

/// Releases the network and the simulator so the next run starts clean.
void
Finish(Ptr<RdmaNetwork>& net)
{
    net->Dispose();
    net = nullptr;
    Simulator::Destroy();
}

py::dict
RunRdma(TopologyArrays topo,
        U32 flowId,
        U32 flowSrc,
        U32 flowDst,
        U32 flowPg,
        U64 flowBytes,
        U64 flowStartNs,
        const std::map<std::string, std::string>& attributes,
        const std::string& kernel,
        int64_t stopNs,
        py::object progress,
        int64_t watchdogIntervalNs)
{
    const size_t nFlows = Len(flowId);
    if (Len(flowSrc) != nFlows || Len(flowDst) != nFlows || Len(flowPg) != nFlows ||
        Len(flowBytes) != nFlows || Len(flowStartNs) != nFlows)
    {
        throw std::invalid_argument("flow arrays differ in length");
    }
    auto t0 = std::chrono::steady_clock::now();
    Ptr<RdmaNetwork> net = BuildNetwork(topo, attributes, kernel);
    for (size_t i = 0; i < nFlows; ++i)
    {
        net->AddFlow({flowId.data()[i], flowSrc.data()[i], flowDst.data()[i], flowPg.data()[i],
                      flowBytes.data()[i], flowStartNs.data()[i]});
    }
    RdmaNetwork* raw = PeekPointer(net);
    py::dict out = RunSimulation(
        net, [raw]() { return raw->GetNCompletedFlows() < raw->GetNFlows(); }, stopNs, progress,
        watchdogIntervalNs, t0);
    out["kernel"] = kernel;
    CollectNetwork(net, out);
    Finish(net);
    return out;
}

#ifdef NS3WH_HAVE_WORKLOAD
py::dict
RunWorkload(TopologyArrays topo,
            U8 op,
            U8 kind,
            U32 src,
            U32 dst,
            U64 bytes,
            U64 durationNs,
            U32 iteration,
            I64 collective,
            I64 succPtr,
            U32 succIdx,
            const std::map<std::string, std::string>& attributes,
            const std::string& kernel,
            int64_t stopNs,
            py::object progress,
            int64_t watchdogIntervalNs)
{
    const size_t n = Len(op);
    for (size_t len : {Len(kind), Len(src), Len(dst), Len(bytes), Len(durationNs), Len(iteration),
                       Len(collective)})
    {
        if (len != n)
        {
            throw std::invalid_argument("workload DAG columns differ in length");
        }
    }
    if (Len(succPtr) != n + 1 || static_cast<size_t>(succPtr.data()[n]) != Len(succIdx))
    {
        throw std::invalid_argument("workload DAG successor arrays are inconsistent");
    }
    auto t0 = std::chrono::steady_clock::now();
    Ptr<RdmaNetwork> net = BuildNetwork(topo, attributes, kernel);
    Ptr<WorkloadExecutor> exec = CreateObject<WorkloadExecutor>();
    WorkloadDagView view;
    view.numNodes = static_cast<uint32_t>(n);
    view.op = op.data();
    view.kind = kind.data();
    view.src = src.data();
    view.dst = dst.data();
    view.bytes = bytes.data();
    view.durationNs = durationNs.data();
    view.iteration = iteration.data();
    view.collective = collective.data();
    view.succPtr = succPtr.data();
    view.succIdx = succIdx.data();
    exec->SetDag(view);
    RdmaNetwork* rawNet = PeekPointer(net);
    WorkloadExecutor* rawExec = PeekPointer(exec);
    exec->SetStartFlowHook(
        [rawNet](uint32_t s, uint32_t d, uint64_t b, uint32_t node) { return rawNet->StartFlowNow(s, d, b, 3, node); });
    exec->SetRouteLinksHook([rawNet](uint32_t s, uint32_t d) { return rawNet->RouteLinks(s, d); });
    net->SetFlowCompleteCallback([rawExec](uint32_t id) { rawExec->OnFlowComplete(id); });
    exec->Start();
    py::dict out = RunSimulation(
        net, [rawExec]() { return !rawExec->IsFinished(); }, stopNs, progress, watchdogIntervalNs, t0);
    out["kernel"] = kernel;
    CollectNetwork(net, out);
    py::dict w;
    w["node_start_ns"] = py::array_t<int64_t>(exec->GetNodeStartNs().size(), exec->GetNodeStartNs().data());
    w["node_end_ns"] = py::array_t<int64_t>(exec->GetNodeEndNs().size(), exec->GetNodeEndNs().data());
    w["node_flow_id"] = py::array_t<uint32_t>(exec->GetNodeFlowId().size(), exec->GetNodeFlowId().data());
    w["iteration_start_ns"] =
        py::array_t<int64_t>(exec->GetIterationStartNs().size(), exec->GetIterationStartNs().data());
    w["iteration_end_ns"] = py::array_t<int64_t>(exec->GetIterationEndNs().size(), exec->GetIterationEndNs().data());
    w["collective_start_ns"] =
        py::array_t<int64_t>(exec->GetCollectiveStartNs().size(), exec->GetCollectiveStartNs().data());
    w["collective_end_ns"] =
        py::array_t<int64_t>(exec->GetCollectiveEndNs().size(), exec->GetCollectiveEndNs().data());
    w["finished"] = exec->IsFinished();
    w["foreseen"] = exec->GetNumForeseen();
    out["workload"] = w;
    net->SetFlowCompleteCallback(nullptr);
    exec->Dispose();
    Finish(net);
    return out;
}
#endif

} // namespace

void
BindRdma(py::module_& m)
{
    py::class_<TopologyArrays>(m, "TopologyArrays")
        .def(py::init<uint32_t, U8, U32, U32, U64, U64, F64, U64, U32, U8>(),
             py::arg("num_nodes"), py::arg("is_switch"), py::arg("link_a"), py::arg("link_b"),
             py::arg("rate_bps"), py::arg("delay_ns"), py::arg("error_rate"),
             py::arg("event_time_ns"), py::arg("event_link"), py::arg("event_up"));
    m.def("run_rdma",
          &RunRdma,
          py::arg("topology"),
          py::arg("flow_id"),
          py::arg("flow_src"),
          py::arg("flow_dst"),
          py::arg("flow_pg"),
          py::arg("flow_bytes"),
          py::arg("flow_start_ns"),
          py::arg("attributes"),
          py::arg("kernel") = "baseline",
          py::arg("stop_ns") = 0,
          py::arg("progress") = py::none(),
          py::arg("watchdog_interval_ns") = 100000,
          "Build the fabric, run the flows under the chosen kernel, return results as numpy columns.");
#ifdef NS3WH_HAVE_WORKLOAD
    m.def("run_workload",
          &RunWorkload,
          py::arg("topology"),
          py::arg("op"),
          py::arg("kind"),
          py::arg("src"),
          py::arg("dst"),
          py::arg("bytes"),
          py::arg("duration_ns"),
          py::arg("iteration"),
          py::arg("collective"),
          py::arg("succ_ptr"),
          py::arg("succ_idx"),
          py::arg("attributes"),
          py::arg("kernel") = "baseline",
          py::arg("stop_ns") = 0,
          py::arg("progress") = py::none(),
          py::arg("watchdog_interval_ns") = 100000,
          "Build the fabric, execute a training-step DAG on it, return network and workload results.");
#endif
}

} // namespace ns3wh
