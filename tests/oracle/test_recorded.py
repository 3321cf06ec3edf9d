"""Recorded machines (tests/recorded, benchmarks/record_machine.py) replay with today's rules,
and the recorder works with and without TensorFlow, on a fake GPU machine too."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tfdoctor.facts import Facts

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "recorded"
RECORDER = ROOT / "benchmarks" / "record_machine.py"
RUN = ROOT / "tests" / "fakegpu" / "run.py"
FIXTURES = sorted(p.name for p in RECORDED.iterdir() if (p / "facts.json").is_file())


def facts_gpu_ids(text: str) -> set[str]:
    """The shapes of the GPU identifiers in a facts document."""
    gpus = json.loads(text)["driver"]["gpus"]
    return {re.sub(r"[0-9a-f]{8}>$", "", g[k]) for g in gpus for k in ("uuid", "serial", "pci_bus_id")}


def expected_of(facts: Facts) -> dict:
    sys.path.insert(0, str(RECORDER.parent))
    try:
        import record_machine
    finally:
        sys.path.remove(str(RECORDER.parent))
    return record_machine.expected_of(facts)


@pytest.mark.parametrize("name", FIXTURES)
def test_recorded_machine_replays(name):
    """A rule change that changes a recorded machine's verdict shows here, to be judged."""
    facts = Facts.from_dict(json.loads((RECORDED / name / "facts.json").read_text()))
    expected = json.loads((RECORDED / name / "expected.json").read_text())
    assert expected_of(facts) == expected


@pytest.mark.parametrize("name", [n for n in FIXTURES if json.loads(
    (RECORDED / n / "facts.json").read_text()).get("smoke")])
def test_tensorflow_listed_what_tfdoctor_says_it_lists(name):
    """Where the recording ran the smoke child, the GPUs real TensorFlow listed in its devices
    recipe are the GPUs tfdoctor says it lists: the oracle for every recording of real hardware."""
    facts = Facts.from_dict(json.loads((RECORDED / name / "facts.json").read_text()))
    assert facts.smoke is not None
    assert any(r.name == "devices" and r.status == "passed" for r in facts.smoke.recipes)
    listed = [d for d in facts.smoke.devices if d.device_type == "GPU"]
    assert json.loads((RECORDED / name / "expected.json").read_text())["listed_gpus"] == len(listed)


def test_fixtures_are_redacted():
    """No recording names a real GPU: UUIDs, serials and PCI ids are pseudonyms ("GPU-<...>")."""
    for name in FIXTURES:
        facts = json.loads((RECORDED / name / "facts.json").read_text())
        for gpu in facts["driver"]["gpus"]:
            for key in ("uuid", "serial", "pci_bus_id"):
                assert gpu.get(key) is None or gpu[key].endswith(">"), (name, key)


def test_records_a_fake_gpu_machine_without_tensorflow(tmp_path):
    """On a machine with GPUs and no TensorFlow: driver-side facts only, identifiers replaced."""
    proc = subprocess.run([sys.executable, str(RUN), "--gpus", "2", "--", sys.executable,
                           str(RECORDER), "fake-h100x2", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "fake-h100x2"
    meta = json.loads((out / "meta.json").read_text())
    assert meta["gpus"] == 2 and meta["tensorflow"] is None and meta["smoke"] is False
    text = (out / "facts.json").read_text()
    assert "5ca1ab1e" not in text and "165322" not in text  # the fake UUIDs and serials
    assert facts_gpu_ids(text) == {"GPU-<", "<serial-", "<pci-"}
    facts = Facts.from_dict(json.loads(text))
    assert len(facts.driver.gpus) == 2 and facts.tf_loader is None
    assert json.loads((out / "expected.json").read_text()) == expected_of(facts)
    again = subprocess.run([sys.executable, str(RECORDER), "fake-h100x2", "--out", str(tmp_path)],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "exists" in again.stderr
