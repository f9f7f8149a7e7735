#!/bin/sh
# Make ns3-wormhole a contrib module of an ns-3 source tree (ns-3 >= 3.36, CMake build):
#
#   ns3-patches/add-to-ns3.sh [--copy] NS3_SOURCE_DIR
#   cd NS3_SOURCE_DIR && ./ns3 configure --enable-examples && ./ns3 build
#   ./ns3 run "rdma-incast --SimulatorImplementationType=ns3::WormholeSimulatorImpl"
#
# It creates NS3_SOURCE_DIR/contrib/wormhole: CMakeLists.txt from
# ns3-patches/contrib-wormhole, model/ with links to every file of cpp/*/model and
# cpp/*/helper, examples/ with links to examples/rdma-incast.cc and udp-echo.cc.
# Links keep the module in step with this checkout; --copy copies the files instead.
# Running it again replaces the module. Needs the Boost.Graph headers (libboost-dev).
set -eu
mode=link
if [ "${1:-}" = "--copy" ]; then mode=copy; shift; fi
if [ $# -ne 1 ]; then
    echo "usage: $0 [--copy] NS3_SOURCE_DIR" >&2
    exit 2
fi
ns3=$1
if [ ! -x "$ns3/ns3" ] || [ ! -d "$ns3/contrib" ]; then
    echo "$0: $ns3 is not an ns-3 source tree (no ./ns3 script or contrib/ folder)" >&2
    exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
dest=$(cd "$ns3/contrib" && pwd)/wormhole
rm -rf "$dest"
mkdir -p "$dest/model" "$dest/examples"
put() {  # put SOURCE TARGET_DIR
    if [ "$mode" = copy ]; then cp "$1" "$2/"; else ln -s "$1" "$2/"; fi
}
cp "$repo/ns3-patches/contrib-wormhole/CMakeLists.txt" "$dest/"
cp "$repo/ns3-patches/contrib-wormhole/examples/CMakeLists.txt" "$dest/examples/"
for f in "$repo"/cpp/*/model/*.h "$repo"/cpp/*/model/*.cc "$repo"/cpp/*/helper/*.h "$repo"/cpp/*/helper/*.cc; do
    [ -e "$f" ] && put "$f" "$dest/model"
done
put "$repo/examples/rdma-incast.cc" "$dest/examples"
put "$repo/examples/udp-echo.cc" "$dest/examples"
echo "created $dest ($mode); now: cd $ns3 && ./ns3 configure --enable-examples && ./ns3 build"
