"""The field corpus through the real command: every case well formed, triaged without a crash,
schema-valid, replayable, and right where it was right when pinned.

tests/field/pinned.txt lists the cases triage gets right (benchmarks/field_accuracy.py --pin
writes it; --misses prints the others): a change that breaks one fails here. A case is never
edited to match the tool.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from tfdoctor.cli import cli

from tests.field.corpus import Case, load_cases, load_causes, score

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text())
CASES = load_cases()
CAUSES = load_causes()
PINNED = set((Path(__file__).parent / "pinned.txt").read_text().split())
"""Cases triage gets right (top-1, or the first ask for unresolved ones), written by
`python benchmarks/field_accuracy.py --pin`; each must stay right."""


def triage(case: Case, *extra: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["triage", "--json", *extra, "-"], input=case.ticket)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, json.loads(result.stdout)


def test_every_case_is_well_formed() -> None:
    """A case carries its source URL, a known category and family, and either a cause from the
    vocabulary (resolved) or what to ask for (unresolved)."""
    assert len(CASES) >= 80
    categories = set(CAUSES["categories"])
    for case in CASES:
        h = case.header
        assert re.match(r"^https?://", h["source"]), case.name
        assert h["category"] in categories, case.name
        assert re.match(r"^2\.(?:[4-9]|1\d|2[01])$", h["tf_family"]), (case.name, h["tf_family"])
        if h["resolved"]:
            assert h["cause"] in CAUSES["causes"], case.name
            assert h["resolution"] and h["fix"], case.name
        else:
            assert h["ask_for"] and set(h["ask_for"]) <= set(CAUSES["ask"]), case.name
        assert case.ticket.strip(), case.name


def test_no_duplicate_sources() -> None:
    """Each public report is one case."""
    sources = [c.header["source"] for c in CASES]
    assert len(sources) == len(set(sources))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case, tmp_path: Path) -> None:
    """Triage of the ticket text: documented exit code, schema-valid JSON, never "healthy" for a
    real problem, right as pinned, and the saved partial facts replay to the same root cause."""
    saved = tmp_path / "facts.json"
    code, report = triage(case, "--save", str(saved))
    assert code in (0, 1, 3)
    jsonschema.validate(report, SCHEMA)
    s = score(case, report, CAUSES)
    assert not s.false_healthy
    if case.name in PINNED:
        want = case.header.get("cause") or case.header.get("ask_for")
        assert s.top1, f"{case.name}: expected {want}, got {s.got}"
    replay = CliRunner().invoke(cli, ["replay", "--json", str(saved)])
    assert json.loads(replay.stdout)["verdict"]["root_cause"] == report["verdict"]["root_cause"]


def test_pinned_cases_exist() -> None:
    """The pin list names only existing cases (a renamed case cannot drop out of it silently),
    and most of the corpus."""
    assert PINNED <= {c.name for c in CASES}
    assert len(PINNED) >= 0.6 * len(CASES)
