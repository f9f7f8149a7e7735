#include "rdma-network.h"

#include "dcqcn-rate-control.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaNetwork");
NS_OBJECT_ENSURE_REGISTERED(RdmaNetwork);

namespace
{

void
SetChecked(ObjectFactory& factory, const std::string& name, const AttributeValue& value)
{
    TypeId::AttributeInformation info;
    const TypeId tid = factory.GetTypeId();
    if (!tid.LookupAttributeByName(name, &info))
    {
        throw std::invalid_argument(tid.GetName() + " has no attribute " + name);
    }
    if (!info.checker->CreateValidValue(value))
    {
        throw std::invalid_argument("invalid value for " + tid.GetName() + "::" + name);
    }
    factory.Set(name, value);
}

[[noreturn]] void
Fail(const char* what, size_t index, const std::string& msg)
{
    std::ostringstream os;
    os << what << ' ' << index << ": " << msg;
    throw std::invalid_argument(os.str());
}

int64_t
StepsToNs(int64_t steps)
{
    return TimeStep(steps).GetNanoSeconds();
}

} // namespace

TypeId
RdmaNetwork::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaNetwork")
            .SetParent<Object>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaNetwork>()
            .AddAttribute("Seed",
                          "Seed of the ECMP hashes and the ECN marking RNGs",
                          UintegerValue(1),
                          MakeUintegerAccessor(&RdmaNetwork::m_seed),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("QueueSampleInterval",
                          "Period of switch egress queue samples (0 = off)",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&RdmaNetwork::m_queueSampleInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("RateSampleInterval",
                          "Period of per-flow rate samples (0 = off)",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&RdmaNetwork::m_rateSampleInterval),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("FlowComplete",
                            "All bytes of a flow are acknowledged: flow id",
                            MakeTraceSourceAccessor(&RdmaNetwork::m_flowCompleteTrace),
                            "ns3::RdmaNetwork::FlowCompleteTracedCallback")
            .AddTraceSource("Pfc",
                            "A switch sent a PFC frame: node, port, link, priority, "
                            "true for PAUSE",
                            MakeTraceSourceAccessor(&RdmaNetwork::m_pfcTrace),
                            "ns3::RdmaNetwork::PfcTracedCallback");
    return tid;
}

RdmaNetwork::RdmaNetwork()
{
    m_nicFactory.SetTypeId(RdmaNic::GetTypeId());
    m_switchFactory.SetTypeId(RdmaSwitch::GetTypeId());
    m_mmuFactory.SetTypeId(RdmaSwitchMmu::GetTypeId());
    m_ccFactory.SetTypeId(DcqcnRateControl::GetTypeId());
}

RdmaNetwork::~RdmaNetwork()
{
    if (wormhole::FlowSeam::creditor == this)
    {
        wormhole::FlowSeam::creditor = nullptr;
    }
}

void
RdmaNetwork::SetNicAttribute(const std::string& name, const AttributeValue& value)
{
    SetChecked(m_nicFactory, name, value);
}

void
RdmaNetwork::SetSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    SetChecked(m_switchFactory, name, value);
}

void
RdmaNetwork::SetMmuAttribute(const std::string& name, const AttributeValue& value)
{
    SetChecked(m_mmuFactory, name, value);
}

void
RdmaNetwork::SetCongestionControl(const std::string& typeId)
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(typeId, &tid) ||
        !tid.IsChildOf(RdmaCongestionControl::GetTypeId()) || !tid.HasConstructor())
    {
        throw std::invalid_argument(typeId + " is not a congestion control");
    }
    m_ccFactory = ObjectFactory();
    m_ccFactory.SetTypeId(tid);
}

void
RdmaNetwork::SetCongestionControlAttribute(const std::string& name, const AttributeValue& value)
{
    SetChecked(m_ccFactory, name, value);
}

void
RdmaNetwork::SetFlowCompleteCallback(std::function<void(uint32_t)> cb)
{
    m_flowCompleteHook = std::move(cb);
}

