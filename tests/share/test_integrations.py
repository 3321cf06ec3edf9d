"""The shipped provisioning gate and NPD config, run against the real CLI replaying facts.

The Slurm script runs under a real slurmd in tests/integrations/test_slurm.py.

A fake `tfdoctor` on PATH runs `python -m tfdoctor replay FACTS --json` (so each exit code comes
from the real CLI), and fake `scontrol` / `logger` record what the scripts asked them to do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from share_helpers import change, healthy, write_json
from tfdoctor.facts import ProbeIssue

ROOT = Path(__file__).parents[2] / "integrations"
NPD = ROOT / "kubernetes" / "tfdoctor-npd.sh"  # run for real in tests/integrations
GATE = ROOT / "provisioning" / "tfdoctor-gate.sh"

FAKE_TFDOCTOR = """#!/bin/sh
echo "$@" >> "$FAKE_LOG/tfdoctor.args"
[ -n "${FAKE_SLEEP:-}" ] && sleep "$FAKE_SLEEP"
exec "$FAKE_PYTHON" -m tfdoctor replay "$FAKE_FACTS" --json
"""
FAKE_SCONTROL = """#!/bin/sh
echo "$@" >> "$FAKE_LOG/scontrol.args"
if [ "$1 $2" = "-o show" ]; then
  echo "NodeName=$4 State=IDLE+DRAIN Reason=${FAKE_REASON:-none} [root@2026-11-22T00:00:00]"
fi
"""
FAKE_LOGGER = """#!/bin/sh
echo "$@" >> "$FAKE_LOG/logger.args"
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict[int, Path]:
    """Facts files whose replay exits 0, 1, 3, and a damaged one (exit 2)."""
    root = tmp_path_factory.mktemp("recorded")
    incomplete = change(
        healthy(), probe_issues=(ProbeIssue("xla", "timeout", "killed after 10 s"),)
    )
    files = {0: healthy(), 1: change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}), 3: incomplete}
    paths = {code: write_json(root / f"exit{code}.json", f.to_dict()) for code, f in files.items()}
    paths[2] = root / "damaged.json"
    paths[2].write_text('{"schema_version": "1"')
    return paths


def run(script: Path, tmp_path: Path, facts: Path, **env: str) -> tuple[int, str, dict[str, str]]:
    """Run a shipped script with the fakes first on PATH; returns (exit, stdout, recorded calls)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "log"
    for d in (bin_dir, log):
        d.mkdir(exist_ok=True)
    for name, text in (
        ("tfdoctor", FAKE_TFDOCTOR),
        ("scontrol", FAKE_SCONTROL),
        ("logger", FAKE_LOGGER),
    ):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    full = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE_LOG": str(log),
        "FAKE_PYTHON": sys.executable,
        "FAKE_FACTS": str(facts),
        "SLURMD_NODENAME": "gpu-n1",
        "TFDOCTOR_STATE_DIR": str(tmp_path / "state"),
        "HOME": str(tmp_path),
        **env,
    }
    proc = subprocess.run(["sh", str(script)], env=full, capture_output=True, text=True, timeout=60)
    calls = {p.stem: p.read_text() for p in log.iterdir()}
    return proc.returncode, proc.stdout, calls


def test_npd_config_is_valid_for_the_plugin():
    """What NPD's config validation checks: plugin "custom", rule timeouts within the global
    one, a default condition for every permanent rule, and the rule runs the shipped script."""
    config = json.loads((ROOT / "kubernetes" / "tfdoctor-monitor.json").read_text())
    assert config["plugin"] == "custom"
    seconds = {"s": 1, "m": 60}
    to_s = lambda t: int(t[:-1]) * seconds[t[-1]]  # noqa: E731
    conditions = {c["type"] for c in config["conditions"]}
    for rule in config["rules"]:
        assert to_s(rule["timeout"]) <= to_s(config["pluginConfig"]["timeout"])
        assert rule["type"] != "permanent" or rule["condition"] in conditions
        assert Path(rule["path"]).name == NPD.name


@pytest.mark.parametrize(
    "exit_code, strict, gate", [(0, "0", 0), (1, "0", 1), (3, "0", 0), (3, "1", 1), (2, "0", 2)]
)
def test_provisioning_gate(tmp_path, recorded, exit_code, strict, gate):
    """Provisioning fails on problems, passes "could not check" unless strict, keeps the report."""
    report = tmp_path / "report.json"
    code, _, _ = run(
        GATE, tmp_path, recorded[exit_code], TFDOCTOR_STRICT=strict, TFDOCTOR_REPORT=str(report)
    )
    assert code == gate and report.exists()
