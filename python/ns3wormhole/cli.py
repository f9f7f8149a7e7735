"""The ``ns3-wormhole`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__

DESCRIPTION = """\
ns3-wormhole: packet-level ns-3 simulation of RoCEv2 fabrics (PFC, ECN, DCQCN)
under LLM-training traffic, accelerated by the Wormhole kernel
(ns3::WormholeSimulatorImpl: port-level partitions, steady-state fast-forward,
memoized contention patterns).

Ways to use the kernel:
  * ns-3 C++ program:  link with `ns3-wormhole config --libs` and run it with
      --SimulatorImplementationType=ns3::WormholeSimulatorImpl
    or set NS_GLOBAL_VALUE="SimulatorImplementationType=ns3::WormholeSimulatorImpl".
  * an already-built ns-3 program, unchanged:  eval "$(ns3-wormhole config --env)"
  * ns-3 Python script (from ns import ns):  add `import ns3wormhole; ns3wormhole.use_wormhole()`.
"""

EPILOG = """\
examples:
  ns3-wormhole config --cflags --libs --modules core network internet
  g++ prog.cc $(ns3-wormhole config --cflags --libs --modules core network) -o prog
  ns3-wormhole info
"""


def _cmd_config(args: argparse.Namespace) -> int:
    from . import paths

    out: list[str] = []
    if args.cflags:
        out += paths.cflags()
    if args.libs:
        out += paths.libs(args.modules)
    if args.env:
        env = paths.preload_env({})
        print(f"export LD_PRELOAD='{env['LD_PRELOAD']}'")
        print(f"export NS_GLOBAL_VALUE='{env['NS_GLOBAL_VALUE']}'")
    if out:
        print(" ".join(out))
    if not (args.cflags or args.libs or args.env):
        print("nothing asked: give --cflags, --libs and/or --env", file=sys.stderr)
        return 2
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from . import _core, paths

    print(f"ns3wormhole {__version__} (native core {_core.__version__})")
    print(f"ns-3 {paths._buildinfo().NS3_VERSION}: headers {paths.ns3_include_dir()}, libraries {paths.ns3_lib_dir()}")
    print(f"kernel TypeId: {_core.kernel_type_name()}")
    for lib in paths.available_libraries():
        print(f"library: {lib}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ns3-wormhole",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "config",
        help="compiler/linker flags and environment for ns-3 C++ programs using the kernel",
        description="Print flags for compiling an ns-3 C++ program against ns3wormhole, "
        "or the environment that loads the kernel into an unchanged ns-3 binary.",
    )
    p.add_argument("--cflags", action="store_true", help="compiler flags (C++20, include dirs)")
    p.add_argument("--libs", action="store_true", help="linker flags (our libraries, ns-3 modules, rpaths)")
    p.add_argument(
        "--modules",
        nargs="+",
        default=None,
        metavar="MODULE",
        help="ns-3 modules to link (default: core network), e.g. core network internet applications",
    )
    p.add_argument("--env", action="store_true", help="shell exports: LD_PRELOAD the kernel and select it")
    p.set_defaults(func=_cmd_config)

    p = sub.add_parser("info", help="show versions and where the native libraries are")
    p.set_defaults(func=_cmd_info)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError) as exc:
        print(f"ns3-wormhole: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
