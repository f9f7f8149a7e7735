// Stock ns-3 bulk TCP transfer over a lossy 3-node chain with tracing; used to
// check that the Wormhole kernel runs arbitrary ns-3 programs exactly like the
// default kernel (same trace, same event count).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <iostream>

using namespace ns3;

// The kernel actually selected (command line, NS_GLOBAL_VALUE or default).
static std::string
KernelName()
{
    StringValue value;
    GlobalValue::GetValueByName("SimulatorImplementationType", value);
    return value.Get();
}

static void
CwndChange(uint32_t oldCwnd, uint32_t newCwnd)
{
    std::cout << "cwnd " << Simulator::Now().GetTimeStep() << " " << oldCwnd << " " << newCwnd
              << "\n";
}

static void
ConnectCwnd()
{
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow",
                                  MakeCallback(&CwndChange));
}

int
main(int argc, char* argv[])
{
    uint32_t maxBytes = 2000000;
    CommandLine cmd(__FILE__);
    cmd.AddValue("maxBytes", "bytes the sender transfers", maxBytes);
    cmd.Parse(argc, argv);
    RngSeedManager::SetSeed(7);

    NodeContainer nodes;
    nodes.Create(3);
    PointToPointHelper fast;
    fast.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    fast.SetChannelAttribute("Delay", StringValue("1ms"));
    PointToPointHelper slow;
    slow.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    slow.SetChannelAttribute("Delay", StringValue("5ms"));
    slow.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("20p"));
    NetDeviceContainer d01 = fast.Install(nodes.Get(0), nodes.Get(1));
    NetDeviceContainer d12 = slow.Install(nodes.Get(1), nodes.Get(2));

    // Random losses exercise retransmission timers (Cancel/Remove/IsExpired).
    Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
    em->SetAttribute("ErrorRate", DoubleValue(0.002));
    em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
    d12.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper address;
    address.SetBase("10.1.1.0", "255.255.255.0");
    address.Assign(d01);
    address.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer i12 = address.Assign(d12);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(i12.GetAddress(1), 9));
    source.SetAttribute("MaxBytes", UintegerValue(maxBytes));
    ApplicationContainer sourceApps = source.Install(nodes.Get(0));
    sourceApps.Start(Seconds(0.1));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
    ApplicationContainer sinkApps = sink.Install(nodes.Get(2));
    sinkApps.Start(Seconds(0.0));
    Simulator::Schedule(Seconds(0.1) + NanoSeconds(1), &ConnectCwnd);

    slow.EnableAscii(Create<OutputStreamWrapper>(&std::cout), d12);

    Simulator::Stop(Seconds(20));
    Simulator::Run();
    std::cout << "kernel " << KernelName() << "\n"
              << "received " << DynamicCast<PacketSink>(sinkApps.Get(0))->GetTotalRx() << "\n"
              << "now " << Simulator::Now().GetTimeStep() << "\n"
              << "events " << Simulator::GetEventCount() << std::endl;
    Simulator::Destroy();
    return 0;
}
