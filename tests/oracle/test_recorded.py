"""Recorded machines (tests/recorded, benchmarks/record_machine.py) replay with today's rules
against expectations written by hand, and the recorder works with and without TensorFlow, on a
fake GPU machine too."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
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
    """What today's rules say (benchmarks/record_machine.py writes the same into rules.json)."""
    sys.path.insert(0, str(RECORDER.parent))
    try:
        import record_machine
    finally:
        sys.path.remove(str(RECORDER.parent))
    return record_machine.expected_of(facts)


def agrees(rules: dict, expected: dict) -> dict[str, tuple]:
    """Where today's rules differ from a hand-written expectation: key -> (expected, rules)."""
    diff = {k: (expected[k], rules[k]) for k in ("verdict", "root_cause", "listed_gpus", "usable_gpus")
            if k in expected and expected[k] != rules[k]}
    if missing := set(expected.get("findings_include", ())) - set(rules["findings"]):
        diff["findings_include"] = (sorted(missing), rules["findings"])
    extra = set(rules["findings"]) - set(expected.get("findings_include", ()))
    if expected.get("findings_only") and extra:
        diff["findings_only"] = (expected["findings_include"], sorted(extra))
    return diff


@pytest.mark.parametrize("name", FIXTURES)
def test_recorded_machine_replays(name):
    """Today's rules on a recorded machine give the verdict, root cause, findings and GPU counts
    written by hand into expected.json from what TensorFlow itself reported there (never what
    the rules said: that is rules.json, and comparing with it would test the rules against
    themselves). A rule change that breaks one shows here, to be judged."""
    facts = Facts.from_dict(json.loads((RECORDED / name / "facts.json").read_text()))
    expected = json.loads((RECORDED / name / "expected.json").read_text())
    assert expected["source"].startswith("written by hand"), name
    assert agrees(expected_of(facts), expected) == {}


@pytest.mark.parametrize("name", [n for n in FIXTURES if json.loads(
    (RECORDED / n / "facts.json").read_text()).get("smoke")])
def test_tensorflow_listed_what_tfdoctor_predicts(name):
    """Where the recording ran the smoke child, tfdoctor's prediction from the static facts alone
    (the smoke results taken away) is the number of GPUs real TensorFlow listed in its devices
    recipe, and that list is the one written by hand into expected.json: the oracle for every
    recording of real hardware. (The recordings so far have no GPU: TensorFlow listed CPU:0.)"""
    from tfdoctor.checks.usable import gpu_counts

    facts = Facts.from_dict(json.loads((RECORDED / name / "facts.json").read_text()))
    assert facts.smoke is not None
    assert any(r.name == "devices" and r.status == "passed" for r in facts.smoke.recipes)
    expected = json.loads((RECORDED / name / "expected.json").read_text())
    assert [d.name for d in facts.smoke.devices] == expected["tensorflow_listed"]
    listed = [d for d in facts.smoke.devices if d.device_type == "GPU"]
    assert gpu_counts(replace(facts, smoke=None)).listed == len(listed)


def test_fixtures_are_redacted():
    """No recording names a real GPU: UUIDs, serials and PCI ids are pseudonyms ("GPU-<...>")."""
    for name in FIXTURES:
        facts = json.loads((RECORDED / name / "facts.json").read_text())
        for gpu in facts["driver"]["gpus"]:
            for key in ("uuid", "serial", "pci_bus_id"):
                assert gpu.get(key) is None or gpu[key].endswith(">"), (name, key)


