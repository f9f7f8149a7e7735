// ns3wormhole._core: the thin pybind11 layer. Bulk data crosses as numpy
// arrays; nothing here runs per packet or per event.
#include "bottleneck.h"
#include "memo-store.h"
#include "partition-tracker.h"
#include "rate-window.h"
#include "wormhole-simulator-impl.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cmath>

namespace py = pybind11;

namespace ns3wh
{
void BindRdma(py::module_& m);
}

namespace
{
/// A log2 histogram up to its last non-empty bin.
std::vector<uint64_t>
WithoutTrailingZeros(const std::array<uint64_t, 32>& bins)
{
    size_t n = bins.size();
    while (n > 0 && bins[n - 1] == 0)
    {
        --n;
    }
    return {bins.begin(), bins.begin() + n};
}

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
    d["memo_time_saved_ns"] = s.memoTimeSavedNs;
    d["memo_events_saved"] = s.memoEventsSaved;
    d["memo_backlog_bytes"] = s.memoBacklogBytes;
    d["skips_to_known_start"] = s.skipsToKnownStart;
    d["memo_keys_deferred"] = s.memoKeysDeferred;
    d["memo_hits_replayed"] = s.memoHitsReplayed;
    d["memo_hits_resumed"] = s.memoHitsResumed;
    d["memo_hits_deferred"] = s.memoHitsDeferred;
    d["memo_waived_bytes"] = s.memoWaivedBytes;
    d["memo_hits_deferred_lapsed"] = s.memoHitsDeferredLapsed;
    d["events_replayed"] = s.eventsReplayed;
    // Why not faster (docs/why-not.md): unskipped patterns by reason, memo
    // misses by reason, partition sizes.
    py::dict noSkip;
    for (size_t i = 0; i < ns3::kNoSkipReasons; ++i)
    {
        noSkip[ns3::NoSkipName(static_cast<ns3::NoSkip>(i))] =
            py::dict(py::arg("partitions") = s.noSkipPartitions[i], py::arg("time_ns") = s.noSkipTimeNs[i]);
    }
    d["no_skip"] = noSkip;
    if (std::isfinite(s.neverSteadySpread))
    {
        d["never_steady_closest"] = py::dict(py::arg("spread_over_theta") = s.neverSteadySpread,
                                             py::arg("mismatch_over_theta") = s.neverSteadyMismatch);
    }
    else
    {
        d["never_steady_closest"] = py::none();
    }
    py::dict misses;
    for (size_t i = 0; i < ns3::kMemoMissReasons; ++i)
    {
        misses[ns3::MemoMissName(static_cast<ns3::MemoMiss>(i))] = s.memoMissReasons[i];
    }
    d["memo_miss_reasons"] = misses;
    d["partitions_created"] = s.partitionsCreated;
    d["partitions_max_alive"] = s.partitionsMaxAlive;
    d["partition_largest_flows"] = s.partitionLargestFlows;
    d["partition_largest_links"] = s.partitionLargestLinks;
    d["partition_flows_log2"] = WithoutTrailingZeros(s.partitionFlowsLog2);
    d["coupled_largest_flows"] = s.coupledLargestFlows;
    d["coupled_flows_log2"] = WithoutTrailingZeros(s.coupledFlowsLog2);
    d["transit_judgements"] = s.transitJudgements;
    d["coupling_judgements"] = s.couplingJudgements;
    d["link_kind_changes"] = s.linkKindChanges;
    d["transit_frames_filed"] = s.transitFramesFiled;
    d["transit_congested"] = s.transitCongested;
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
    m.def(
        "flow_time_skipped",
        []() { return ns3::WormholeSimulatorImpl::LastFlowSkipped(); },
        "(flow id, simulated ns skipped) for every flow the most recent kernel tracked.");
    m.def(
        "flow_credited",
        []() { return ns3::WormholeSimulatorImpl::LastFlowCredited(); },
        "(flow id, payload bytes the model took as credit) for every flow the most recent kernel credited.");

