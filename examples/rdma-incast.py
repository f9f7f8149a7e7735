"""An ns-3 Python script (cppyy bindings) that builds an RDMA fabric with our
model directly: an N-to-1 incast on a 100G star. It runs under the Wormhole
kernel; pass --baseline to run it under ns-3's default kernel instead.

    python examples/rdma-incast.py [--baseline] [--mb 16] [--senders 4]
"""

import argparse

import cppyy

import ns3wormhole

parser = argparse.ArgumentParser()
parser.add_argument("--baseline", action="store_true")
parser.add_argument("--mb", type=int, default=16)
parser.add_argument("--senders", type=int, default=4)
args = parser.parse_args()
if args.baseline:
    ns3wormhole.use_baseline()
else:
    ns3wormhole.use_wormhole()

from ns import ns  # noqa: E402

SENDERS = args.senders
net = ns.CreateObject["RdmaNetwork"]()
links = cppyy.gbl.std.vector["ns3::RdmaLinkSpec"]()
for host in range(SENDERS + 1):
    link = ns.RdmaLinkSpec()
    link.a, link.b, link.rateBps, link.delayNs = host, SENDERS + 1, 100_000_000_000, 1000
    links.push_back(link)
net.Build(SENDERS + 2, cppyy.gbl.std.vector["uint8_t"]([0] * (SENDERS + 1) + [1]), links)
for i in range(SENDERS):
    flow = ns.RdmaFlowSpec()
    flow.id, flow.src, flow.dst, flow.pg, flow.bytes, flow.startNs = i, i, SENDERS, 3, args.mb * 1_000_000, 0
    net.AddFlow(flow)

ns.Simulator.Run()
for record in net.GetFlowRecords():
    print(f"flow {record.id} {record.src}->{record.dst} fct {record.fctNs} ns (alone: {record.idealFctNs:.0f} ns)")
print("events", ns.Simulator.GetEventCount())
if not args.baseline:
    stats = ns3wormhole.kernel_stats()
    print("fast-forwards", stats["fast_forwards"], "skipped ns", stats["time_skipped_ns"])
ns.Simulator.Destroy()
