"""Reading the recorded tickets under tests/triage/data: real text, its first line naming its source."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from tfdoctor.triage.observe import PATHS

DATA = Path(__file__).resolve().parent / "data"


def ticket(name: str) -> list[str]:
    """The lines of data/<name> after its "# source:" line."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# source: "), f"{name} does not name its source"
    return lines[1:]


def observed(recogniser: ModuleType, name: str) -> list[tuple[str, Any]]:
    """(path, value) of every observation the recogniser makes on data/<name>, checked for form."""
    return [(o.path, o.value) for o in observe_all(recogniser, ticket(name))]


def observe_all(recogniser: ModuleType, lines: list[str]) -> list[Any]:
    """The recogniser's observations on lines, each checked against the observe contract."""
    out = list(recogniser.recognise(lines))
    for o in out:
        assert o.path in PATHS, o
        assert o.source == recogniser.NAME, o
        assert 1 <= o.line <= len(lines), o
    return out


def lines_of(recogniser: ModuleType, name: str) -> list[tuple[int, str]]:
    """(line, path) of every observation on data/<name>: where each fact was read."""
    return [(o.line, o.path) for o in observe_all(recogniser, ticket(name))]


def recorded_tickets(limit: int = 400) -> list[list[str]]:
    """The lines of the test tree's ticket-like files (.txt, .log; the first `limit`), as triage
    splits them: the real texts the fast paths are compared with the plain ones on."""
    from tfdoctor.triage.lines import ticket_lines
    from tfdoctor.triage.read import decode

    root = Path(__file__).resolve().parents[1]
    files = sorted(p for p in root.rglob("*") if p.suffix in (".txt", ".log") and p.is_file())
    out = []
    for path in files[:limit]:
        try:
            text = decode(path.read_bytes(), path.name)
        except Exception:  # noqa: BLE001  (not a ticket)
            continue
        out.append(list(ticket_lines([text]).lines))
    return out
