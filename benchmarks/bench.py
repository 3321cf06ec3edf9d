"""Speed figures of tfdoctor, measured on this machine (not by timed tests).

    python benchmarks/bench.py [quick] [--runs N] [--python PATH]

quick: `tfdoctor --quick --json` as a new process each time (cold interpreter), median of N
runs, and the heavy modules it imported (must be none of tensorflow, textual, pynvml).
full: `tfdoctor --json` with smoke work against (bare `import tensorflow` + the smoke compute),
in the tf-cpu test venv unless --python is given (target ratio <= 1.15, issue 22).
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
TF_CPU = Path.home() / ".cache" / "tfdoctor" / "test-envs" / "tf-cpu" / "bin" / "python"


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


def bench_full(runs: int, python: str | None) -> None:
    import json

    target = python or str(TF_CPU)
    imports = timed([target, "-c", "import tensorflow"], runs)
    argv = [*tfdoctor_argv(), "--json", "--python", target]
    totals, computes = [], []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(argv, capture_output=True, text=True).stdout
        totals.append(time.perf_counter() - start)
        smoke = json.loads(out)["facts"]["smoke"]
        computes.append(sum(r["seconds"] or 0 for r in smoke["recipes"] if r["name"] != "import"))
    imp, compute, total = (statistics.median(x) for x in (imports, computes, totals))
    print(f"full: tfdoctor --json --python {target}")
    print(f"  bare import tensorflow  median {imp:.2f} s  runs {', '.join(f'{x:.2f}' for x in imports)}")
    print(f"  smoke compute           median {compute:.2f} s")
    print(f"  tfdoctor --json         median {total:.2f} s  runs {', '.join(f'{x:.2f}' for x in totals)}")
    print(f"  ratio {total / (imp + compute):.2f} (target <= 1.15)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", default=["quick"])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--python", help="target interpreter (--python) for the runs")
    args = parser.parse_args()
    for section in args.sections:
        if section == "quick":
            bench_quick(args.runs, args.python)
        elif section == "full":
            bench_full(min(args.runs, 3), args.python)
        else:
            parser.error(f"unknown section {section}")


if __name__ == "__main__":
    main()
