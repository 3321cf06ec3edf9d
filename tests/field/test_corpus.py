"""The field corpus through the real command: every case well formed, triaged without a crash,
schema-valid, replayable, and right where it was right when pinned.

The expectation is each case's own header: the cause its report's resolution established, or what
support had to ask for, written before tfdoctor saw the case. tests/field/pinned.txt lists the
cases triage has got right (benchmarks/field_accuracy.py --pin adds to it and refuses to drop
one; --misses prints the others): a change that breaks one fails here. The README records the
floor of the whole corpus's count. A case is never edited to match the tool.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from tfdoctor.cli import cli

from tests.field.corpus import Case, Score, load_cases, load_causes, pin, read_pinned, score

HERE = Path(__file__).resolve().parent
SCHEMA = json.loads((HERE.parents[1] / "docs" / "report.schema.json").read_text())
CASES = load_cases()
CAUSES = load_causes()
PINNED = read_pinned()
"""Cases triage has got right (top-1, or the first ask for unresolved ones), added by
`python benchmarks/field_accuracy.py --pin`; each must stay right."""
SCORES: dict[str, Score] = {}
"""Each case's score as test_case found it, for the corpus-wide count."""


def readme_floor() -> int:
    """The top-1 count tests/field/README.md records for the whole corpus."""
    found = re.search(r"^Top-1 floor: (\d+) ", (HERE / "README.md").read_text(), re.MULTILINE)
    assert found, "tests/field/README.md has no 'Top-1 floor: N ' line"
    return int(found[1])


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
    s = SCORES[case.name] = score(case, report, CAUSES)
    assert not s.false_healthy
    if case.name in PINNED:
        want = case.header.get("cause") or case.header.get("ask_for")
        assert s.top1, f"{case.name}: expected {want}, got {s.got}"
    replay = CliRunner().invoke(cli, ["replay", "--json", str(saved)])
    assert json.loads(replay.stdout)["verdict"]["root_cause"] == report["verdict"]["root_cause"]


def test_pinned_cases_exist() -> None:
    """The pin list names only existing cases (a renamed case cannot drop out of it silently),
    and most of the corpus, and it was not cut below the floor the README records."""
    assert PINNED <= {c.name for c in CASES}
    assert len(PINNED) >= 0.6 * len(CASES)
    assert len(PINNED) >= readme_floor()


def test_corpus_top1_count_is_not_below_the_recorded_floor() -> None:
    """However pinned.txt is edited, the number of cases triage gets right across the corpus
    (against each case's own header) never falls below the figure recorded by hand in
    tests/field/README.md."""
    for case in CASES:
        if case.name not in SCORES:  # run alone, or test_case stopped early
            SCORES[case.name] = score(case, triage(case)[1], CAUSES)
    right = sorted(name for name, s in SCORES.items() if s.top1)
    assert len(right) >= readme_floor(), f"{len(right)} right, README floor {readme_floor()}"


def test_pin_only_adds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`field_accuracy.py --pin` adds the cases right today and refuses, writing nothing, when a
    pinned case is no longer right: the pin list cannot be rewritten to whatever passes today."""
    import tests.field.corpus as corpus

    pinned = tmp_path / "pinned.txt"
    pinned.write_text("a\nb\n")
    monkeypatch.setattr(corpus, "PINNED", pinned)
    assert pin({"a", "b", "c"}, {"a", "b", "c"}) == (["c"], [])
    assert pinned.read_text() == "a\nb\nc\n"
    assert pin({"a", "d"}, {"a", "b", "c", "d"}) == (["d"], ["b", "c"])
    assert pinned.read_text() == "a\nb\nc\n", "a refused pin writes nothing"
    assert pin({"a"}, {"a"}) == ([], []), "a pinned case outside the cases scored is not lost"
