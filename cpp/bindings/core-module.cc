// ns3wormhole._core: the thin pybind11 layer. Bulk data crosses as numpy
// arrays; nothing here runs per packet or per event.
#include "wormhole-simulator-impl.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace ns3wh
{
void BindRdma(py::module_& m);
}

namespace
{
py::dict
StatsToDict(const ns3::WormholeKernelStats& s)
{
    py::dict d;
    d["events_executed"] = s.eventsExecuted;
    d["events_scheduled"] = s.eventsScheduled;
    d["events_cancelled"] = s.eventsCancelled;
    d["events_removed"] = s.eventsRemoved;
    d["fast_forwards"] = s.fastForwards;
    d["skip_backs"] = s.skipBacks;
    d["time_skipped_ns"] = s.timeSkippedNs;
    d["partitions_formed"] = s.partitionsFormed;
    d["partitions_merged"] = s.partitionsMerged;
    d["partitions_split"] = s.partitionsSplit;
    d["memo_hits"] = s.memoHits;
    d["memo_misses"] = s.memoMisses;
    d["memo_inserts"] = s.memoInserts;
    return d;
}
} // namespace

PYBIND11_MODULE(_core, m)
{
    m.doc() = "ns3wormhole native core: the Wormhole kernel's statistics and the RDMA model runner";
    m.attr("__version__") = NS3WH_VERSION;
    m.def(
        "kernel_stats",
        []() { return StatsToDict(ns3::WormholeSimulatorImpl::LastStats()); },
        "Statistics of the most recent ns3::WormholeSimulatorImpl in this process "
        "(live while it runs, kept after Simulator::Destroy()).");
    m.def("kernel_ever_created",
          &ns3::WormholeSimulatorImpl::EverCreated,
          "Whether the Wormhole kernel has been instantiated in this process.");
    m.def("kernel_type_name", []() { return ns3::WormholeSimulatorImpl::GetTypeId().GetName(); });
#ifdef NS3WH_HAVE_RDMA
    ns3wh::BindRdma(m);
#endif
}
