// A frameless backlog seen by PFC (issue #11, docs/switch-buffer-model.md
// §10): one switch, three hosts. A backlog restored on the port towards host
// 2 stands for frames of hosts 0 and 1; it is charged to their ingresses,
// which pause when their charge passes the threshold, resume as the port
// sends the backlog (before it is gone, with the hysteresis of §7b), and
// hold nothing once it has gone. A second backlog is dropped half way (a
// memo hit cut short): what it still held is given back at once. Prints a
// transcript the test reads.
#include "rdma-switch.h"

#include "ns3/core-module.h"
#include "ns3/network-module.h"

#include <iostream>

using namespace ns3;

namespace
{

constexpr uint64_t kRateBps = 100000000000ULL; // 100 Gb/s
constexpr uint64_t kDelayNs = 1000;
constexpr uint32_t kHosts = 3;
constexpr uint32_t kData = 3; // priority of the data frames

/// A host that only reports the PFC frames it receives.
class PfcSink : public RdmaDevice
{
  public:
    void Receive(uint32_t port, RdmaPacket* p) override
    {
        if (p->kind == RdmaPacketKind::PAUSE || p->kind == RdmaPacketKind::RESUME)
        {
            std::cout << (p->kind == RdmaPacketKind::PAUSE ? "pause" : "resume") << " host " << GetIndex()
                      << " priority " << unsigned(p->pg) << " at " << Simulator::Now().GetNanoSeconds() << "\n";
        }
        m_pool->Free(p);
    }

  protected:
    void Service(uint32_t) override
    {
    }
};

void
Report(const char* when, Ptr<RdmaSwitch> sw)
{
    Ptr<RdmaSwitchMmu> mmu = sw->GetMmu();
    std::cout << when << " shared " << mmu->GetSharedUsed();
    for (uint32_t in = 0; in < kHosts; ++in)
    {
        std::cout << " in" << in << " " << mmu->GetIngressBytes(in, kData) << (mmu->IsPaused(in, kData) ? "p" : "");
    }
    std::cout << " queue " << sw->GetQueueBytes(2) << "\n";
}

} // namespace

int
main(int argc, char** argv)
{
    RdmaPacketPool pool;
    RdmaCounters counters;
    const int64_t delay = NanoSeconds(kDelayNs).GetTimeStep();

    NodeContainer nodes;
    nodes.Create(kHosts + 1);
    Ptr<RdmaSwitch> sw = CreateObject<RdmaSwitch>();
    sw->Setup(nodes.Get(kHosts), kHosts, &pool, &counters);
    Ptr<RdmaSwitchMmu> mmu = CreateObject<RdmaSwitchMmu>();
    mmu->SetAttribute("BufferSize", UintegerValue(2 * 1024 * 1024));
    sw->SetMmu(mmu);
    std::vector<Ptr<PfcSink>> hosts;
    for (uint32_t h = 0; h < kHosts; ++h)
    {
        hosts.push_back(CreateObject<PfcSink>());
        hosts[h]->Setup(nodes.Get(h), h, &pool, &counters);
        hosts[h]->AddPort(h, kRateBps, delay);
        sw->AddPort(h, kRateBps, delay);
        mmu->AddPort(kRateBps, kDelayNs, kRateBps);
    }
    for (uint32_t h = 0; h < kHosts; ++h)
    {
        hosts[h]->ConnectPort(0, PeekPointer(sw), h);
        sw->ConnectPort(h, PeekPointer(hosts[h]), 0);
    }
    sw->ConfigureEcn(1);
    std::cout << "threshold " << mmu->GetThreshold(0) << "\n";

    // 400 kB for host 0 (well over its threshold), 40 kB for host 1 (under).
    Simulator::Schedule(MicroSeconds(1), [sw] {
        const int64_t now = Simulator::Now().GetTimeStep();
        sw->AddBacklog(2, {{0, kData, 400000}, {1, kData, 40000}}, now);
        Report("charged", sw);
    });
    // 440 kB at 100 Gb/s take 35.2 us.
    Simulator::Schedule(MicroSeconds(20), [sw] { Report("midway", sw); });
    Simulator::Schedule(MicroSeconds(60), [sw] { Report("drained", sw); });
    // The same again, dropped 10 us in.
    Simulator::Schedule(MicroSeconds(100), [sw] {
        const int64_t now = Simulator::Now().GetTimeStep();
        sw->AddBacklog(2, {{0, kData, 400000}, {1, kData, 40000}}, now);
        Report("charged", sw);
    });
    Simulator::Schedule(MicroSeconds(110), [sw] {
        sw->DropBacklog(2, Simulator::Now().GetTimeStep());
        Report("dropped", sw);
    });
    Simulator::Schedule(MicroSeconds(150), [sw] { Report("end", sw); });
    Simulator::Run();
    std::cout << "pauses " << sw->GetPausesSent(0) + sw->GetPausesSent(1) << " resumes "
              << sw->GetResumesSent(0) + sw->GetResumesSent(1) << "\n";
    Simulator::Destroy();
    return 0;
}
