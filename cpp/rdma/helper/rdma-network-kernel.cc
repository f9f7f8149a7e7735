// RdmaNetwork as the Wormhole kernel's FlowCreditor: crediting skipped bytes,
// shifting a link's pending events, capacities, congestion-control state
// save/restore and path backlog.
#include "rdma-network.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <numeric>

namespace ns3
{

int64_t
RdmaNetwork::CreditFlow(uint32_t flowId, int64_t bytes, int64_t dtNs)
{
    const RdmaQueuePair& qp = FlowById(flowId);
    const int64_t taken = m_nics[qp.src]->CreditFlow(*m_flows[qp.index], bytes, NanoSeconds(dtNs).GetTimeStep());
    // The credited frames and their acknowledgements count as sent on every
    // port of the path (docs/fast-forward.md): a credit of whole frames
    // leaves each port's serialization remainder where the packet-level run
    // leaves it, so later traffic through these ports keeps its timing to the
    // ns (a 1 ns shift is enough to reorder an incast and redraw it).
    const RdmaNic& nic = *m_nics[qp.src];
    const int64_t mtu = nic.GetMtu();
    const int64_t full = taken / mtu;
    const int64_t part = taken % mtu;
    const uint32_t header = nic.GetHeaderBytes() + qp.telemetryBytes;
    ForEachHop(qp.src, qp.dst, qp.ecmpKey, [&](uint32_t node, uint32_t port) {
        m_devices[node]->AccountSkippedFrames(port, full, static_cast<uint32_t>(mtu) + header);
        if (part != 0)
        {
            m_devices[node]->AccountSkippedFrames(port, part > 0 ? 1 : -1,
                                                  static_cast<uint32_t>(part > 0 ? part : -part) + header);
        }
    });
    const int64_t acks = (full + (part > 0 ? 1 : part < 0 ? -1 : 0)) / m_nics[qp.dst]->GetAckInterval();
    ForEachHop(qp.dst, qp.src, qp.ecmpKey, [&](uint32_t node, uint32_t port) {
        m_devices[node]->AccountSkippedFrames(port, acks, kRdmaControlBytes + qp.telemetryBytes);
    });
    return taken;
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
    // What a steady state fills: the payload share, times the utilisation
    // the congestion control aims at (HPCC holds links at UTarget).
    const double target = m_ccPrototype ? m_ccPrototype->GetTargetUtilisation() : 1.0;
    payloadBps = GetQueueDrainBps(linkId) * target;
}

double
RdmaNetwork::GetQueueDrainBps(uint32_t linkId) const
{
    // Every host NIC shares the same MTU and header size (ns-3 attribute defaults).
    auto it = std::find_if(m_nics.begin(), m_nics.end(), [](const Ptr<RdmaNic>& n) { return n != nullptr; });
    const RdmaNic* nic = it == m_nics.end() ? nullptr : PeekPointer(*it);
    const double mtu = nic ? nic->GetMtu() : 1000.0;
    const double header = (nic ? nic->GetHeaderBytes() : 48.0) +
                          (m_ccPrototype ? m_ccPrototype->GetTelemetryBytes() : 0);
    return static_cast<double>(m_links.at(linkId).rateBps) * mtu / (mtu + header);
}

void
RdmaNetwork::GetLinkWire(uint32_t linkId, uint64_t& delayNs, double& lossRate) const
{
    delayNs = m_links.at(linkId).delayNs;
    lossRate = m_links.at(linkId).errorRate;
}

bool
RdmaNetwork::GetLineRatePeriod(uint32_t flowId, uint64_t& periodNs, uint64_t& payloadBytes) const
{
    const RdmaQueuePair& qp = FlowById(flowId);
    const RdmaNic* nic = PeekPointer(m_nics[qp.src]);
    const RdmaNic* receiver = PeekPointer(m_nics[qp.dst]);
    const auto first = static_cast<uint64_t>(qp.lineRate);
    if (!nic || !receiver || first == 0)
    {
        return false;
    }
    const uint64_t mtu = nic->GetMtu();
    const uint64_t dataBits = 8 * (mtu + nic->GetHeaderBytes() + qp.telemetryBytes);
    const uint64_t ackBits = 8 * (kRdmaControlBytes + qp.telemetryBytes);
    const auto stepsPerSecond = static_cast<uint64_t>(Seconds(1).GetTimeStep());
    // k frames of `bits` take k * bits * unit / rate units of time: a whole
    // number when k is a multiple of rate / gcd(bits * unit, rate). A port
    // carries the sub-step remainder of each frame to the next (Transmit), so
    // after such k frames every port is back to the remainder it started with.
    // The receiver acknowledges every AckInterval frames: whole intervals too.
    uint64_t frames = receiver->GetAckInterval();
    constexpr uint64_t kMaxFrames = 100000; // beyond this the period outlasts any useful skip
    auto whole = [&frames](uint64_t bits, uint64_t unit, uint64_t rate) {
        const auto product = static_cast<unsigned __int128>(bits) * unit;
        frames = std::lcm(frames, rate / std::gcd(static_cast<uint64_t>(product % rate), rate));
        return frames <= kMaxFrames;
    };
    if (!whole(dataBits, 1000000000ULL, first))
    {
        return false;
    }
    for (uint32_t link : KernelLinks(qp.index))
    {
        const uint64_t rate = m_links.at(link).rateBps;
        if (!whole(dataBits, stepsPerSecond, rate) || !whole(ackBits, stepsPerSecond, rate))
        {
            return false;
        }
    }
    periodNs = static_cast<uint64_t>(static_cast<unsigned __int128>(frames) * dataBits * 1000000000ULL / first);
    payloadBytes = frames * mtu;
    return true;
}

std::vector<double>
RdmaNetwork::SaveFlowState(uint32_t flowId) const
{
    const RdmaQueuePair& qp = FlowById(flowId);
    return qp.cc ? qp.cc->SaveState() : std::vector<double>{qp.rate};
}

void
RdmaNetwork::RestoreFlowState(uint32_t flowId, std::span<const double> state)
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
    ForEachHop(qp.src, qp.dst, qp.ecmpKey, [&](uint32_t node, uint32_t port) {
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

RdmaNetwork::SwitchPort
RdmaNetwork::SwitchPortOf(uint64_t portKey) const
{
    const auto node = static_cast<uint32_t>((portKey >> 32) - 1);
    const auto port = static_cast<uint32_t>(portKey & 0xffffffffU);
    NS_ASSERT_MSG(portKey >> 32 && node < m_switches.size() && m_switches[node], "not a switch port");
    return {node, port};
}

bool
RdmaNetwork::SharesDrawnAt(uint32_t flowId, uint64_t portKey) const
{
    if (portKey >> 32 == 0 || !GetFlowCongestionControl(flowId)->ReactsToEcn())
    {
        return false; // a NIC's port, or a control loop no mark reaches
    }
    const auto [node, port] = SwitchPortOf(portKey);
    uint64_t kmin = 0;
    uint64_t kmax = 0;
    double pmax = 0;
    m_switches[node]->GetEcnThresholds(port, kmin, kmax, pmax);
    return kmin < kmax && pmax > 0;
}

uint64_t
RdmaNetwork::GetPortBacklog(uint64_t portKey) const
{
    const auto [node, port] = SwitchPortOf(portKey);
    return m_switches[node]->GetQueueBytes(port);
}

void
RdmaNetwork::AddBacklog(uint64_t portKey, const std::vector<std::pair<uint32_t, uint64_t>>& shares, int64_t fromNs)
{
    const auto [node, port] = SwitchPortOf(portKey);
    // Each flow's bytes are charged to the port its frames come in on at
    // this switch: the far end of the hop before this one on its data path.
    std::vector<RdmaSwitch::BacklogShare> charges;
    for (const auto& [flowId, bytes] : shares)
    {
        const RdmaQueuePair& qp = FlowById(flowId);
        uint32_t in = 0;
        bool found = false;
        uint32_t prevNode = 0;
        uint32_t prevPort = 0;
        bool first = true;
        ForEachHop(qp.src, qp.dst, qp.ecmpKey, [&](uint32_t n, uint32_t p) {
            if (n == node && p == port && !first && !found)
            {
                in = m_devices[prevNode]->GetPort(prevPort).peerPort;
                found = true;
            }
            prevNode = n;
            prevPort = p;
            first = false;
        });
        // A flow that does not come in through a switch port here (it starts
        // at this node, or no longer crosses the port) has no ingress to
        // charge: its bytes stay in the backlog, uncharged like queue 0's.
        const uint32_t q = found ? qp.pg : 0;
        auto same = std::find_if(charges.begin(), charges.end(), [&](const RdmaSwitch::BacklogShare& c) {
            return c.in == in && c.q == q;
        });
        if (same != charges.end())
        {
            same->bytes += bytes;
        }
        else
        {
            charges.push_back({in, q, bytes});
        }
    }
    m_switches[node]->AddBacklog(port, charges, NanoSeconds(fromNs).GetTimeStep());
}

uint64_t
RdmaNetwork::GetFramePayload(uint32_t flowId) const
{
    const RdmaNic* nic = PeekPointer(m_nics[FlowById(flowId).src]);
    return nic ? nic->GetMtu() : 0;
}

double
RdmaNetwork::GetAckWireRatio(uint32_t flowId) const
{
    const RdmaQueuePair& qp = FlowById(flowId);
    const RdmaNic* nic = PeekPointer(m_nics[qp.src]);
    if (!nic)
    {
        return 0;
    }
    const double data = static_cast<double>(nic->GetMtu() + nic->GetHeaderBytes() + qp.telemetryBytes) *
                        std::max<uint32_t>(1, nic->GetAckInterval());
    return static_cast<double>(kRdmaControlBytes + qp.telemetryBytes) / data;
}

uint64_t
RdmaNetwork::GetFlowInFlight(uint32_t flowId) const
{
    const RdmaQueuePair& qp = FlowById(flowId);
    return qp.IsFinished() || qp.sndNxt < qp.sndUna ? 0 : qp.sndNxt - qp.sndUna;
}

void
RdmaNetwork::DropBacklog(uint64_t portKey)
{
    const auto [node, port] = SwitchPortOf(portKey);
    m_switches[node]->DropBacklog(port, Simulator::Now().GetTimeStep());
}

void
RdmaNetwork::WaiveBytes(uint64_t portKey, uint64_t bytes)
{
    const auto [node, port] = SwitchPortOf(portKey);
    m_switches[node]->WaiveBytes(port, bytes);
}

void
RdmaNetwork::SetInFlightEcnExempt(const std::vector<uint32_t>& flowIds, bool exempt)
{
    m_ecnExemptBelow.resize(m_flows.size(), 0);
    std::vector<std::pair<uint32_t, uint32_t>> ports; // (switch, port) on the flows' paths
    for (uint32_t flowId : flowIds)
    {
        const RdmaQueuePair& qp = FlowById(flowId);
        // A frame carries its first byte: those sent so far are below sndNxt.
        m_ecnExemptBelow[qp.index] = exempt ? std::max(m_ecnExemptBelow[qp.index], qp.sndNxt) : 0;
        ForEachHop(qp.src, qp.dst, qp.ecmpKey, [&](uint32_t node, uint32_t port) {
            if (m_switches[node])
            {
                ports.emplace_back(node, port);
            }
        });
    }
    std::sort(ports.begin(), ports.end());
    ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
    for (const auto& [node, port] : ports)
    {
        m_switches[node]->RecountEcnExempt(port);
    }
}

} // namespace ns3
