"""Every case in cases/*.json, end to end: the installed `tfdoctor --quick` console script on a
fake machine (stub NVML and libcuda, a real venv with a fake TensorFlow wheel and stub CUDA
libraries), judged on its --json document and on its text report.

A case fails when a probe, a check, the root-cause ordering, the exit code or a renderer
regresses; docs/scenarios.md ("End-to-end scenarios") describes the format.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from fakegpu.e2e import load_document

from .conftest import CASES, Outcome
from .judge import check_report, check_text

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text())
NAMES = sorted(p.stem for p in CASES.glob("*.json"))
KNOWN_ISSUES = [n for n in NAMES if "expect_when_fixed" in load_document(CASES / f"{n}.json")]


@pytest.mark.parametrize("name", NAMES)
def test_scenario(name: str, scenario_outcome: Callable[[str], Outcome]) -> None:
    """The doctor reports exactly the findings, severities, root cause, verdict and exit code the
    case expects, in JSON (schema-valid) and in text, and never writes a traceback."""
    outcome = scenario_outcome(name)
    expect = outcome.doc["expect"]
    report = outcome.report
    jsonschema.validate(report, SCHEMA)
    check_report(report, expect, name)
    assert outcome.json_run.returncode == expect["exit_code"], outcome.json_run.stderr
    assert outcome.text_run.returncode == expect["exit_code"], outcome.text_run.stderr
    assert outcome.json_run.stderr == "" and outcome.text_run.stderr == ""
    check_text(outcome.text_run.stdout, report, expect, name)


# Defined only while a case records a known issue: an empty parametrization would be a skip,
# and a test skipped in CI hides nothing but still counts as not run.
if KNOWN_ISSUES:

    @pytest.mark.parametrize("name", KNOWN_ISSUES)
    @pytest.mark.xfail(
        strict=True, raises=AssertionError, reason="a known diagnosis issue: see the case's known_issue"
    )
    def test_known_issue_fixed(name: str, scenario_outcome: Callable[[str], Outcome]) -> None:
        """What the report should say once the case's known_issue is fixed; strict, so a fix makes
        this fail until the case's expectations are updated to the new, right answer."""
        outcome = scenario_outcome(name)
        verdict = outcome.report["verdict"]
        for key, value in outcome.doc["expect_when_fixed"].items():
            if key.endswith("_not"):
                assert verdict[key.removesuffix("_not")] != value
            else:
                assert verdict[key] == value
