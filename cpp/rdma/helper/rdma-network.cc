// RdmaNetwork lifecycle and builder: attributes, device factories, Build()
// (nodes, NICs, switches, ports, MMU headroom and ECN setup) and disposal.
#include "rdma-network.h"

#include "dcqcn-rate-control.h"
#include "rdma-network-input-error.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <map>
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

} // namespace


TypeId
RdmaNetwork::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaNetwork")
            .SetParent<Object>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaNetwork>()
            .AddAttribute("CongestionControl",
                          "Congestion control of every flow: dcqcn, hpcc, timely, dctcp, "
                          "or the TypeId name of an RdmaCongestionControl",
                          StringValue("dcqcn"),
                          MakeStringAccessor(&RdmaNetwork::SetCongestionControlName,
                                             &RdmaNetwork::GetCongestionControlName),
                          MakeStringChecker())
            .AddAttribute("Seed",
                          "Seed of the ECMP hashes and the per-port ECN marking draws",
                          UintegerValue(1),
                          MakeUintegerAccessor(&RdmaNetwork::m_seed),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("IntCounterSeed",
                          "0: every switch port's transmitted-byte counter (HPCC's INT) starts "
                          "at 0, as in HPCC's code; else at a value drawn from this seed. HPCC "
                          "reads the counter in rounded units, so where it starts is state a "
                          "real switch leaves to chance",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdmaNetwork::m_intCounterSeed),
                          MakeUintegerChecker<uint32_t>())
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
            .AddAttribute("QlenMonitorStart",
                          "Start of the queue-length histogram window (HPCC QLEN_MON_START)",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&RdmaNetwork::m_qlenStart),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("QlenMonitorEnd",
                          "End of the queue-length histogram window (HPCC QLEN_MON_END; 0 = off)",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&RdmaNetwork::m_qlenEnd),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("QlenMonitorInterval",
                          "Sampling period of the queue-length histograms",
                          TimeValue(NanoSeconds(100)),
                          MakeTimeAccessor(&RdmaNetwork::m_qlenInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("QlenDumpInterval",
                          "The cumulative histograms are kept at every multiple of this time",
                          TimeValue(MilliSeconds(100)),
                          MakeTimeAccessor(&RdmaNetwork::m_qlenDump),
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
RdmaNetwork::SetCongestionControlName(std::string name)
{
    static const std::map<std::string, std::string> kShort = {
        {"dcqcn", "ns3::DcqcnRateControl"},
        {"hpcc", "ns3::HpccRateControl"},
        {"timely", "ns3::TimelyRateControl"},
        {"dctcp", "ns3::DctcpRateControl"},
    };
    const auto it = kShort.find(name);
    SetCongestionControl(it == kShort.end() ? name : it->second);
    m_ccName = std::move(name);
}

std::string
RdmaNetwork::GetCongestionControlName() const
{
    return m_ccName;
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
            RdmaInputError("link", i, "unknown node " + std::to_string(std::max(l.a, l.b)));
        }
        if (l.a == l.b)
        {
            RdmaInputError("link", i, "connects node " + std::to_string(l.a) + " to itself");
        }
        if (l.rateBps == 0)
        {
            RdmaInputError("link", i, "rate must be positive");
        }
        if (!(l.errorRate >= 0 && l.errorRate <= 1))
        {
            RdmaInputError("link", i, "error rate must be in [0, 1]");
        }
        if (++degree[l.a] > 65535 || ++degree[l.b] > 65535)
        {
            RdmaInputError("link", i, "more than 65535 ports on a node");
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
        dev->SetEcnExemptions(&m_ecnExemptBelow);
        dev->SetFlowIds(&m_flowIds);
        dev->TraceConnectWithoutContext("PfcReceived", MakeCallback(&RdmaNetwork::RecordPfcReceived, this, i));
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
        if (l.errorRate > 0)
        {
            // Loss draws: one counter-based stream per link direction.
            const uint64_t key = wormhole::Mix64(m_seed ^ 0x6c696e6b6c6f7373ULL) + 2 * i;
            m_devices[l.a]->SetPortLoss(pa, l.errorRate, wormhole::Mix64(key));
            m_devices[l.b]->SetPortLoss(pb, l.errorRate, wormhole::Mix64(key + 1));
        }
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
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            const RdmaLinkSpec& l = links[sw->GetPort(p).linkId];
            mmu->AddPort(l.rateBps, l.delayNs, nicRate);
        }
        // Marking key of the switch (each port keys its frames' draws from
        // it), independent of the ECMP seeds.
        sw->ConfigureEcn(wormhole::Mix64(wormhole::Mix64(m_seed) + i));
        if (m_intCounterSeed != 0)
        {
            for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
            {
                // 24 bits: any start is as good as another beyond the
                // rounding unit (128 x IntMulti bytes).
                const uint64_t draw = wormhole::Mix64(wormhole::Mix64(m_intCounterSeed ^ 0x696e74636f756e74ULL) + (uint64_t{i} << 16) + p);
                sw->StartByteCounter(p, draw >> 40);
            }
        }
    }

    m_linkDown.assign(links.size(), 0);
    ComputeRoutes();
    m_built = true;
    m_qlen.Configure(m_qlenStart, m_qlenEnd, m_qlenInterval, m_qlenDump);
    m_qlen.Start(m_switches, &m_counters.otherEvents);
    if (!wormhole::FlowSeam::creditor)
    {
        wormhole::FlowSeam::creditor = this;
    }
}


void
RdmaNetwork::RecordPfcReceived(uint32_t node, uint32_t port, uint32_t priority, bool pause)
{
    m_pfcEvents.push_back({Simulator::Now().GetNanoSeconds(), node, port, priority, pause});
}

void
RdmaNetwork::ForwardPfc(uint32_t node, uint32_t port, uint32_t priority, bool pause)
{
    m_pfcTrace(node, port, m_devices[node]->GetPort(port).linkId, priority, pause);
}

} // namespace ns3
