"""Speed figures of tfdoctor, measured on this machine (not by timed tests).

    python benchmarks/bench.py [quick] [full] [--runs N] [--pairs N] [--python PATH]

quick: `tfdoctor --quick --json` as a new process each time (cold interpreter), median of N
runs, and the heavy modules it imported (must be none of tensorflow, textual, pynvml).
full: `tfdoctor --json --python T` against benchmarks/handwritten_check.py run by T (the same
TensorFlow work written by hand), in pairs (tfdoctor, then the script; --pairs N, default 3),
T the tf-cpu test venv unless --python is given: per-pair wall and CPU times (CPU: user + system
of the process and the children it waited for), their medians and the median of the per-pair
ratios (target <= 1.15, issue 22).
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
HANDWRITTEN = Path(__file__).with_name("handwritten_check.py")


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


def run_once(argv: list[str]) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of it and its waited-for children, exit status, stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode, out


def bench_full(pairs: int, python: str | None) -> None:
    import json

    target = python or str(TF_CPU)
    doctor = [*tfdoctor_argv(), "--json", "--python", target]
    script = [target, str(HANDWRITTEN)]

    def doctor_run() -> tuple[float, float]:
        wall, cpu, rc, out = run_once(doctor)
        outcome = json.loads(out)["facts"]["smoke"]["outcome"] if out.strip() else "no output"
        if outcome != "completed":
            sys.exit(f"tfdoctor --json: smoke {outcome} (status {rc}); not a fair pair")
        return wall, cpu

    def script_run() -> tuple[float, float]:
        wall, cpu, rc, _ = run_once(script)
        if rc:
            sys.exit(f"{HANDWRITTEN.name} exited with status {rc}; not a fair pair")
        return wall, cpu

    doctor_run(), script_run()  # warm the page cache: neither side pays for a cold disk
    load = os.getloadavg()[0]
    rows = [(*doctor_run(), *script_run()) for _ in range(pairs)]
    print(f"full: tfdoctor --json --python {target}")
    print(f"  against {target} {HANDWRITTEN.relative_to(HANDWRITTEN.parents[1])}; "
          f"{pairs} pairs, load average {load:.2f} -> {os.getloadavg()[0]:.2f}")
    print("  pair   tfdoctor wall  cpu    script wall  cpu    ratio wall  cpu")
    for i, (dw, dc, sw, sc) in enumerate(rows, 1):
        print(f"  {i:<4}   {dw:9.2f} s {dc:5.2f} s  {sw:9.2f} s {sc:5.2f} s  "
              f"{dw / sw:8.2f}   {dc / sc:5.2f}")
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    wall_ratio = statistics.median(dw / sw for dw, _, sw, _ in rows)
    cpu_ratio = statistics.median(dc / sc for _, dc, _, sc in rows)
    print(f"  median {med[0]:9.2f} s {med[1]:5.2f} s  {med[2]:9.2f} s {med[3]:5.2f} s  "
          f"{wall_ratio:8.2f}   {cpu_ratio:5.2f}")
    print(f"  ratio (median of the per-pair ratios): wall {wall_ratio:.2f}, CPU {cpu_ratio:.2f} "
          f"(target <= 1.15)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", default=["quick"])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pairs", type=int, default=3, help="full: tfdoctor/script pairs")
    parser.add_argument("--python", help="target interpreter (--python) for the runs")
    args = parser.parse_args()
    for section in args.sections:
        if section == "quick":
            bench_quick(args.runs, args.python)
        elif section == "full":
            bench_full(args.pairs, args.python)
        else:
            parser.error(f"unknown section {section}")


if __name__ == "__main__":
    main()