void
RdmaNetwork::DoDispose()
{
    if (wormhole::FlowSeam::creditor == this)
    {
        wormhole::FlowSeam::creditor = nullptr;
    }
    for (auto& qp : m_flows)
    {
        if (qp->cc)
        {
            qp->cc->Dispose();
        }
    }
    m_flows.clear();
    for (auto& dev : m_devices)
    {
        dev->Dispose();
    }
    m_devices.clear();
    m_nics.clear();
    m_switches.clear();
    m_nodes.clear();
    m_ccPrototype = nullptr;
    m_flowCompleteHook = nullptr;
    Object::DoDispose();
}

// ----------------------------------------------------------------- build

void
RdmaNetwork::Build(uint32_t numNodes,
                   const std::vector<uint8_t>& isSwitch,
                   const std::vector<RdmaLinkSpec>& links)
{
    NS_LOG_FUNCTION(this << numNodes << links.size());
    if (m_built)
    {
        throw std::logic_error("RdmaNetwork::Build called twice");
    }
    if (isSwitch.size() != numNodes)
    {
        throw std::invalid_argument("isSwitch has " + std::to_string(isSwitch.size()) +
                                    " entries for " + std::to_string(numNodes) + " nodes");
    }
    std::vector<uint32_t> degree(numNodes, 0);
    for (size_t i = 0; i < links.size(); ++i)
    {
        const RdmaLinkSpec& l = links[i];
        if (l.a >= numNodes || l.b >= numNodes)
        {
            Fail("link", i, "unknown node " + std::to_string(std::max(l.a, l.b)));
        }
        if (l.a == l.b)
        {
            Fail("link", i, "connects node " + std::to_string(l.a) + " to itself");
        }
        if (l.rateBps == 0)
        {
            Fail("link", i, "rate must be positive");
        }
        if (++degree[l.a] > 65535 || ++degree[l.b] > 65535)
        {
            Fail("link", i, "more than 65535 ports on a node");
        }
    }
    m_links = links;
    m_isSwitch = isSwitch;
    m_ccPrototype = m_ccFactory.Create<RdmaCongestionControl>();

    // ns-3 schedules each new node's Initialize(); that belongs to no link.
    wormhole::OwnerScope owner(wormhole::kNoOwner);
    for (uint32_t i = 0; i < numNodes; ++i)
    {
        Ptr<Node> node = CreateObject<Node>();
        Ptr<RdmaDevice> dev;
        if (isSwitch[i])
        {
            Ptr<RdmaSwitch> sw = m_switchFactory.Create<RdmaSwitch>();
            sw->SetMmu(m_mmuFactory.Create<RdmaSwitchMmu>());
            sw->TraceConnectWithoutContext("Pfc", MakeCallback(&RdmaNetwork::ForwardPfc, this, i));
            m_switches.push_back(sw);
            m_nics.push_back(nullptr);
            dev = sw;
        }
        else
        {
            Ptr<RdmaNic> nic = m_nicFactory.Create<RdmaNic>();
            nic->SetFlowTable(&m_flows);
            nic->SetFlowDoneCallback(MakeCallback(&RdmaNetwork::FlowDone, this));
            m_nics.push_back(nic);
            m_switches.push_back(nullptr);
            dev = nic;
        }
        dev->Setup(node, i, &m_pool, &m_counters);
        node->AggregateObject(dev);
        m_nodes.push_back(node);
        m_devices.push_back(dev);
    }

    uint64_t nicRate = 0;
    for (size_t i = 0; i < links.size(); ++i)
    {
        const RdmaLinkSpec& l = links[i];
        const int64_t delay = NanoSeconds(static_cast<int64_t>(l.delayNs)).GetTimeStep();
        const auto id = static_cast<uint32_t>(i);
        const uint32_t pa = m_devices[l.a]->AddPort(id, l.rateBps, delay);
        const uint32_t pb = m_devices[l.b]->AddPort(id, l.rateBps, delay);
        m_devices[l.a]->ConnectPort(pa, PeekPointer(m_devices[l.b]), pb);
        m_devices[l.b]->ConnectPort(pb, PeekPointer(m_devices[l.a]), pa);
        m_linkEnds.push_back({{{l.a, pa}, {l.b, pb}}});
        if (!isSwitch[l.a] || !isSwitch[l.b])
        {
            nicRate = std::max(nicRate, l.rateBps);
        }
    }

    for (uint32_t i = 0; i < numNodes; ++i)
    {
        Ptr<RdmaSwitch> sw = m_switches[i];
        if (!sw)
        {
            continue;
        }
        Ptr<RdmaSwitchMmu> mmu = sw->GetMmu();
        std::vector<uint64_t> headroom;
        std::vector<uint32_t> shift;
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            const RdmaLinkSpec& l = links[sw->GetPort(p).linkId];
            headroom.push_back(static_cast<uint64_t>(mmu->GetHeadroomRttFactor() *
                                                     static_cast<double>(l.rateBps) *
                                                     static_cast<double>(l.delayNs) * 1e-9 / 8));
            // Faster ports than the NICs get a larger share of the free buffer.
            uint32_t s = mmu->GetPfcAlphaShift();
            for (uint64_t r = l.rateBps; nicRate && r > nicRate && s > 0; r /= 2)
            {
                --s;
            }
            shift.push_back(s);
        }
        mmu->Configure(headroom, shift);
        // Marking RNG: one stream per switch, independent of the ECMP seeds.
        sw->ConfigureEcn(RdmaMix64(RdmaMix64(m_seed) + i));
    }

    ComputeRoutes();
    m_built = true;
    if (!wormhole::FlowSeam::creditor)
    {
        wormhole::FlowSeam::creditor = this;
    }
}

