"""The ``ns3-wormhole`` console script: signal handlers first, everything else after.

Importing the command (argparse, and numpy once a scenario loads) takes a noticeable
fraction of a second; a Ctrl-C or SIGTERM in that time must end the command quietly
with its exit code (130 / 143), not with a KeyboardInterrupt traceback and death by
SIGINT. ``cli.main`` replaces these handlers with its own as soon as it runs."""

from __future__ import annotations

import signal
import sys


def _early_stop(signum: int, frame: object) -> None:
    sys.stderr.write("ns3-wormhole: interrupted\n" if signum == signal.SIGINT else "ns3-wormhole: terminated (SIGTERM)\n")
    raise SystemExit(143 if signum == signal.SIGTERM else 130)


signal.signal(signal.SIGINT, _early_stop)
signal.signal(signal.SIGTERM, _early_stop)


def main() -> int:
    from .cli import main as cli_main

    return cli_main()
