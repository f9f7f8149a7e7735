"""The Wormhole kernel runs any ns-3 program exactly like ns-3's default kernel:
same trace output, same event order, same event count, whichever way it is
selected (command line, NS_GLOBAL_VALUE, LD_PRELOAD, cppyy)."""

from __future__ import annotations

import re
import sys

import pytest
from conftest import EXAMPLES, PROGRAMS, clean_env, run

WORMHOLE = "ns3::WormholeSimulatorImpl"
DEFAULT = "ns3::DefaultSimulatorImpl"


def split_kernel(output: str) -> tuple[str, str]:
    """(kernel the program reports, the rest of its output)."""
    kernel = re.search(r"^kernel (\S+)$", output, re.M)
    assert kernel, output[-500:]
    rest = re.sub(r"^kernel \S+\n", "", output, flags=re.M)
    return kernel.group(1), rest


def event_count(output: str) -> int:
    return int(re.search(r"^events (\d+)$", output, re.M).group(1))


@pytest.mark.parametrize("program", ["udp-echo", "tcp-bulk", "kernel-contract"])
def test_identical_to_default_kernel(compile_program, program):
    source = EXAMPLES / f"{program}.cc" if program == "udp-echo" else PROGRAMS / f"{program}.cc"
    exe = compile_program(source)
    base_kernel, base = split_kernel(run([str(exe)])) if program != "kernel-contract" else (DEFAULT, run([str(exe)]))
    assert base_kernel == DEFAULT
    via_cmdline = run([str(exe), f"--SimulatorImplementationType={WORMHOLE}"])
    via_env = run([str(exe)], env=clean_env(NS_GLOBAL_VALUE=f"SimulatorImplementationType={WORMHOLE}"))
    for out in (via_cmdline, via_env):
        if program != "kernel-contract":
            kernel, out = split_kernel(out)
            assert kernel == WORMHOLE
        assert out == base
    assert event_count(base) > 100


def test_tcp_bulk_delivers_and_traces(compile_program):
    """Guard that the comparison above compares something substantial."""
    out = run([str(compile_program(PROGRAMS / "tcp-bulk.cc")), f"--SimulatorImplementationType={WORMHOLE}"])
    assert "received 2000000" in out
    assert out.count("\nd ") > 0, "the lossy link should drop or corrupt packets"
    assert len(out.splitlines()) > 5000


@pytest.mark.parametrize("scheduler", ["ns3::HeapScheduler", "ns3::CalendarScheduler", "ns3::ListScheduler",
                                       "ns3::WormholeEventQueue"])
def test_scheduler_choice(compile_program, scheduler):
    exe = str(compile_program(PROGRAMS / "tcp-bulk.cc"))
    default = split_kernel(run([exe]))[1]  # ns-3's MapScheduler
    base = split_kernel(run([exe, f"--SchedulerType={scheduler}"]))[1]
    worm = split_kernel(run([exe, f"--SchedulerType={scheduler}", f"--SimulatorImplementationType={WORMHOLE}"]))[1]
    assert worm == base == default


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_event_queue_orders_as_map_scheduler(compile_program, seed):
    """Insertions, extractions, removals and moves (a skip's remove and
    insert, sometimes moved back onto the same time and uid) give the same
    events in the same order as ns-3's MapScheduler."""
    out = run([str(compile_program(PROGRAMS / "event-queue.cc")), f"--seed={seed}"])
    assert re.match(r"same \d+$", out.strip()), out
    assert int(out.split()[1]) > 50000


def test_unchanged_binary_via_preload(compile_program):
    """A program built without our libraries gains the kernel through the
    environment that `ns3-wormhole config --env` prints."""
    from ns3wormhole import paths

    exe = str(compile_program(EXAMPLES / "udp-echo.cc", link_wormhole=False))
    base_kernel, base = split_kernel(run([exe]))
    kernel, out = split_kernel(run([exe], env=paths.preload_env(clean_env())))
    assert (base_kernel, kernel) == (DEFAULT, WORMHOLE)
    assert out == base


@pytest.mark.parametrize("linked", [True, False])
def test_environment_selects_the_event_queue(compile_program, linked):
    """ns-3 reads NS_GLOBAL_VALUE before our library registers its queue; the
    library binds SchedulerType again, so the environment `config --env`
    prints selects the queue in a linked and in a preloaded program alike."""
    from ns3wormhole import paths

    exe = str(compile_program(EXAMPLES / "udp-echo.cc", link_wormhole=linked))
    env = paths.preload_env(clean_env()) if not linked else clean_env(
        NS_GLOBAL_VALUE=paths.preload_env({})["NS_GLOBAL_VALUE"])
    out = run([exe, "--PrintGlobals"], env=env)
    assert "--SchedulerType=[ns3::WormholeEventQueue]" in out
    assert "--SimulatorImplementationType=[ns3::WormholeSimulatorImpl]" in out


def test_python_script_one_line(tmp_path):
    """examples/udp-echo.py opts in with one line; without it, the same trace."""
    script = (EXAMPLES / "udp-echo.py").read_text()
    opt_in = [line for line in script.splitlines() if "use_wormhole()" in line]
    assert len(opt_in) == 1
    plain = tmp_path / "plain.py"
    plain.write_text(script.replace(opt_in[0] + "\n", ""))
    worm_out = run([sys.executable, str(EXAMPLES / "udp-echo.py"), str(tmp_path / "w")])
    base_out = run([sys.executable, str(plain), str(tmp_path / "b")])
    worm_kernel, worm_rest = split_kernel(worm_out)
    base_kernel, base_rest = split_kernel(base_out)
    assert (base_kernel, worm_kernel) == (DEFAULT, WORMHOLE)
    assert worm_rest == base_rest
    for node in (0, 1):
        w = (tmp_path / f"w-{node}-0.tr").read_text()
        assert w and w == (tmp_path / f"b-{node}-0.tr").read_text()


def test_kernel_stats_from_python(tmp_path):
    """_core reads the statistics of the kernel that ran inside cppyy."""
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['udp-echo.py', {str(tmp_path / 's')!r}]\n"
        f"runpy.run_path({str(EXAMPLES / 'udp-echo.py')!r})\n"
        "import ns3wormhole\n"
        "s = ns3wormhole.kernel_stats()\n"
        "print('stats', s['events_executed'], s['events_scheduled'])\n"
    )
    out = run([sys.executable, "-c", code])
    executed, scheduled = map(int, re.search(r"stats (\d+) (\d+)", out).groups())
    assert executed == event_count(out) > 50
    assert scheduled >= executed


def test_rdma_model_from_a_cppyy_script():
    """examples/rdma-incast.py drives RdmaNetwork through ns-3's own Python
    bindings; under both kernels every flow completes, and a lone flow is
    fast-forwarded, so the Wormhole run executes far fewer events."""
    script = str(EXAMPLES / "rdma-incast.py")
    base = run([sys.executable, script, "--baseline", "--mb", "16", "--senders", "1"])
    worm = run([sys.executable, script, "--mb", "16", "--senders", "1"])
    fcts = [re.findall(r"^flow \d+ \d+->\d+ fct (\d+) ns", out, re.M) for out in (base, worm)]
    assert len(fcts[0]) == len(fcts[1]) == 1
    for b, w in zip(*fcts):
        assert abs(int(w) - int(b)) / int(b) < 0.05
    assert event_count(worm) < event_count(base) / 2
    assert int(re.search(r"fast-forwards (\d+)", worm).group(1)) >= 1
