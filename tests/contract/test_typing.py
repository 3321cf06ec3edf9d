"""The package type-checks: STYLE.md asks for mypy on the package, so a new error fails the suite.

The configuration is pyproject.toml's [tool.mypy] (files, Python version, strictness), the one a
developer runs by hand with a bare `mypy` in the repository.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_mypy_reports_no_errors():
    """mypy with the project's configuration exits 0 over doctor/tfdoctor (its output on failure)."""
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"mypy exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
