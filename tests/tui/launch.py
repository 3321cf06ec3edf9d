"""Starts the real TUI on this machine, as `tfdoctor` on a terminal will: for the pty tests.

usage: python tests/tui/launch.py [--python PATH] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import sys

from tfdoctor.host import Host
from tfdoctor.registry import CheckConfig
from tfdoctor.tui import run_tui


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    return run_tui(Host(python=args.python, timeout=args.timeout), CheckConfig(), None)


if __name__ == "__main__":
    sys.exit(main())
