#include "memo-store.h"

#include "colour-refinement.h"
#include "mix64.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

namespace ns3
{
namespace wormhole
{

namespace
{

template <typename T>
void
Put(std::string& out, const T& v)
{
    out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <typename T>
bool
Get(const std::string& in, size_t& pos, T& v)
{
    if (pos + sizeof(T) > in.size())
    {
        return false;
    }
    std::memcpy(&v, in.data() + pos, sizeof(T));
    pos += sizeof(T);
    return true;
}

constexpr uint32_t kMagic = 0x4d485732; // "2WHM"
constexpr uint32_t kVersion = 5; // 5: the transient's course
constexpr uint32_t kMaxCheckpoints = 4 * kCourseSpacing;
constexpr uint32_t kMaxVertices = 1u << 16;

/// A flow's CC state is finite and its queues physical (a record's end, or
/// a checkpoint of its course).
bool
FiniteState(std::span<const double> cc, std::span<const double> backlog, double maxBytes)
{
    return std::all_of(cc.begin(), cc.end(), [](double x) { return std::isfinite(x) && std::abs(x) <= 1e18; }) &&
           std::all_of(backlog.begin(), backlog.end(), [maxBytes](double x) {
               return std::isfinite(x) && x >= 0 && x <= maxBytes;
           });
}

} // namespace

uint64_t
FlowConflictGraph::Hash() const
{
    if (!m_hashed)
    {
        m_hash = ComputeHash();
        m_hashed = true;
    }
    return m_hash;
}

uint64_t
FlowConflictGraph::ComputeHash() const
{
    // Colour refinement (1-WL) for at most 8 rounds, stopping once the
    // colour classes no longer split: the stopping round is itself an
    // isomorphism invariant, so the hash stays one.
    const size_t n = vertexLabel.size();
    const FcgAdjacency adj = BuildAdjacency(*this);
    std::vector<uint64_t> colour(vertexLabel);
    std::vector<uint64_t> scratch;
    size_t classes = 0;
    for (size_t round = 0; round < std::min<size_t>(n, 8); ++round)
    {
        RefineColours(adj, colour, scratch);
        const size_t now = CountColours(colour);
        if (now == classes)
        {
            break;
        }
        classes = now;
    }
    std::sort(colour.begin(), colour.end());
    uint64_t h = Mix64(Mix64(n) ^ edges.size());
    for (uint64_t c : colour)
    {
        h = Mix64(h ^ c);
    }
    return h;
}

void
MemoStore::Visit(const FlowConflictGraph& g,
                 const std::function<bool(const MemoRecord&, const std::vector<uint32_t>&)>& visit) const
{
    auto it = m_byHash.find(g.Hash());
    if (it == m_byHash.end())
    {
        return;
    }
    // The hash of the listing itself (labels and edges in order), for the
    // answers already found; the structural hash above is equal for every
    // listing of the pattern.
    uint64_t listing = Mix64(g.Hash() ^ 0x2545f4914f6cdd1dULL);
    for (uint64_t label : g.vertexLabel)
    {
        listing = Mix64(listing ^ label);
    }
    for (const auto& e : g.edges)
    {
        listing = Mix64(listing ^ (static_cast<uint64_t>(e.a) << 40) ^ (static_cast<uint64_t>(e.b) << 20) ^ e.weight);
    }
    std::vector<uint32_t> map;
    for (size_t k = 0; k < it->second.size(); ++k)
    {
        const MemoRecord& r = it->second[k];
        if (Answer(g, listing, k, r, map) && visit(r, map))
        {
            return;
        }
    }
}

bool
MemoStore::Answer(const FlowConflictGraph& g,
                  uint64_t listing,
                  size_t index,
                  const MemoRecord& r,
                  std::vector<uint32_t>& map) const
{
    for (const KnownAnswer& k : m_known[listing])
    {
        if (k.record == index && k.labels == g.vertexLabel && k.edges == g.edges)
        {
            map = k.map;
            return k.isomorphic;
        }
    }
    const bool isomorphic = g.IsomorphicTo(r.fcg, map);
    // Bounded: a run of ever new patterns (no two listed alike) would
    // otherwise keep one copy of each graph per record it was tested against.
    const size_t bytes = g.vertexLabel.size() * sizeof(uint64_t) + g.edges.size() * sizeof(FlowConflictGraph::Edge) +
                         (isomorphic ? map.size() * sizeof(uint32_t) : 0) + sizeof(KnownAnswer);
    if (m_knownBytes + bytes > kKnownAnswerBytes)
    {
        m_known.clear();
        m_knownBytes = 0;
    }
    m_known[listing].push_back({g.vertexLabel, g.edges, index, isomorphic, isomorphic ? map : std::vector<uint32_t>{}});
    m_knownBytes += bytes;
    return isomorphic;
}

void
MemoStore::Insert(MemoRecord record)
{
    // Serialized only when taken: a run without a database never takes
    // them, and each serialized copy was as large as its record (a MoE
    // step's store then held every record twice, docs/memo.md).
    const uint64_t hash = record.fcg.Hash();
    std::vector<MemoRecord>& records = m_byHash[hash];
    m_new.emplace_back(hash, records.size());
    records.push_back(std::move(record));
    ++m_size;
}

std::vector<std::string>
MemoStore::TakeNew()
{
    std::vector<std::string> out;
    out.reserve(m_new.size());
    for (const auto& [hash, index] : m_new)
    {
        out.push_back(Serialize(m_byHash.at(hash)[index]));
    }
    m_new.clear();
    return out;
}

MemoStore::LoadResult
MemoStore::Load(const std::string& blob)
{
    MemoRecord r;
    if (!Deserialize(blob, r))
    {
        return LoadResult::kMalformed;
    }
    if (!Plausible(r))
    {
        return LoadResult::kImplausible;
    }
    m_byHash[r.fcg.Hash()].push_back(std::move(r));
    ++m_size;
    return LoadResult::kAdded;
}

bool
MemoStore::Plausible(const MemoRecord& r)
{
    // Bounds no fabric reaches: 10 Tb/s per flow, a 1 PB flow, 1000 s of
    // simulated transient, 1e12 events. Inside them a record is checked for
    // consistency, which is what catches a corrupted duration: the bytes a
    // flow delivered over the transient must be what its rates allow.
    constexpr double kMaxRate = 1e13;
    constexpr double kMaxBytes = 1e15;
    constexpr int64_t kMaxTransientNs = 1'000'000'000'000;
    constexpr uint64_t kMaxEvents = 1'000'000'000'000;
    auto physical = [](double x, double max) { return std::isfinite(x) && x >= 0 && x <= max; };
    if (r.transientNs <= 0 || r.transientNs > kMaxTransientNs || r.transientEvents > kMaxEvents || r.occurrence > 64 ||
        !physical(r.spread, 1e3))
    {
        return false;
    }
    const double seconds = static_cast<double>(r.transientNs) / 1e9;
    double delivered = 0;
    double converged = 0;
    for (size_t v = 0; v < r.rate.size(); ++v)
    {
        if (!physical(r.rate[v], kMaxRate) || !physical(r.bytes[v], kMaxBytes) ||
            r.bytes[v] * 8 > kMaxRate * seconds)
        {
            return false;
        }
        if (!FiniteState(r.cc[v], r.backlog[v], kMaxBytes))
        {
            return false;
        }
        delivered += r.bytes[v] * 8 / seconds;
        converged += r.rate[v];
    }
    if (!PlausibleCourse(r, physical, kMaxRate, kMaxBytes))
    {
        return false;
    }
    if (r.completes >= 0)
    {
        // Its rates are its flows' mean rates over the transient.
        return std::abs(delivered - converged) <= 0.01 * converged + 1e3;
    }
    // A transient converging to these rates delivers at least a tenth of them
    // on average: flows start at line rate and are cut towards their share,
    // not stopped.
    return delivered >= 0.1 * converged;
}

bool
MemoStore::PlausibleCourse(const MemoRecord& r,
                           const std::function<bool(double, double)>& physical,
                           double maxRate,
                           double maxBytes)
{
    // The course runs from the formation (nothing delivered yet) to the
    // record's end (its bytes), in time order; delivered bytes never fall
    // and grow at most at the rate bound (plus a jumbo frame: one
    // acknowledgement may cover it); every state is finite, every queue
    // physical. A record without one is refused: a hit could not be cut
    // short soundly.
    if (!r.course || r.course->size() < 2 || r.course->size() > kMaxCheckpoints)
    {
        return false;
    }
    const MemoCourse& course = *r.course;
    const size_t n = r.rate.size();
    if (course.front().atNs != 0 || course.back().atNs != r.transientNs)
    {
        return false;
    }
    const MemoCheckpoint* prev = nullptr;
    for (const MemoCheckpoint& c : course)
    {
        if (c.bytes.size() != n || c.inFlight.size() != n || c.cc.size() != n || c.backlog.size() != n ||
            (prev && c.atNs <= prev->atNs))
        {
            return false;
        }
        for (size_t v = 0; v < n; ++v)
        {
            const double before = prev ? prev->bytes[v] : 0.0;
            const double dt = prev ? static_cast<double>(c.atNs - prev->atNs) / 1e9 : 0.0;
            if (!physical(c.bytes[v], maxBytes) || !physical(c.inFlight[v], maxBytes) || c.bytes[v] < before ||
                (c.bytes[v] - before) * 8 > maxRate * dt + 9000 * 8)
            {
                return false;
            }
            if (!FiniteState(c.cc[v], c.backlog[v], maxBytes))
            {
                return false;
            }
        }
        prev = &c;
    }
    for (size_t v = 0; v < n; ++v)
    {
        if (course.front().bytes[v] != 0 ||
            std::abs(course.back().bytes[v] - r.bytes[v]) > 1e-9 * std::max(1.0, r.bytes[v]))
        {
            return false;
        }
    }
    return true;
}

void
MemoStore::Clear()
{
    m_byHash.clear();
    m_new.clear();
    m_size = 0;
    m_known.clear();
    m_knownBytes = 0;
}

size_t
MemoStore::Size() const
{
    return m_size;
}

std::string
MemoStore::Serialize(const MemoRecord& r)
{
    std::string out;
    Put(out, kMagic);
    Put(out, kVersion);
    const auto n = static_cast<uint32_t>(r.fcg.vertexLabel.size());
    Put(out, n);
    for (uint64_t label : r.fcg.vertexLabel)
    {
        Put(out, label);
    }
    Put(out, static_cast<uint32_t>(r.fcg.edges.size()));
    for (const auto& e : r.fcg.edges)
    {
        Put(out, e.a);
        Put(out, e.b);
        Put(out, e.weight);
    }
    Put(out, r.transientNs);
    Put(out, r.completes);
    Put(out, r.transientEvents);
    Put(out, r.occurrence);
    Put(out, r.spread);
    auto putList = [&out](std::span<const double> xs) {
        Put(out, static_cast<uint32_t>(xs.size()));
        for (double x : xs)
        {
            Put(out, x);
        }
    };
    for (uint32_t v = 0; v < n; ++v)
    {
        Put(out, r.bytes[v]);
        Put(out, r.rate[v]);
        putList(v < r.cc.size() ? r.cc[v] : std::span<const double>{});
        putList(v < r.backlog.size() ? r.backlog[v] : std::span<const double>{});
    }
    const MemoCourse none;
    const MemoCourse& course = r.course ? *r.course : none;
    Put(out, static_cast<uint32_t>(course.size()));
    for (const MemoCheckpoint& c : course)
    {
        Put(out, c.atNs);
        for (uint32_t v = 0; v < n; ++v)
        {
            Put(out, c.bytes[v]);
            Put(out, c.inFlight[v]);
            putList(c.cc[v]);
            putList(c.backlog[v]);
        }
    }
    return out;
}

bool
MemoStore::Deserialize(const std::string& in, MemoRecord& r)
{
    size_t pos = 0;
    uint32_t magic = 0;
    uint32_t version = 0;
    uint32_t n = 0;
    uint32_t m = 0;
    if (!Get(in, pos, magic) || magic != kMagic || !Get(in, pos, version) || version != kVersion ||
        !Get(in, pos, n) || n == 0 || n > kMaxVertices)
    {
        return false;
    }
    r.fcg.vertexLabel.resize(n);
    for (auto& label : r.fcg.vertexLabel)
    {
        if (!Get(in, pos, label))
        {
            return false;
        }
    }
    if (!Get(in, pos, m) || m > n * n)
    {
        return false;
    }
    r.fcg.edges.resize(m);
    for (auto& e : r.fcg.edges)
    {
        if (!Get(in, pos, e.a) || !Get(in, pos, e.b) || !Get(in, pos, e.weight) || e.a >= n || e.b >= n)
        {
            return false;
        }
    }
    if (!Get(in, pos, r.transientNs) || !Get(in, pos, r.completes) || !Get(in, pos, r.transientEvents) ||
        !Get(in, pos, r.occurrence) ||
        !Get(in, pos, r.spread) || r.transientNs < 0 || !(r.spread >= 0) || r.completes < -1 ||
        r.completes >= static_cast<int32_t>(n))
    {
        return false;
    }
    // A list of at most 64 numbers, appended as a row.
    auto getList = [&](RaggedRows& rows, bool nonNegative) {
        uint32_t k = 0;
        if (!Get(in, pos, k) || k > 64)
        {
            return false;
        }
        for (double& x : rows.Append(k))
        {
            if (!Get(in, pos, x) || (nonNegative && !(x >= 0)))
            {
                return false;
            }
        }
        return true;
    };
    r.bytes.resize(n);
    r.rate.resize(n);
    for (uint32_t v = 0; v < n; ++v)
    {
        if (!Get(in, pos, r.bytes[v]) || !Get(in, pos, r.rate[v]) || !getList(r.cc, false) || !getList(r.backlog, true))
        {
            return false;
        }
    }
    r.cc.ShrinkToFit();
    r.backlog.ShrinkToFit();
    uint32_t checkpoints = 0;
    if (!Get(in, pos, checkpoints) || checkpoints > kMaxCheckpoints)
    {
        return false;
    }
    auto course = std::make_shared<MemoCourse>(checkpoints);
    for (MemoCheckpoint& c : *course)
    {
        c.bytes.resize(n);
        c.inFlight.resize(n);
        if (!Get(in, pos, c.atNs))
        {
            return false;
        }
        for (uint32_t v = 0; v < n; ++v)
        {
            if (!Get(in, pos, c.bytes[v]) || !Get(in, pos, c.inFlight[v]) || !getList(c.cc, false) ||
                !getList(c.backlog, false))
            {
                return false;
            }
        }
        c.cc.ShrinkToFit();
        c.backlog.ShrinkToFit();
    }
    r.course = std::move(course);
    return pos == in.size();
}

MemoStore&
MemoStore::Global()
{
    static MemoStore store;
    return store;
}

} // namespace wormhole
} // namespace ns3
