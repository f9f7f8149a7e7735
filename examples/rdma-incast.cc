// N-to-1 incast over one switch with the RoCEv2 model (PFC, ECN, DCQCN).
//
//   rdma-incast --senders=8 --bytes=64000000
//   rdma-incast --SimulatorImplementationType=ns3::WormholeSimulatorImpl
//   rdma-incast --ns3::DcqcnRateControl::RpTimer=900us --ns3::RdmaSwitchMmu::PfcEnabled=false
//
// Hosts 0..N-1 each send `bytes` to host N at t = 0; node N+1 is the switch.
// Prints per-flow FCTs, PFC/drop/ECN counters, the event count and wall time.
#include "rdma-network.h"

#include "ns3/core-module.h"
#include "ns3/data-rate.h"

#include <chrono>
#include <iomanip>
#include <iostream>

using namespace ns3;

int
main(int argc, char** argv)
{
    uint32_t senders = 8;
    uint64_t bytes = 16000000;
    std::string rate = "100Gbps";
    Time delay = MicroSeconds(1);
    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "Number of sending hosts", senders);
    cmd.AddValue("bytes", "Bytes per flow", bytes);
    cmd.AddValue("rate", "Rate of every link", rate);
    cmd.AddValue("delay", "Propagation delay of every link", delay);
    cmd.Parse(argc, argv);

    const uint32_t receiver = senders;
    const uint32_t sw = senders + 1;
    std::vector<uint8_t> isSwitch(senders + 2, 0);
    isSwitch[sw] = 1;
    std::vector<RdmaLinkSpec> links;
    const uint64_t bps = DataRate(rate).GetBitRate();
    const auto delayNs = static_cast<uint64_t>(delay.GetNanoSeconds());
    for (uint32_t h = 0; h <= receiver; ++h)
    {
        links.push_back({h, sw, bps, delayNs});
    }

    Ptr<RdmaNetwork> net = CreateObject<RdmaNetwork>();
    net->Build(senders + 2, isSwitch, links);
    for (uint32_t h = 0; h < senders; ++h)
    {
        net->AddFlow({h, h, receiver, 3, bytes, 0});
    }

    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;

    std::cout << "flow src dst bytes start_ns fct_ns ideal_fct_ns retransmitted\n";
    int64_t last = 0;
    for (const RdmaFlowRecord& f : net->GetFlowRecords())
    {
        std::cout << f.id << ' ' << f.src << ' ' << f.dst << ' ' << f.bytes << ' ' << f.startNs
                  << ' ' << f.fctNs << ' ' << std::fixed << std::setprecision(0) << f.idealFctNs
                  << ' ' << f.retransmittedPackets << '\n';
        last = std::max(last, f.finishNs);
    }
    const RdmaCounters& c = net->GetCounters();
    std::cout << "completed " << net->GetNCompletedFlows() << '/' << net->GetNFlows()
              << "  last_finish_ns " << last << "  pauses " << c.pauses << "  resumes "
              << c.resumes << "  drops " << c.drops << "  ecn_marks " << c.ecnMarks << "  cnps "
              << c.cnps << '\n';
    std::cout << "events " << Simulator::GetEventCount() << "  (arrivals " << c.arrivalEvents
              << "  port services " << c.serviceEvents << "  cc timers " << c.ccEvents
              << "  retransmit timers " << c.retransmitEvents << "  other " << c.otherEvents
              << ")  wall_s " << std::setprecision(3) << wall.count() << '\n';
    Simulator::Destroy();
    return 0;
}
