// Memoized contention patterns (Wormhole §4.2-4.4): flow conflict graphs
// (FCGs) and what the transient after such a pattern formed did, so that the
// next time an isomorphic pattern forms the transient can be skipped.
//
// A vertex is a flow, labelled by its quantized rate when the pattern formed
// and by the capacities along its path; an edge joins two flows that share
// links, weighted by how many. Lookup hashes the graph by colour refinement
// (a cheap structural filter) and confirms a candidate with an exact
// weighted isomorphism search (fcg-isomorphism.cc), whose mapping says which
// stored flow each current flow corresponds to.
#ifndef NS3_WORMHOLE_MEMO_STORE_H
#define NS3_WORMHOLE_MEMO_STORE_H

#include "ragged-rows.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{
namespace wormhole
{

struct FlowConflictGraph
{
    std::vector<uint64_t> vertexLabel;
    struct Edge
    {
        uint32_t a;
        uint32_t b;
        uint32_t weight;
        bool operator==(const Edge&) const = default;
    };
    std::vector<Edge> edges;

    /// Structural hash: equal for isomorphic graphs (colour refinement);
    /// computed once (change the graph only before the first call).
    uint64_t Hash() const;
    /// If `other` is isomorphic to this graph (labels and weights equal),
    /// fill map[i] = vertex of `other` matching vertex i of this graph.
    bool IsomorphicTo(const FlowConflictGraph& other, std::vector<uint32_t>& map) const;

  private:
    uint64_t ComputeHash() const;
    mutable uint64_t m_hash = 0;
    mutable bool m_hashed = false;
};

/// The state of a recorded transient at one time since its pattern formed:
/// what a hit cut short by an unforeseen join resumes from (docs/memo.md).
struct MemoCheckpoint
{
    int64_t atNs = 0;                     ///< since the pattern formed
    std::vector<double> bytes;            ///< payload each flow delivered since then
    std::vector<double> inFlight;         ///< bytes each flow had sent but not had acknowledged
    RaggedRows cc;                        ///< congestion-control state of each flow
    RaggedRows backlog;                   ///< bytes queued behind each hop of each flow's path
};

/// Checkpoints through a transient, from its formation (atNs = 0) to its end
/// (atNs = transientNs), spaced by at most transientNs / kCourseSpacing plus
/// one acknowledgement interval.
using MemoCourse = std::vector<MemoCheckpoint>;
constexpr uint32_t kCourseSpacing = 100;

struct MemoRecord
{
    FlowConflictGraph fcg;
    int64_t transientNs = 0;               ///< T_conv
    /// -1: the transient ended with the flows steady. Otherwise it ended
    /// when this vertex's flow completed (before any steady state), having
    /// delivered bytes[completes]: the record applies to a flow of that size.
    int32_t completes = -1;
    uint64_t transientEvents = 0;          ///< events the transient scheduled on its links
    /// How many records of its pattern and kind the store held when it was
    /// recorded: alike outcomes of several occurrences stay distinct records
    /// (and distinct rows of a database, which are unique by content).
    uint32_t occurrence = 0;
    double spread = 0;                     ///< largest steady-window spread at its end
    std::vector<double> bytes;             ///< payload each flow delivered during it
    std::vector<double> rate;              ///< converged rate (bps) of each flow
    RaggedRows cc;                         ///< congestion-control state of each flow at its end
    /// Bytes queued at its end behind each hop of each flow's data path
    /// (a port shared by flows appears under each of them).
    RaggedRows backlog;
    /// The transient's course (shared: a hit keeps it while its skip runs).
    std::shared_ptr<const MemoCourse> course;
};

/// Bytes of isomorphism answers a store keeps (MemoStore::Answer) before it starts over.
constexpr size_t kKnownAnswerBytes = size_t{32} << 20;

class MemoStore
{
  public:
    /// Calls `visit` with each stored record isomorphic to `g` and its
    /// mapping, in insertion order, until it returns true (a pattern may
    /// have a steady record and records ending in completions of flows of
    /// different sizes; each match costs an isomorphism search, so stop early).
    void Visit(const FlowConflictGraph& g,
               const std::function<bool(const MemoRecord&, const std::vector<uint32_t>&)>& visit) const;
    /// Stores a record (kept in memory and noted as new for TakeNew()).
    void Insert(MemoRecord record);
    /// Records inserted since the last call, serialized (for persistence).
    std::vector<std::string> TakeNew();
    enum class LoadResult
    {
        kAdded,
        kMalformed,   ///< not a record of this format
        kImplausible, ///< well-formed, but its numbers are not physical
    };

    /// Adds a serialized record if it parses and its numbers are plausible
    /// (nothing added otherwise).
    LoadResult Load(const std::string& blob);
    /// Every number of the record is finite and physical: non-negative
    /// bytes, rates and queues; rates, durations and events within what any
    /// fabric reaches; and a mean rate over the transient consistent with its
    /// stored rates (see docs/memo.md).
    static bool Plausible(const MemoRecord& r);
    /// The record's course is checkpoints from its formation to its end,
    /// in time order, each number physical (see docs/memo.md).
    static bool PlausibleCourse(const MemoRecord& r,
                                const std::function<bool(double, double)>& physical,
                                double maxRate,
                                double maxBytes);
    void Clear();
    size_t Size() const;

    static std::string Serialize(const MemoRecord& r);
    static bool Deserialize(const std::string& blob, MemoRecord& r);

    /// The store the Wormhole kernel uses: one per process, so records
    /// survive from one run to the next in the same process and can be
    /// loaded from and saved to a database by the Python layer.
    static MemoStore& Global();

  private:
    std::unordered_map<uint64_t, std::vector<MemoRecord>> m_byHash;
    std::vector<std::pair<uint64_t, size_t>> m_new; ///< (hash, place among its records) of each record not yet taken
    size_t m_size = 0;

    /// Isomorphism answers already found. The search is deterministic, so a
    /// pattern listed exactly as an earlier one (the same vertex labels and
    /// the same edge list, in order) gets the same answer against the same
    /// record: on a MoE step 2,716 searches were of 272 such listings.
    struct KnownAnswer
    {
        std::vector<uint64_t> labels;
        std::vector<FlowConflictGraph::Edge> edges;
        size_t record; ///< its place among the records of its hash (they are only appended)
        bool isomorphic;
        std::vector<uint32_t> map;
    };
    mutable std::unordered_map<uint64_t, std::vector<KnownAnswer>> m_known; ///< by listing hash
    mutable size_t m_knownBytes = 0;
    bool Answer(const FlowConflictGraph& g,
                uint64_t listing,
                size_t index,
                const MemoRecord& r,
                std::vector<uint32_t>& map) const;
};

} // namespace wormhole
} // namespace ns3

#endif