    using ns3::wormhole::MemoStore;
    auto load = [](const std::vector<py::bytes>& blobs) {
        std::pair<size_t, size_t> rejected{0, 0};
        for (const auto& b : blobs)
        {
            switch (MemoStore::Global().Load(std::string(b)))
            {
            case MemoStore::LoadResult::kMalformed:
                ++rejected.first;
                break;
            case MemoStore::LoadResult::kImplausible:
                ++rejected.second;
                break;
            case MemoStore::LoadResult::kAdded:
                break;
            }
        }
        return rejected;
    };
    m.def(
        "memo_load",
        [load](const std::vector<py::bytes>& blobs) {
            const auto [malformed, implausible] = load(blobs);
            return malformed + implausible;
        },
        "Add serialized memo records to the process-wide store; returns how many were not added.");
    m.def("memo_load_checked",
          load,
          "Add serialized memo records to the process-wide store; returns (malformed, implausible): "
          "how many were not records, and how many had numbers no fabric produces.");
    m.def(
        "memo_take_new",
        []() {
            py::list out;
            for (auto& blob : MemoStore::Global().TakeNew())
            {
                out.append(py::bytes(blob));
            }
            return out;
        },
        "Records inserted since the last call, serialized.");
    using ns3::wormhole::FlowConflictGraph;
    auto toFcg = [](const std::vector<uint64_t>& labels, const std::vector<std::array<uint32_t, 3>>& edges) {
        FlowConflictGraph g;
        g.vertexLabel = labels;
        for (const auto& e : edges)
        {
            if (e[0] >= labels.size() || e[1] >= labels.size())
            {
                throw std::invalid_argument("edge names a vertex that does not exist");
            }
            g.edges.push_back({e[0], e[1], e[2]});
        }
        return g;
    };
    m.def(
        "fcg_hash",
        [toFcg](const std::vector<uint64_t>& labels, const std::vector<std::array<uint32_t, 3>>& edges) {
            return toFcg(labels, edges).Hash();
        },
        "Structural hash of a flow conflict graph (vertex labels, (a, b, weight) edges).");
    m.def(
        "fcg_match",
        [toFcg](const std::vector<uint64_t>& l1,
                const std::vector<std::array<uint32_t, 3>>& e1,
                const std::vector<uint64_t>& l2,
                const std::vector<std::array<uint32_t, 3>>& e2) -> py::object {
            std::vector<uint32_t> map;
            if (toFcg(l1, e1).IsomorphicTo(toFcg(l2, e2), map))
            {
                return py::cast(map);
            }
            return py::none();
        },
        "Vertex mapping of graph 1 onto an isomorphic graph 2 (labels and weights equal), or None.");
    m.def(
        "memo_store_matches",
        [toFcg](const std::vector<std::pair<std::vector<uint64_t>, std::vector<std::array<uint32_t, 3>>>>& records,
                const std::vector<std::pair<std::vector<uint64_t>, std::vector<std::array<uint32_t, 3>>>>& queries) {
            // One store of these graphs, asked each query in turn (repeated
            // listings are answered from what the store found before).
            MemoStore store;
            for (size_t i = 0; i < records.size(); ++i)
            {
                ns3::wormhole::MemoRecord r;
                r.fcg = toFcg(records[i].first, records[i].second);
                r.occurrence = static_cast<uint32_t>(i);
                const size_t n = r.fcg.vertexLabel.size(); // a record has a value per flow
                r.bytes.assign(n, 0.0);
                r.rate.assign(n, 0.0);
                for (size_t v = 0; v < n; ++v)
                {
                    r.cc.Append(0);
                }
                store.Insert(std::move(r));
            }
            std::vector<std::vector<std::pair<uint32_t, std::vector<uint32_t>>>> out;
            for (const auto& [labels, edges] : queries)
            {
                auto& found = out.emplace_back();
                store.Visit(toFcg(labels, edges),
                            [&found](const ns3::wormhole::MemoRecord& r, const std::vector<uint32_t>& map) {
                                found.emplace_back(r.occurrence, map);
                                return false;
                            });
            }
            return out;
        },
        "For each query graph, (record index, mapping) of every record graph a store finds isomorphic.");
    m.def("memo_clear", []() { MemoStore::Global().Clear(); }, "Forget every memo record in this process.");
    m.def("memo_size", []() { return MemoStore::Global().Size(); }, "Records in the process-wide store.");