void
RdmaNetwork::ComputeRoutes()
{
    // Shortest paths by BFS from every destination host; only the destination
    // and switches forward, so no path transits another host. Each device
    // gets a CSR table: its equal-cost ports towards each destination.
    const auto n = static_cast<uint32_t>(m_devices.size());
    std::vector<std::vector<uint32_t>> offsets(n, std::vector<uint32_t>(n + 1, 0));
    std::vector<std::vector<uint16_t>> ports(n);
    std::vector<uint32_t> dist(n);
    std::vector<uint32_t> frontier;
    constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();
    for (uint32_t d = 0; d < n; ++d)
    {
        if (!m_isSwitch[d])
        {
            std::fill(dist.begin(), dist.end(), kUnreached);
            dist[d] = 0;
            frontier.assign(1, d);
            for (size_t k = 0; k < frontier.size(); ++k)
            {
                const uint32_t u = frontier[k];
                if (u != d && !m_isSwitch[u])
                {
                    continue;
                }
                for (uint32_t p = 0; p < m_devices[u]->GetNPorts(); ++p)
                {
                    const uint32_t v = m_devices[u]->GetPort(p).peer->GetIndex();
                    if (dist[v] == kUnreached)
                    {
                        dist[v] = dist[u] + 1;
                        frontier.push_back(v);
                    }
                }
            }
            for (uint32_t u = 0; u < n; ++u)
            {
                if (u == d || dist[u] == kUnreached)
                {
                    continue;
                }
                for (uint32_t p = 0; p < m_devices[u]->GetNPorts(); ++p)
                {
                    const uint32_t v = m_devices[u]->GetPort(p).peer->GetIndex();
                    if ((v == d || m_isSwitch[v]) && dist[v] + 1 == dist[u])
                    {
                        ports[u].push_back(static_cast<uint16_t>(p));
                    }
                }
            }
        }
        for (uint32_t u = 0; u < n; ++u)
        {
            offsets[u][d + 1] = static_cast<uint32_t>(ports[u].size());
        }
    }
    for (uint32_t u = 0; u < n; ++u)
    {
        const uint64_t own = m_switches[u] ? m_switches[u]->GetEcmpSeed() : 0;
        const uint64_t seed = RdmaMix64(m_seed ^ RdmaMix64(own ^ RdmaMix64(u)));
        m_devices[u]->SetRoutes(std::move(offsets[u]), std::move(ports[u]), seed);
    }
}

// ----------------------------------------------------------------- flows

