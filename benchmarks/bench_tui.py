"""Time to first paint of the TUI, measured on this machine in a pseudo-terminal.

    python benchmarks/bench_tui.py [--runs N]

Each run starts a new interpreter running the real TUI (`tfdoctor.tui.run_tui`, quick mode,
tfdoctor's own interpreter) in an 80x24 pty, and times from spawn to the first frame that shows
the verdict bar (target <= 1 s), then to the settled verdict, then quits with q.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import pexpect

SCRIPT = ("import sys; from tfdoctor.host import Host; from tfdoctor.registry import CheckConfig; "
          "from tfdoctor.tui import run_tui; sys.exit(run_tui(Host(), CheckConfig(), None))")


def one_run() -> tuple[float, float]:
    """(seconds to first paint, seconds to the settled verdict) of one new process."""
    env = {**os.environ, "TERM": "xterm-256color"}
    start = time.perf_counter()
    child = pexpect.spawn(sys.executable, ["-c", SCRIPT], env=env, dimensions=(24, 80),
                          encoding="utf-8", codec_errors="replace", timeout=30)
    child.expect(r"Diagnosing|Verdict: ")
    first = time.perf_counter() - start
    if "Verdict" not in child.after:
        child.expect("Verdict: ")
    settled = time.perf_counter() - start
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    return first, settled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    one_run()  # warm the page cache: "cold" means a new interpreter, not a cold disk
    runs = [one_run() for _ in range(args.runs)]
    firsts, settles = [r[0] for r in runs], [r[1] for r in runs]
    print("tui: time to first paint (new process, 80x24 pty, quick mode)")
    print(f"  median {statistics.median(firsts):.3f} s, min {min(firsts):.3f} s, "
          f"max {max(firsts):.3f} s over {args.runs} runs (target <= 1 s)")
    print(f"  to the settled verdict: median {statistics.median(settles):.3f} s")


if __name__ == "__main__":
    main()