    // The kernel's building blocks, exposed so their logic is tested directly.
    auto loadsOf = [](const std::vector<double>& capacity, const std::vector<std::vector<uint32_t>>& flowsOn) {
        if (capacity.size() != flowsOn.size())
        {
            throw py::value_error("capacity and flows_on must have one entry per link");
        }
        ns3::wormhole::LinkLoads loads;
        for (size_t l = 0; l < capacity.size(); ++l)
        {
            loads.AddLink(capacity[l]);
            for (uint32_t f : flowsOn[l])
            {
                loads.AddFlow(f);
            }
        }
        return loads;
    };
    auto checkFlows = [](const std::vector<std::vector<uint32_t>>& flowsOn, size_t n) {
        for (const auto& on : flowsOn)
        {
            for (uint32_t f : on)
            {
                if (f >= n)
                {
                    throw py::value_error("flow " + std::to_string(f) + " has no line rate");
                }
            }
        }
    };
    // Functions of the flows over links: flows_on[l] lists the flows crossing link l.
    auto defOverLinks = [&m, loadsOf, checkFlows](const char* name, auto fn, const char* doc) {
        m.def(
            name,
            [loadsOf, checkFlows, fn](const std::vector<double>& capacity,
                                      const std::vector<std::vector<uint32_t>>& flowsOn,
                                      const std::vector<double>& lineRate) {
                checkFlows(flowsOn, lineRate.size());
                return fn(loadsOf(capacity, flowsOn), lineRate);
            },
            py::arg("capacity"),
            py::arg("flows_on"),
            py::arg("line_rate"),
            doc);
    };
    defOverLinks("fair_rates", &ns3::wormhole::FairRates, "Max-min fair rates of the flows.");
    defOverLinks("can_be_bottleneck",
                 &ns3::wormhole::CanBeBottleneck,
                 "Per link: whether its flows fill it at their max-min fair rates.");
    using ns3::wormhole::PartitionTracker;
    py::class_<PartitionTracker>(m, "PartitionTracker")
        .def(py::init<>())
        .def("add_flow", &PartitionTracker::AddFlow, py::arg("flow"), py::arg("links"))
        .def("remove_flow", &PartitionTracker::RemoveFlow, py::arg("flow"))
        .def("partition_of_flow", &PartitionTracker::PartitionOfFlow)
        .def("partition_of_link", &PartitionTracker::PartitionOfLink)
        .def("flows", [](const PartitionTracker& t, uint32_t id) { return t.Get(id).flows; })
        .def("links", [](const PartitionTracker& t, uint32_t id) { return t.Get(id).links; })
        .def("alive", [](const PartitionTracker& t, uint32_t id) { return t.Get(id).alive; })
        .def_property_readonly("alive_count", &PartitionTracker::AliveCount)
        .def_property_readonly("counters", [](const PartitionTracker& t) {
            const auto& c = t.GetCounters();
            return py::dict(py::arg("formed") = c.formed, py::arg("merged") = c.merged,
                            py::arg("split") = c.split);
        });
    using ns3::wormhole::RateWindow;
    py::class_<RateWindow>(m, "RateWindow")
        .def(py::init<uint32_t>(), py::arg("capacity"))
        .def("push", &RateWindow::Push, py::arg("time_ns"), py::arg("rate"), py::arg("acked") = 0, py::arg("inflight") = 0.0, py::arg("mismatch") = 0.0)
        .def("clear", &RateWindow::Clear)
        .def_property_readonly("full", &RateWindow::Full)
        .def_property_readonly("size", &RateWindow::Size)
        .def_property_readonly("mean", &RateWindow::Mean)
        .def_property_readonly("spread", &RateWindow::Spread);
#ifdef NS3WH_HAVE_RDMA
    ns3wh::BindRdma(m);
#endif
}