uint32_t
RdmaNetwork::AddQueuePair(const RdmaFlowSpec& s, int64_t startStep)
{
    const size_t index = m_flows.size();
    if (!m_built)
    {
        Fail("flow", index, "the network is not built");
    }
    const auto n = static_cast<uint32_t>(m_devices.size());
    if (s.src >= n || s.dst >= n)
    {
        Fail("flow", index, "unknown node " + std::to_string(std::max(s.src, s.dst)));
    }
    if (s.src == s.dst)
    {
        Fail("flow", index, "source and destination are both node " + std::to_string(s.src));
    }
    if (m_isSwitch[s.src] || m_isSwitch[s.dst])
    {
        Fail("flow", index,
             "node " + std::to_string(m_isSwitch[s.src] ? s.src : s.dst) + " is a switch");
    }
    if (s.bytes == 0)
    {
        Fail("flow", index, "size must be positive");
    }
    if (s.pg == 0 || s.pg >= RdmaSwitchMmu::kQueues)
    {
        Fail("flow", index, "priority group must be 1..7 (0 carries control frames)");
    }
    if (m_flowIndex.count(s.id))
    {
        Fail("flow", index, "duplicate flow id " + std::to_string(s.id));
    }
    if (m_devices[s.src]->GetNPorts() == 0)
    {
        Fail("flow", index, "host " + std::to_string(s.src) + " has no link");
    }
    if (!m_devices[s.src]->HasRoute(s.dst))
    {
        Fail("flow", index,
             "no path from " + std::to_string(s.src) + " to " + std::to_string(s.dst));
    }
    if (startStep < Simulator::Now().GetTimeStep())
    {
        Fail("flow", index, "start time is in the past");
    }
    auto qp = std::make_unique<RdmaQueuePair>();
    qp->index = static_cast<uint32_t>(index);
    qp->id = s.id;
    qp->src = s.src;
    qp->dst = s.dst;
    qp->pg = s.pg;
    qp->bytes = s.bytes;
    qp->size = s.bytes;
    qp->startStep = startStep;
    m_flows.push_back(std::move(qp));
    m_flowIndex.emplace(s.id, static_cast<uint32_t>(index));
    m_nextId = std::max(m_nextId, s.id + 1);
    return static_cast<uint32_t>(index);
}

void
RdmaNetwork::AddFlow(const RdmaFlowSpec& flow)
{
    const uint32_t index =
        AddQueuePair(flow, NanoSeconds(static_cast<int64_t>(flow.startNs)).GetTimeStep());
    m_pendingStarts++;
    m_counters.otherEvents++;
    // A start is a fact of the workload, not of any link: the kernel must not
    // shift it with a partition.
    wormhole::OwnerScope owner(wormhole::kNoOwner);
    Simulator::ScheduleWithContext(m_nodes[flow.src]->GetId(),
                                   TimeStep(m_flows[index]->startStep) - Simulator::Now(),
                                   &RdmaNetwork::StartFlowEvent,
                                   this,
                                   index);
    wormhole::FlowSeam::Scheduled(flow.id, flow.startNs, KernelLinks(index));
}

uint32_t
RdmaNetwork::StartFlowNow(uint32_t src, uint32_t dst, uint64_t bytes, uint32_t pg)
{
    const auto nowNs = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
    const RdmaFlowSpec spec{m_nextId, src, dst, pg, bytes, nowNs};
    const uint32_t index = AddQueuePair(spec, Simulator::Now().GetTimeStep());
    const uint32_t context = m_nodes[src]->GetId();
    if (Simulator::GetContext() == context)
    {
        StartFlow(index);
    }
    else
    {
        // Run the start in the source node's context, so its timers inherit it.
        m_pendingStarts++;
        m_counters.otherEvents++;
        wormhole::OwnerScope owner(wormhole::kNoOwner);
        Simulator::ScheduleWithContext(context, Time(0), &RdmaNetwork::StartFlowEvent, this, index);
    }
    return spec.id;
}

void
RdmaNetwork::StartFlowEvent(uint32_t index)
{
    m_pendingStarts--;
    StartFlow(index);
}

