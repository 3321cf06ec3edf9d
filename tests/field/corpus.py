"""The field corpus: load the cases and score a triage report against each one.

Shared by benchmarks/field_accuracy.py (the accuracy table) and tests/field/test_corpus.py.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
PINNED = HERE / "pinned.txt"
TOP = 3


@dataclass(frozen=True)
class Case:
    """One field case: its header (what the report established) and the ticket text."""

    name: str
    header: dict[str, Any]
    ticket: str

    @property
    def resolved(self) -> bool:
        return bool(self.header.get("resolved"))

    @property
    def category(self) -> str:
        return str(self.header.get("category", "?"))


@dataclass
class Score:
    """How triage did on one case."""

    case: str
    category: str
    resolved: bool
    top1: bool
    top3: bool
    false_healthy: bool
    crashed: bool
    got: list[str] = field(default_factory=list)
    """The first findings (resolved) or ask areas (unresolved), for the report."""


def load_causes() -> dict[str, Any]:
    return tomllib.loads((HERE / "causes.toml").read_text(encoding="utf-8"))


def load_cases() -> list[Case]:
    """Every case file, sorted by name; a malformed header raises (a test pins that none is)."""
    out = []
    for path in sorted(CASES.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        _, head, body = text.split("+++\n", 2)
        out.append(Case(path.stem, tomllib.loads(head), body))
    return out


def score(case: Case, report: dict[str, Any] | None, causes: dict[str, Any]) -> Score:
    """Root cause top-1 / top-3 for resolved cases, the ask list for unresolved ones."""
    if report is None:
        return Score(case.name, case.category, case.resolved, False, False, False, True)
    verdict = report["verdict"]["status"]
    if not case.resolved:
        from tfdoctor.asks import area_of

        areas = [area_of(a["fact"]) for a in report.get("ask_for", [])]
        want = set(case.header.get("ask_for") or [])
        hit1 = bool(areas[:1]) and areas[0] in want
        return Score(case.name, case.category, False, hit1, bool(want & set(areas[:TOP])), False, False,
                     areas[:TOP])
    cause = case.header["cause"]
    info = causes["causes"].get(cause, {})
    ranked = [f for f in report["findings"] if f["severity"] != "info"]
    got = [f["id"] for f in ranked[:TOP]]
    if cause == "healthy-noise":
        ok = verdict != "problems"
        return Score(case.name, case.category, True, ok, ok, False, False, got)
    ids = set(info.get("findings") or [])
    subject = str(info.get("subject") or "").lower()

    def names(f: dict[str, Any]) -> bool:
        text = (f["message"] + " " + " ".join(map(str, f["evidence"].values()))).lower()
        return f["id"] in ids and (not subject or subject in text)

    # The finding tfdoctor ranks first (the root cause on a "problems" verdict; on a verdict
    # without errors the first warning is still what the user reads first).
    top1 = bool(ranked) and names(ranked[0])
    top3 = any(names(f) for f in ranked[:TOP])
    return Score(case.name, case.category, True, top1, top3, verdict == "healthy", False, got)


def read_pinned() -> set[str]:
    """The cases triage must keep right (tests/field/pinned.txt)."""
    return set(PINNED.read_text(encoding="utf-8").split())


def pin(right: set[str], scored: set[str]) -> tuple[list[str], list[str]]:
    """Add the cases right today (of those `scored`) to pinned.txt, never dropping one: (added,
    lost). A pinned case that is not right today is a regression to fix, not a line to delete, so
    when `lost` is not empty nothing is written."""
    pinned = read_pinned()
    lost = sorted((pinned & scored) - right)
    added = sorted(right - pinned)
    if not lost and added:
        PINNED.write_text("\n".join(sorted(pinned | right)) + "\n", encoding="utf-8")
    return added, lost
