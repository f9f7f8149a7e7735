"""A memo hit cut short by an unforeseen join, across link delays and join
offsets: per-flow FCT error (mean / max) and makespan error of the Wormhole
kernel against the default kernel. The scenario is the one of
tests/test_memo_soundness.py (two 4-to-1 waves of 4 MB under step marking, a
fifth flow of 2 MB that joins about join_ns into wave 2, started by the end of
a 1 kB flow elsewhere, which no one can announce: a join started by a compute
delay alone is foreseen and refuses the hit, tests/test_dag_foresight.py);
the numbers are the table in docs/memo.md. A hit the join cuts short is
undone and its partition replayed up to the join (exact); --no-replay
resumes from the stored course instead (the fallback, approximate).

    .venv/bin/python examples/memo-cut-short-sweep.py [--no-replay] [delay_us ...]
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

from test_memo_soundness import STEP, unforeseeable_join_dag  # noqa: E402

from ns3wormhole import run, topology  # noqa: E402
from ns3wormhole.compare import workload_fct_errors  # noqa: E402

args = sys.argv[1:]
replay = "--no-replay" not in args
delays = [int(d) for d in args if d != "--no-replay"] or [1, 10, 20, 50]
config = run.WormholeConfig(memo_replay_joins=replay)
print("links  join   per-flow mean / max   makespan  hits skip-backs replayed deferred")
for delay_us in delays:
    topo = topology.star(8, "100Gbps", f"{delay_us}us")
    for join_ns in (100_000, 300_000, 600_000, 900_000, 1_200_000):
        dag = unforeseeable_join_dag(join_ns, delay_us)
        base = run.run_workload(topo, dag, STEP)
        worm = run.run_workload(topo, dag, STEP, kernel="wormhole", wormhole=config)
        err = workload_fct_errors(base, worm)
        span = abs(worm.network.makespan_ns - base.network.makespan_ns) / base.network.makespan_ns
        stats = worm.network.stats
        print(f"{delay_us:3d} us {join_ns // 1000:5d} us  {100 * err.mean():6.2f} / {100 * err.max():6.2f}%"
              f"   {100 * span:6.2f}%  {stats['memo_hits']:4d} {stats['skip_backs']:4d} {stats['memo_hits_replayed']:4d} {stats['memo_hits_deferred']:4d}")