void
RdmaNetwork::StartFlow(uint32_t index)
{
    RdmaQueuePair& qp = *m_flows[index];
    NS_LOG_FUNCTION(this << qp.id);
    qp.cc = m_ccPrototype->Fork();
    qp.links = DataLinks(index);
    qp.idealFctNs = IdealFctNs(qp);
    m_activeFlows++;
    m_nics[qp.src]->StartFlow(qp);
    // The kernel hears of the flow once its first frame is scheduled (so a
    // skip of its partition moves that frame too).
    wormhole::FlowSeam::Started(qp.id, KernelLinks(index), static_cast<uint32_t>(qp.links.size()), qp.bytes);
    StartSamplers();
}

std::vector<uint32_t>
RdmaNetwork::DataLinks(uint32_t index) const
{
    const RdmaQueuePair& qp = *m_flows[index];
    std::vector<uint32_t> links;
    ForEachHop(qp.src, qp.dst, index, [&](uint32_t node, uint32_t port) {
        links.push_back(m_devices[node]->GetPort(port).linkId);
    });
    return links;
}

void
RdmaNetwork::ForEachHop(uint32_t from,
                        uint32_t to,
                        uint32_t index,
                        const std::function<void(uint32_t, uint32_t)>& visit) const
{
    for (uint32_t node = from; node != to;)
    {
        const uint32_t port = m_devices[node]->SelectPort(from, to, index);
        visit(node, port);
        node = m_devices[node]->GetPort(port).peer->GetIndex();
    }
}

std::vector<uint32_t>
RdmaNetwork::KernelLinks(uint32_t index) const
{
    // Every link the flow's frames use: the data path, then any link only
    // its ACKs take (ECMP may hash them onto another spine).
    const RdmaQueuePair& qp = *m_flows[index];
    std::vector<uint32_t> links = DataLinks(index);
    ForEachHop(qp.dst, qp.src, index, [&](uint32_t node, uint32_t port) {
        const uint32_t link = m_devices[node]->GetPort(port).linkId;
        if (std::find(links.begin(), links.end(), link) == links.end())
        {
            links.push_back(link);
        }
    });
    return links;
}

double
RdmaNetwork::IdealFctNs(const RdmaQueuePair& qp) const
{
    // Alone on its path, store-and-forward. Full frames leave hop h at
    // sum_{i<=h}(tx_i) + sum_{i<h}(delay_i) + (k-1) * max_{i<=h}(tx_i), the
    // departure law of identical frames through a tandem of servers; the last,
    // possibly shorter frame may queue behind the one before it. Then its ACK
    // comes back over the same links. With a full last frame this is
    // (frames-1)*wire/bottleneck + sum_h(wire/rate_h + delay_h) + ACK path.
    const RdmaNic& nic = *m_nics[qp.src];
    const uint64_t mtu = nic.GetMtu();
    const uint64_t frames = (qp.bytes + mtu - 1) / mtu;
    const double fullBits = 8e9 * static_cast<double>(mtu + nic.GetHeaderBytes());
    const double lastBits =
        8e9 * static_cast<double>(qp.bytes - (frames - 1) * mtu + nic.GetHeaderBytes());
    double sumTx = 0;
    double maxTx = 0;
    double sumDelay = 0;
    double last = 0; // the last frame's departure from the previous hop, plus its delay
    double ack = 0;
    for (uint32_t id : qp.links)
    {
        const auto rate = static_cast<double>(m_links[id].rateBps);
        const auto delay = static_cast<double>(m_links[id].delayNs);
        sumTx += fullBits / rate;
        maxTx = std::max(maxTx, fullBits / rate);
        const double previous =
            frames > 1 ? sumTx + sumDelay + static_cast<double>(frames - 2) * maxTx : 0;
        last = std::max(previous, last) + lastBits / rate + delay;
        sumDelay += delay;
        ack += kRdmaControlBytes * 8e9 / rate + delay;
    }
    return last + ack;
}

void
RdmaNetwork::FlowDone(RdmaQueuePair& qp)
{
    m_activeFlows--;
    m_completedFlows++;
    wormhole::FlowSeam::Finished(qp.id);
    m_flowCompleteTrace(qp.id);
    if (m_flowCompleteHook)
    {
        m_flowCompleteHook(qp.id);
    }
}

