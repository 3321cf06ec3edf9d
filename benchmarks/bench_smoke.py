"""Smoke speed: bare `import tensorflow`, the smoke compute alone, and run_smoke end to end.

Usage: python benchmarks/bench_smoke.py [PYTHON]  (default: the tf-cpu test venv). Median of 3.
The issue's target: a full run <= 1.5 x (bare import + smoke compute).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from tfdoctor.host import Host
from tfdoctor.smoke import run_smoke

DEFAULT = Path.home() / ".cache" / "tfdoctor" / "test-envs" / "tf-cpu" / "bin" / "python"
RUNS = 3


def bare_import(python: str) -> float:
    start = time.perf_counter()
    subprocess.run([python, "-c", "import tensorflow"], check=True, capture_output=True)
    return time.perf_counter() - start


def smoke_run(python: str) -> tuple[float, float]:
    """(end-to-end seconds, seconds of recipe compute after the import)."""
    start = time.perf_counter()
    facts = run_smoke(Host(python=python))
    total = time.perf_counter() - start
    if facts.outcome != "completed":
        raise SystemExit(f"smoke run did not complete: {facts.outcome} {facts.exit}")
    compute = sum(r.seconds or 0.0 for r in facts.recipes if r.name != "import")
    return total, compute


def main() -> None:
    python = sys.argv[1] if len(sys.argv) > 1 else str(DEFAULT)
    imports = [bare_import(python) for _ in range(RUNS)]
    runs = [smoke_run(python) for _ in range(RUNS)]
    imp = statistics.median(imports)
    compute = statistics.median(c for _, c in runs)
    total = statistics.median(t for t, _ in runs)
    print(f"bare import tensorflow : {imp:6.2f} s  (runs: {', '.join(f'{x:.2f}' for x in imports)})")
    print(f"smoke compute alone    : {compute:6.2f} s")
    print(f"run_smoke end to end   : {total:6.2f} s  (runs: {', '.join(f'{t:.2f}' for t, _ in runs)})")
    print(f"ratio end-to-end / (import + compute): {total / (imp + compute):.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