def test_records_a_fake_gpu_machine_without_tensorflow(tmp_path, python_without_tf):
    """On a machine with GPUs and no TensorFlow (an interpreter known to lack it, whatever .venv
    holds): driver-side facts only, identifiers replaced, and the rules say what a person says of
    two H100s without TensorFlow. The recorder writes rules.json, never expected.json."""
    proc = subprocess.run([sys.executable, str(RUN), "--gpus", "2", "--", sys.executable,
                           str(RECORDER), "fake-h100x2", "--python", python_without_tf,
                           "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "fake-h100x2"
    meta = json.loads((out / "meta.json").read_text())
    assert meta["gpus"] == 2 and meta["tensorflow"] is None and meta["smoke"] is False
    assert meta["gpu_models"] == ["NVIDIA H100 80GB HBM3"]
    text = (out / "facts.json").read_text()
    assert "5ca1ab1e" not in text and "165322" not in text  # the fake UUIDs and serials
    assert facts_gpu_ids(text) == {"GPU-<", "<serial-", "<pci-"}
    facts = Facts.from_dict(json.loads(text))
    assert len(facts.driver.gpus) == 2 and facts.tf_loader is None
    assert not (out / "expected.json").exists()
    by_hand = {"verdict": "problems", "root_cause": "tf-not-installed",
               "findings_include": ["error tf-not-installed"], "listed_gpus": 0, "usable_gpus": 0}
    rules = json.loads((out / "rules.json").read_text())
    assert agrees(rules, by_hand) == {}
    assert rules["usable_gpus_why"] == "TensorFlow is not installed"
    again = subprocess.run([sys.executable, str(RECORDER), "fake-h100x2", "--out", str(tmp_path)],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "exists" in again.stderr


def test_findings_only_fails_on_an_extra_finding():
    """`findings_only` in expected.json: any finding beyond findings_include is a difference."""
    expected = {"findings_include": ["error tf-not-installed"], "findings_only": True}
    rules = {"findings": ["error tf-not-installed", "warning driver-old"]}
    assert agrees(rules, expected) == {"findings_only": (["error tf-not-installed"], ["warning driver-old"])}
    assert agrees({"findings": ["error tf-not-installed"]}, expected) == {}


H100_LOADER = RECORDED / "h100-driver-580" / "tf-2.21-loader"


def test_tf_loader_answers_from_a_real_driver_parse():
    """What TensorFlow 2.21's own loader answered on the lent H100 (tf-2.21-loader/README.md)
    reads back through the probe's parser: libcuda opened from the driver's folder, each library
    written down by hand as not loaded carries TensorFlow's "Could not load dynamic library"."""
    from tfdoctor.probes.tfloader import answer_of, parse_lines

    expected = json.loads((H100_LOADER / "expected.json").read_text())
    for name in ("loader.jsonl", "loader-torch-nvidia.jsonl"):
        records = parse_lines((H100_LOADER / name).read_text())
        assert records[0] == {"loader": "tsl::internal::DsoLoader"} and records[-1] == {"done": True}
        answers = {a.name: a for a in map(answer_of, records[1:-1])}
        assert answers["cuda"].path == expected["libcuda"], name
        for lib in expected["not_loaded"][:5]:
            assert answers[lib].path is None and answers[lib].error.startswith(
                "Could not load dynamic library"), (name, lib)


def test_triage_of_the_real_h100_blames_the_cuda_runtime_not_the_driver(tmp_path):
    """cudart_stub.cc says "Could not find cuda drivers on your machine" when libcudart does not
    load, as it did on the lent H100 whose driver works: triage through the CLI of that machine's
    nvidia-smi and TensorFlow's own lines names the CUDA runtime, never the driver."""
    expected = json.loads((H100_LOADER / "expected.json").read_text())
    ticket = tmp_path / "ticket.txt"
    ticket.write_text("".join((H100_LOADER / n).read_text() for n in expected["ticket"]))
    proc = subprocess.run([sys.executable, "-m", "tfdoctor", "triage", "--json", str(ticket)],
                          capture_output=True, text=True, timeout=120)
    doc = json.loads(proc.stdout)
    ids = {f["id"] for f in doc["findings"]}
    assert doc["verdict"]["root_cause"] == expected["root_cause"], doc["verdict"]
    assert not ids & set(expected["findings_exclude"]), ids