void
RdmaNetwork::CreditFlow(uint32_t flowId, int64_t bytes, int64_t dtNs)
{
    const RdmaQueuePair& qp = FlowById(flowId);
    m_nics[qp.src]->CreditFlow(*m_flows[qp.index], bytes, NanoSeconds(dtNs).GetTimeStep());
}

void
RdmaNetwork::ShiftLink(uint32_t linkId, int64_t dtNs)
{
    const int64_t dt = NanoSeconds(dtNs).GetTimeStep();
    for (const auto& [node, port] : m_linkEnds.at(linkId))
    {
        m_devices[node]->ShiftPort(port, dt);
    }
}

void
RdmaNetwork::GetLinkCapacity(uint32_t linkId, double& lineBps, double& payloadBps) const
{
    lineBps = static_cast<double>(m_links.at(linkId).rateBps);
    // Every host NIC shares the same MTU and header size (ns-3 attribute defaults).
    auto it = std::find_if(m_nics.begin(), m_nics.end(), [](const Ptr<RdmaNic>& n) { return n != nullptr; });
    const RdmaNic* nic = it == m_nics.end() ? nullptr : PeekPointer(*it);
    const double mtu = nic ? nic->GetMtu() : 1000.0;
    const double header = nic ? nic->GetHeaderBytes() : 48.0;
    payloadBps = lineBps * mtu / (mtu + header);
}

std::vector<double>
RdmaNetwork::SaveFlowState(uint32_t flowId) const
{
    const RdmaQueuePair& qp = FlowById(flowId);
    return qp.cc ? qp.cc->SaveState() : std::vector<double>{qp.rate};
}

void
RdmaNetwork::RestoreFlowState(uint32_t flowId, const std::vector<double>& state)
{
    const RdmaQueuePair& qp = FlowById(flowId);
    if (qp.cc && !qp.IsFinished())
    {
        qp.cc->RestoreState(state);
    }
}

void
RdmaNetwork::GetPathBacklog(uint32_t flowId, std::vector<std::pair<uint64_t, uint64_t>>& hops) const
{
    const RdmaQueuePair& qp = FlowById(flowId);
    hops.clear();
    // Walk the data path again (the flow keeps links, not ports); a host's
    // NIC paces its flows and has no switch queue: key 0.
    ForEachHop(qp.src, qp.dst, qp.index, [&](uint32_t node, uint32_t port) {
        const Ptr<RdmaSwitch>& sw = m_switches[node];
        if (sw)
        {
            hops.emplace_back((static_cast<uint64_t>(node) + 1) << 32 | port, sw->GetQueueBytes(port));
        }
        else
        {
            hops.emplace_back(0, 0);
        }
    });
}

void
RdmaNetwork::AddBacklog(uint64_t portKey, uint64_t bytes, int64_t fromNs)
{
    const auto node = static_cast<uint32_t>((portKey >> 32) - 1);
    const auto port = static_cast<uint32_t>(portKey & 0xffffffffU);
    NS_ASSERT_MSG(portKey >> 32 && node < m_switches.size() && m_switches[node], "not a switch port");
    m_switches[node]->AddBacklog(port, bytes, NanoSeconds(fromNs).GetTimeStep());
}

void
RdmaNetwork::ForwardPfc(uint32_t node, uint32_t port, uint32_t priority, bool pause)
{
    m_pfcTrace(node, port, m_devices[node]->GetPort(port).linkId, priority, pause);
}

// --------------------------------------------------------------- samplers

bool
RdmaNetwork::SamplersShouldRun() const
{
    return m_activeFlows + m_pendingStarts > 0;
}

void
RdmaNetwork::StartSamplers()
{
    if (m_queueSampleInterval.IsStrictlyPositive() && !m_queueSamplerRunning)
    {
        m_queueSamplerRunning = true;
        SampleQueues();
    }
    if (m_rateSampleInterval.IsStrictlyPositive() && !m_rateSamplerRunning)
    {
        m_rateSamplerRunning = true;
        SampleRates();
    }
}

