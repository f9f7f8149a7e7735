// A stock ns-3 program (point-to-point UDP echo, ASCII trace to stdout) that
// knows nothing of Wormhole. Built with `ns3-wormhole config --libs`, it runs
// under the Wormhole kernel with either of:
//   ./udp-echo --SimulatorImplementationType=ns3::WormholeSimulatorImpl
//   NS_GLOBAL_VALUE="SimulatorImplementationType=ns3::WormholeSimulatorImpl" ./udp-echo
// An unchanged binary built without our libraries: eval "$(ns3-wormhole config --env)".
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

int
main(int argc, char* argv[])
{
    uint32_t packets = 20;
    double intervalMs = 1.0;
    CommandLine cmd(__FILE__);
    cmd.AddValue("packets", "echo requests the client sends", packets);
    cmd.AddValue("intervalMs", "gap between requests (ms)", intervalMs);
    cmd.Parse(argc, argv);

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("5Mbps"));
    p2p.SetChannelAttribute("Delay", StringValue("2ms"));
    NetDeviceContainer devices = p2p.Install(nodes);
    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper address;
    address.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer interfaces = address.Assign(devices);

    UdpEchoServerHelper server(9);
    ApplicationContainer serverApps = server.Install(nodes.Get(1));
    serverApps.Start(Seconds(1.0));
    serverApps.Stop(Seconds(30.0));
    UdpEchoClientHelper client(interfaces.GetAddress(1), 9);
    client.SetAttribute("MaxPackets", UintegerValue(packets));
    client.SetAttribute("Interval", TimeValue(MilliSeconds(intervalMs)));
    client.SetAttribute("PacketSize", UintegerValue(1024));
    ApplicationContainer clientApps = client.Install(nodes.Get(0));
    clientApps.Start(Seconds(2.0));
    clientApps.Stop(Seconds(30.0));

    p2p.EnableAsciiAll(Create<OutputStreamWrapper>(&std::cout));

    Simulator::Stop(Seconds(31));
    Simulator::Run();
    std::cout << "kernel " << KernelName() << "\n"
              << "now " << Simulator::Now().GetTimeStep() << "\n"
              << "events " << Simulator::GetEventCount() << std::endl;
    Simulator::Destroy();
    return 0;
}
