"""Not-run and could-not-check shown honestly by every renderer after a run that stopped early:
text, JSON (schema-valid), Markdown, Prometheus and fleet, for every early-stop state."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from early_stops import EARLY_STOPS, SMOKE_CHECKS, make_facts
from tfdoctor.exit_codes import exit_code_for
from tfdoctor.findings import CheckStatus
from tfdoctor.render_text import render_text
from tfdoctor.report import Report, build_report
from tfdoctor.share.fleet import load_node, summarise
from tfdoctor.share.fleet_text import render_fleet_text
from tfdoctor.share.markdown import render_markdown
from tfdoctor.share.prometheus import render_prometheus

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "report.schema.json").read_text())


def report_of(state: str) -> Report:
    return build_report(make_facts(EARLY_STOPS[state]))


def not_run(report: Report) -> list[str]:
    return [o.check for o in report.outcomes if o.status is CheckStatus.NOT_RUN]


@pytest.mark.parametrize("state", sorted(EARLY_STOPS))
def test_text_lists_what_did_not_run_with_the_reason(state: str):
    """The text report shows every not-run smoke check as [..] with its reason, never [ok]."""
    report = report_of(state)
    text = render_text(report, verbose=True)
    for o in report.outcomes:
        if o.area != "smoke":
            continue
        row = next(line for line in text.splitlines() if f" {o.check} " in line + " "
                   and line.lstrip().startswith("["))
        if o.status is CheckStatus.NOT_RUN:
            assert row.lstrip().startswith("[..]") and f"({o.reason})" in row, row
    if report.verdict == "incomplete":
        assert "did not run" in text.splitlines()[1]


@pytest.mark.parametrize("state", sorted(EARLY_STOPS))
def test_json_is_schema_valid_with_reasons_and_no_root_cause_unless_problems(state: str):
    report = report_of(state)
    doc = report.to_dict(int(exit_code_for(report)))
    jsonschema.validate(doc, SCHEMA)
    rows = {o["check"]: o for o in doc["outcomes"] if o["check"] in SMOKE_CHECKS}
    assert all(r["status"] != "passed" or r["check"] in ("smoke-gpus", "smoke-log")
               for r in rows.values()), rows
    assert all(r["reason"] for r in rows.values() if r["status"] == "not-run")
    assert (doc["verdict"]["root_cause"] is None) == (doc["verdict"]["status"] != "problems")


@pytest.mark.parametrize("state", sorted(EARLY_STOPS))
def test_markdown_marks_not_run_with_the_reason(state: str):
    report = report_of(state)
    md = render_markdown(report, int(exit_code_for(report)), "none", "2026-01-01")
    for o in report.outcomes:
        if o.status is CheckStatus.NOT_RUN:
            row = next(line for line in md.splitlines() if line.startswith(f"| `{o.check}` |"))
            assert "| not run |" in row and "passed" not in row, row


@pytest.mark.parametrize("state", sorted(EARLY_STOPS))
def test_prometheus_never_says_healthy_or_passed_for_what_did_not_run(state: str):
    report = report_of(state)
    text = render_prometheus(report, int(exit_code_for(report)), now=0.0)
    assert 'tfdoctor_verdict{status="healthy"} 0' in text
    for check in not_run(report):
        assert f'tfdoctor_check_status{{check="{check}",status="not-run"}} 1' in text
        assert f'tfdoctor_check_status{{check="{check}",status="passed"}} 0' in text
    if report.verdict != "problems":
        assert "tfdoctor_root_cause_info{" not in text


def test_fleet_lists_each_incomplete_node_with_its_unjudged_checks(tmp_path: Path):
    """A node whose run was cut short is "incomplete" in the fleet, naming what did not run."""
    for state in ("budget-during-import", "stopped-after-devices"):
        report = report_of(state)
        (tmp_path / f"{state}.json").write_text(
            json.dumps(report.to_dict(int(exit_code_for(report)))))
    summary = summarise(load_node(p) for p in sorted(tmp_path.glob("*.json")))
    assert [r["node"].rsplit("/", 1)[-1] for r in summary["incomplete"]] == [
        "budget-during-import.json", "stopped-after-devices.json"]
    assert all("smoke-tensor-cores (not-run)" in r["unjudged"] for r in summary["incomplete"])
    text = render_fleet_text(summary)
    assert "Incomplete (not run or could not check)" in text
    assert "smoke-tensor-cores (not-run)" in text
    assert summary["exit_code"] == 3