void
RdmaNetwork::SampleQueues()
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    for (const auto& sw : m_switches)
    {
        if (!sw)
        {
            continue;
        }
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            if (const uint64_t bytes = sw->GetQueueBytes(p))
            {
                m_queueSamples.push_back({now, sw->GetPort(p).linkId, sw->GetIndex(), bytes});
            }
        }
    }
    m_queueSamplerRunning = SamplersShouldRun();
    if (m_queueSamplerRunning)
    {
        m_counters.otherEvents++;
        wormhole::OwnerScope owner(wormhole::kNoOwner);
        Simulator::Schedule(m_queueSampleInterval, &RdmaNetwork::SampleQueues, this);
    }
}

void
RdmaNetwork::SampleRates()
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    for (const auto& qp : m_flows)
    {
        if (qp->cc && !qp->IsFinished())
        {
            m_rateSamples.push_back({now, qp->id, qp->rate, qp->sndUna + qp->creditedBytes});
        }
    }
    m_rateSamplerRunning = SamplersShouldRun();
    if (m_rateSamplerRunning)
    {
        m_counters.otherEvents++;
        wormhole::OwnerScope owner(wormhole::kNoOwner);
        Simulator::Schedule(m_rateSampleInterval, &RdmaNetwork::SampleRates, this);
    }
}

// --------------------------------------------------------------- results

const RdmaQueuePair&
RdmaNetwork::FlowById(uint32_t flowId) const
{
    const auto it = m_flowIndex.find(flowId);
    if (it == m_flowIndex.end())
    {
        throw std::invalid_argument("unknown flow id " + std::to_string(flowId));
    }
    return *m_flows[it->second];
}

std::vector<RdmaFlowRecord>
RdmaNetwork::GetFlowRecords() const
{
    std::vector<RdmaFlowRecord> out;
    out.reserve(m_flows.size());
    for (const auto& qp : m_flows)
    {
        const int64_t start = StepsToNs(qp->startStep);
        const int64_t finish = qp->IsFinished() ? StepsToNs(qp->finishStep) : -1;
        out.push_back({qp->id,
                       qp->src,
                       qp->dst,
                       qp->pg,
                       qp->bytes,
                       start,
                       finish,
                       qp->IsFinished() ? finish - start : -1,
                       qp->idealFctNs,
                       qp->dataPackets,
                       qp->retransmitted,
                       qp->timeouts,
                       qp->creditedBytes});
    }
    return out;
}

std::vector<RdmaPfcRecord>
RdmaNetwork::GetPfcRecords() const
{
    std::vector<RdmaPfcRecord> out;
    for (const auto& sw : m_switches)
    {
        if (!sw)
        {
            continue;
        }
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            out.push_back({sw->GetIndex(),
                           p,
                           sw->GetPort(p).linkId,
                           sw->GetPausesSent(p),
                           sw->GetResumesSent(p)});
        }
    }
    return out;
}

const std::vector<RdmaQueueSample>&
RdmaNetwork::GetQueueSamples() const
{
    return m_queueSamples;
}

const std::vector<RdmaRateSample>&
RdmaNetwork::GetRateSamples() const
{
    return m_rateSamples;
}

const RdmaCounters&
RdmaNetwork::GetCounters() const
{
    return m_counters;
}

uint32_t
RdmaNetwork::GetNFlows() const
{
    return static_cast<uint32_t>(m_flows.size());
}

uint32_t
RdmaNetwork::GetNCompletedFlows() const
{
    return m_completedFlows;
}

std::vector<uint32_t>
RdmaNetwork::GetFlowPath(uint32_t flowId) const
{
    return FlowById(flowId).links;
}

Ptr<RdmaCongestionControl>
RdmaNetwork::GetFlowCongestionControl(uint32_t flowId) const
{
    return FlowById(flowId).cc;
}

uint32_t
RdmaNetwork::GetNNodes() const
{
    return static_cast<uint32_t>(m_nodes.size());
}

Ptr<Node>
RdmaNetwork::GetNode(uint32_t i) const
{
    return m_nodes.at(i);
}

Ptr<RdmaNic>
RdmaNetwork::GetNic(uint32_t i) const
{
    return m_nics.at(i);
}

Ptr<RdmaSwitch>
RdmaNetwork::GetSwitch(uint32_t i) const
{
    return m_switches.at(i);
}

} // namespace ns3
