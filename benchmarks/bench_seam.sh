#!/usr/bin/env bash
# What the model/kernel seam costs under ns-3's DefaultSimulatorImpl: the RDMA
# model and examples/rdma-incast.cc built twice from the same sources, once as
# is and once with every seam call compiled away (-DNS3WH_NO_SEAM), then run
# alternately on the 8x64 MB incast. Usage: benchmarks/bench_seam.sh PYTHON [ROUNDS]
set -euo pipefail
py=${1:?python with ns3wormhole installed}; rounds=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
ns=$("$py" -c 'import importlib.util, os; s = importlib.util.find_spec("ns3"); print(os.path.dirname(s.origin) if s.origin else list(s.submodule_search_locations)[0])')
out=$(mktemp -d)
inc="-isystem $ns/include -I$here/cpp/wormhole/model -I$here/cpp/rdma/model -I$here/cpp/rdma/helper"
src="$here/cpp/wormhole/model/*.cc $here/cpp/rdma/model/*.cc $here/cpp/rdma/helper/*.cc $here/examples/rdma-incast.cc"
for variant in seam noseam; do
  def=""; [ "$variant" = noseam ] && def="-DNS3WH_NO_SEAM"
  # shellcheck disable=SC2086
  g++ -O2 -std=c++20 -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE $def $inc $src -L"$ns/lib64" \
    -lns3.44-core -lns3.44-network -Wl,-rpath,"$ns/lib64" -o "$out/incast-$variant"
done
echo "# $(date '+%Y-%m-%d %H:%M') 8x64 MB incast, DefaultSimulatorImpl, wall_s of Simulator::Run"
for r in $(seq "$rounds"); do
  for variant in seam noseam; do
    w=$("$out/incast-$variant" --senders=8 --bytes=64000000 | grep -o 'wall_s [0-9.]*' | cut -d' ' -f2)
    echo "round $r $variant $w"
  done
done
rm -rf "$out"
