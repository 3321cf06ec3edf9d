"""The wheel built from this repo works on its own: tables and fix scripts ship inside it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_installs_and_runs(tmp_path):
    """Build the wheel, install it into a fresh venv, run tfdoctor from there (not the checkout)."""
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist),
                    str(REPO)], check=True, capture_output=True)
    wheel = next(dist.glob("tfdoctor-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    str(wheel)], check=True, capture_output=True)
    where = subprocess.run(
        [str(py), "-c", "from tfdoctor.resources import data_dir; "
         "print(data_dir('compat_tables')); print(data_dir('fixes'))"],
        check=True, capture_output=True, text=True, cwd=tmp_path).stdout.split()
    for d in where:
        assert d.startswith(str(venv)), f"{d} is not inside the installed wheel"
        assert any(Path(d).iterdir())
    proc = subprocess.run([str(venv / "bin" / "tfdoctor"), "--quick", "--json"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["facts"]["python"]["executable"].startswith(str(venv))
