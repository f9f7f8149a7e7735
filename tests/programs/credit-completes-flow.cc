// A flow that a kernel credit completes (issue #11): the Wormhole kernel
// skips a steady flow's partition and credits it through the model; here the
// model finishes the flow inside that credit (FlowFinished from within
// CreditFlow, as a NIC does when the credit leaves nothing to send). The
// completion ends the pattern at the skip's start, so the kernel must take the
// skip back: the link's own events (a 1 us ticker standing for the model's
// port) then keep their period. Re-entering FlowFinished inside the credit
// loop instead left the emptied partition skipping, its events a whole skip
// late. Prints a transcript the test reads.
#include "ns3/core-module.h"
#include "flow-seam.h"

#include <algorithm>
#include <iostream>

using namespace ns3;

namespace
{

constexpr uint32_t kLink = 0;
constexpr uint32_t kFlow = 1;
constexpr double kRateBps = 100e9;
constexpr uint64_t kBytesPerTick = 12500; // 100 Gb/s for 1 us
constexpr int kTicks = 600;

/// A one-link model whose only flow is delivered at line rate, one sample a
/// microsecond, and which completes the flow as soon as the kernel credits it.
class OneLinkModel : public wormhole::FlowCreditor
{
  public:
    int64_t CreditFlow(uint32_t flowId, int64_t bytes, int64_t dtNs) override
    {
        if (flowId != kFlow || m_finished || bytes <= 0)
        {
            return 0; // a finished flow takes nothing back (as RdmaNic)
        }
        std::cout << "credit " << bytes << " bytes for " << dtNs << " ns at " << Simulator::Now().GetNanoSeconds()
                  << "\n";
        m_finished = true;
        wormhole::FlowSeam::Finished(flowId); // completed by this credit
        return bytes;
    }

    void ShiftLink(uint32_t, int64_t) override
    {
    }

    void GetLinkCapacity(uint32_t, double& lineBps, double& payloadBps) const override
    {
        lineBps = kRateBps;
        payloadBps = kRateBps;
    }

    void GetLinkWire(uint32_t, uint64_t& delayNs, double& lossRate) const override
    {
        delayNs = 1000;
        lossRate = 0;
    }

    std::vector<double> SaveFlowState(uint32_t) const override
    {
        return {kRateBps};
    }

    void RestoreFlowState(uint32_t, std::span<const double>) override
    {
    }

    void GetPathBacklog(uint32_t, std::vector<std::pair<uint64_t, uint64_t>>& hops) const override
    {
        hops.assign(1, {0, 0});
    }

    uint64_t GetPortBacklog(uint64_t) const override
    {
        return 0;
    }

    void AddBacklog(uint64_t, const std::vector<std::pair<uint32_t, uint64_t>>&, int64_t) override
    {
    }

    void DropBacklog(uint64_t) override
    {
    }

    uint64_t GetFlowInFlight(uint32_t) const override
    {
        return kBytesPerTick;
    }

    bool Finished() const
    {
        return m_finished;
    }

  private:
    bool m_finished = false;
};

OneLinkModel g_model;
uint64_t g_acked = 0;
int64_t g_lastTick = -1;
int64_t g_maxGap = 0;

void
Tick(int left)
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    if (g_lastTick >= 0)
    {
        g_maxGap = std::max(g_maxGap, now - g_lastTick);
    }
    g_lastTick = now;
    if (left > 0)
    {
        // The link's own event, pending while the sample below is taken: a
        // skip moves it with the partition.
        wormhole::OwnerScope owner(kLink);
        Simulator::Schedule(MicroSeconds(1), &Tick, left - 1);
    }
    if (!g_model.Finished())
    {
        g_acked += kBytesPerTick;
        wormhole::FlowSeam::Progress(kFlow, kRateBps, g_acked, g_acked + kBytesPerTick);
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    CommandLine cmd(__FILE__);
    cmd.Parse(argc, argv);
    GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::WormholeSimulatorImpl"));
    Config::SetDefault("ns3::WormholeSimulatorImpl::Memo", BooleanValue(false));
    // A short window: the flow is steady after a few dozen samples.
    Config::SetDefault("ns3::WormholeSimulatorImpl::Window", UintegerValue(64));
    Simulator::Now(); // creates the kernel: it registers as the seam's listener
    wormhole::FlowSeam::creditor = &g_model;
    wormhole::FlowSeam::Started(kFlow, {kLink}, 1, 1'000'000'000);
    {
        wormhole::OwnerScope owner(kLink);
        Simulator::Schedule(MicroSeconds(1), &Tick, kTicks);
    }
    Simulator::Run();
    std::cout << "finished " << g_model.Finished() << "\n";
    std::cout << "last tick " << g_lastTick << "\n";
    std::cout << "max gap " << g_maxGap << "\n";
    Simulator::Destroy();
    wormhole::FlowSeam::creditor = nullptr;
    return 0;
}
