"""A stock ns-3 Python script (cppyy bindings) that opts into the Wormhole
kernel with one line. Delete that line and it runs under ns-3's default
kernel with identical results.

    python examples/udp-echo.py [TRACE_PREFIX]
"""

import sys

import ns3wormhole; ns3wormhole.use_wormhole()  # the one line that opts in

from ns import ns

prefix = sys.argv[1] if len(sys.argv) > 1 else "udp-echo-py"

nodes = ns.NodeContainer()
nodes.Create(2)
p2p = ns.PointToPointHelper()
p2p.SetDeviceAttribute("DataRate", ns.StringValue("5Mbps"))
p2p.SetChannelAttribute("Delay", ns.StringValue("2ms"))
devices = p2p.Install(nodes)
ns.InternetStackHelper().Install(nodes)
address = ns.Ipv4AddressHelper()
address.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
interfaces = address.Assign(devices)

server = ns.UdpEchoServerHelper(9)
server_apps = server.Install(nodes.Get(1))
server_apps.Start(ns.Seconds(1.0))
server_apps.Stop(ns.Seconds(10.0))
client = ns.UdpEchoClientHelper(interfaces.GetAddress(1).ConvertTo(), 9)
client.SetAttribute("MaxPackets", ns.UintegerValue(10))
client.SetAttribute("Interval", ns.TimeValue(ns.MilliSeconds(3)))
client.SetAttribute("PacketSize", ns.UintegerValue(1024))
client_apps = client.Install(nodes.Get(0))
client_apps.Start(ns.Seconds(2.0))
client_apps.Stop(ns.Seconds(10.0))

p2p.EnableAsciiAll(prefix)
ns.Simulator.Stop(ns.Seconds(11))
ns.Simulator.Run()
kernel = ns.StringValue()
ns.GlobalValue.GetValueByName("SimulatorImplementationType", kernel)
print("kernel", kernel.Get())
print("now", ns.Simulator.Now().GetTimeStep())
print("events", ns.Simulator.GetEventCount())
ns.Simulator.Destroy()
