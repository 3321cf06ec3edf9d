"""Speed figures of tfdoctor, measured on this machine (not by timed tests).

    python benchmarks/bench.py [quick] [--runs N] [--python PATH]

quick: `tfdoctor --quick --json` as a new process each time (cold interpreter), median of N
runs, and the heavy modules it imported (must be none of tensorflow, textual, pynvml).
Other sections (smoke, tui, fleet) are added by their own modules below.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("tensorflow", "textual", "pynvml")


def tfdoctor_argv() -> list[str]:
    exe = Path(sys.executable).parent / "tfdoctor"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tfdoctor"]


def timed(argv: list[str], runs: int, env: dict[str, str] | None = None) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - start)
    return times


def heavy_imports(extra: list[str]) -> list[str]:
    """Modules of HEAVY that `tfdoctor --quick --json` imports in its own process."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "tfdoctor", "--quick", "--json",
                           *extra], capture_output=True, text=True, env=env)
    names = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
             if line.startswith("import time:")}
    return sorted(n for n in HEAVY if n in names)


def bench_quick(runs: int, python: str | None) -> None:
    extra = ["--python", python] if python else []
    argv = [*tfdoctor_argv(), "--quick", "--json", *extra]
    timed(argv, 1)  # warm the page cache: "cold" means a new interpreter, not a cold disk
    times = timed(argv, runs)
    print(f"quick: tfdoctor --quick --json {' '.join(extra)}".rstrip())
    print(f"  median {statistics.median(times):.3f} s, min {min(times):.3f} s, "
          f"max {max(times):.3f} s over {runs} runs (target <= 0.5 s)")
    print(f"  heavy modules imported: {heavy_imports(extra) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", default=["quick"])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--python", help="target interpreter (--python) for the runs")
    args = parser.parse_args()
    for section in args.sections:
        if section == "quick":
            bench_quick(args.runs, args.python)
        else:
            parser.error(f"unknown section {section}")


if __name__ == "__main__":
    main()
