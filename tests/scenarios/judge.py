"""Judging one end-to-end run against its case's `expect` block (docs/scenarios.md)."""

from __future__ import annotations

import json
from typing import Any


def parse_finding(spec: str | dict[str, Any]) -> dict[str, Any]:
    """An expected finding: "severity id" or "severity id <- cause", alone or as the "finding"
    key of an object that adds "evidence", "message", "hint" and "fix"."""
    want = dict(spec) if isinstance(spec, dict) else {"finding": spec}
    head, _, cause = want.pop("finding").partition(" <- ")
    severity, finding_id = head.split()
    return want | {"id": finding_id, "severity": severity, "caused_by": cause or None}


def finding_lines(report: dict[str, Any]) -> str:
    """The report's findings in the scenario's string form, for failure messages."""
    return "\n".join(
        f"  {f['severity']} {f['id']}"
        + (f" <- {f['caused_by']}" if f["caused_by"] else "")
        + f"  {json.dumps(f['evidence'])}"
        for f in report["findings"]
    )


def check_findings(report: dict[str, Any], expected: list[Any], name: str) -> None:
    """Every finding, in report order: severity, id, caused_by, and the evidence values, message
    and hint words and fix id each expectation names."""
    got = report["findings"]
    listing = f"{name}: the report has\n{finding_lines(report)}"
    assert len(got) == len(expected), listing
    for have, spec in zip(got, expected, strict=True):
        want = parse_finding(spec)
        for key in ("severity", "id", "caused_by"):
            assert have[key] == want[key], f"{listing}\nexpected {spec}"
        where = f"{name}: {have['severity']} {have['id']}"
        for key, value in want.get("evidence", {}).items():
            assert_value(have["evidence"].get(key), value, f"{where} evidence {key}")
        for field_name in ("message", "hint"):
            for word in want.get(field_name, []):
                assert word in (have[field_name] or ""), f"{where}: {field_name} lacks {word!r}"
        if "fix" in want:
            fix = have["remediation"] and have["remediation"]["fix_id"]
            assert fix == want["fix"], f"{where}: fix {fix!r} != {want['fix']!r}"


def check_report(report: dict[str, Any], expect: dict[str, Any], name: str) -> None:
    """The --json document against a scenario's `expect` block."""
    verdict = report["verdict"]
    assert verdict["status"] == expect["verdict"], f"{name}\n{finding_lines(report)}"
    assert verdict["root_cause"] == expect["root_cause"], f"{name}\n{finding_lines(report)}"
    assert verdict["exit_code"] == expect["exit_code"], name
    check_findings(report, expect["findings"], name)
    assert_subset(report["facts"], expect.get("facts", {}), f"{name}: facts")
    assert_subset(report["config"], expect.get("config", {}), f"{name}: config")
    libraries = {lib["name"]: lib for lib in report["facts"]["libraries"]}
    assert_subset(libraries, expect.get("libraries", {}), f"{name}: libraries")


def check_text(text: str, report: dict[str, Any], expect: dict[str, Any], name: str) -> None:
    """The plain-text report: its first line is the verdict and root cause, and it names every
    error and warning of the JSON report (info findings only appear with -v)."""
    lines = text.splitlines()
    assert lines[0].startswith("Diagnosing "), f"{name}: first line names no interpreter"
    assert lines[1] == expect["headline"], f"{name}: text starts {lines[:2]}"
    for finding in report["findings"]:
        shown = any(line.split()[:2] == [finding["severity"], finding["id"]] for line in lines)
        assert shown == (finding["severity"] != "info"), (
            f"{name}: {finding['severity']} {finding['id']} {'missing from' if not shown else 'in'}"
            f" the text report"
        )


def assert_value(actual: Any, expected: Any, where: str) -> None:
    """Equality, except that a string "*tail" matches any string ending in tail."""
    if isinstance(expected, str) and expected.startswith("*"):
        assert isinstance(actual, str) and actual.endswith(expected[1:]), (
            f"{where}: {actual!r} !~ {expected!r}"
        )
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def assert_subset(actual: Any, expected: Any, where: str) -> None:
    """`actual` holds everything `expected` says (objects: the keys given; lists: item by item,
    same length)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}.{key}: missing"
            assert_subset(actual[key], value, f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), (
            f"{where}: {actual!r} != {expected!r}"
        )
        for i, value in enumerate(expected):
            assert_subset(actual[i], value, f"{where}[{i}]")
    else:
        assert_value(actual, expected, where)
