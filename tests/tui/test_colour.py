"""Colour as users see it (issue 22 item 5): the main screen rendered under each colour system a
terminal may have (16 colours with TERM=xterm, 256, truecolor), the light theme and NO_COLOR,
then read back cell by cell in the colours the terminal draws (Rich's downgrade, xterm's
palette, Textual's NO_COLOR filter), and held to a WCAG-like contrast floor: badges readable
(the [--] badge was black on black at 16 colours), errors, "root cause" and the verdict at 4.5
(they were dark red on navy in the light theme), the verdict still red, and with NO_COLOR the
error tag as strong as the strongest text on its row (it was dimmer than body text)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import uuid

import pexpect
import pytest
from tfdoctor.tui.app import make_app
from tfdoctor.tui.theme import SIXTEEN
from tfdoctor.tui.widgets.tables import OutcomesTable

from tui.kit import Loader, drive, problems_report, settle
from tui.seen import Cell, find, seen_screen, text_of, worst

BADGE_FLOOR, STRONG_FLOOR = 3.0, 4.5
"""WCAG 2: 3:1 for bold text and interface marks (badges), 4.5:1 for body text; errors, the root
cause and the verdict are held to the body-text floor."""

CASES = {
    "16 colours": ({"TERM": "xterm"}, "standard", SIXTEEN.name),
    "256 colours": ({"TERM": "xterm-256color"}, "256", None),
    "truecolor": ({"TERM": "xterm-256color", "COLORTERM": "truecolor"}, "truecolor", None),
    "light theme": ({"TERM": "xterm-256color", "COLORTERM": "truecolor"}, "truecolor",
                    "textual-light"),
    "NO_COLOR": ({"TERM": "xterm-256color", "COLORTERM": "truecolor", "NO_COLOR": "1"},
                 "truecolor", None),
}


def _render(monkeypatch: pytest.MonkeyPatch, case: str) -> list[list[Cell]]:
    env, system, theme = CASES[case]
    for name in ("NO_COLOR", "COLORTERM", "TEXTUAL_COLOR_SYSTEM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    app = make_app(Loader(problems_report()))
    rows: list[list[Cell]] = []

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        # The app reads the terminal's colours as Rich does (TERM, COLORTERM).
        assert app.console.color_system == system
        if theme is not None:
            app.theme = theme  # headless: the theme a real run picks (test_xterm_run_... below)
        await settle(pilot)
        app.screen.query_one(OutcomesTable).toggle_fold()  # every badge on screen
        await pilot.pause()
        rows.extend(seen_screen(app, system))

    drive(app, scenario, size=(120, 60))
    return rows


@pytest.mark.parametrize("case", list(CASES))
def test_badges_errors_and_verdict_are_readable(monkeypatch: pytest.MonkeyPatch,
                                                 case: str) -> None:
    """Every badge, severity tag, "root cause" and the verdict clear the floor, the highlighted
    finding's included."""
    rows = _render(monkeypatch, case)
    for badge in ("[XX]", "[ok]", "[--]", "[-]"):
        found = find(rows, badge)
        assert found, badge
        floor = STRONG_FLOOR if badge == "[XX]" else BADGE_FLOOR
        assert min(worst(cells) for cells in found) >= floor, (case, badge)
    for strong in ("error   ", "root cause", "Verdict: 2 problem(s)"):
        found = find(rows, strong)
        assert found, strong
        assert min(worst(cells) for cells in found) >= STRONG_FLOOR, (case, strong)
    assert find(rows, "error   package-out-of-range")  # the highlighted finding was measured


@pytest.mark.parametrize("case", [c for c in CASES if c != "NO_COLOR"])
def test_the_verdict_bar_stays_red(monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """A verdict with problems is on a red background in every colour system (at 16 colours
    Textual's truecolor red became black)."""
    rows = _render(monkeypatch, case)
    verdict = next(row for row in rows if "Verdict:" in text_of(row))
    r, g, b = verdict[text_of(verdict).index("Verdict")].bg
    assert r - max(g, b) >= 20 and r >= 1.1 * max(g, b), (case, (r, g, b))


def test_no_color_errors_are_the_strongest_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """With NO_COLOR the error tags and "root cause" are bold and at least as contrasted as any
    other text on their row (greyed red was dimmer than the body text)."""
    rows = _render(monkeypatch, "NO_COLOR")
    for strong in ("error   ", "root cause"):
        for row in rows:
            text = text_of(row)
            start = text.find(strong)
            if start < 0 or "Findings:" in text:
                continue
            cells = row[start:start + len(strong)]
            assert all(c.bold for c in cells if not c.char.isspace()), text
            others = [c for c in row if not c.char.isspace() and c not in cells]
            assert worst(cells) >= max((worst([c]) for c in others), default=0) - 0.01, text


def test_xterm_run_draws_the_verdict_on_red(request: pytest.FixtureRequest) -> None:
    """The real binary on TERM=xterm (16 colours): it picks the 16-colour theme itself, so the
    verdict bar's background is an ANSI red (SGR 41 or 101), not black, and the error tags are
    bright red (91)."""
    mark = uuid.uuid4().hex
    env = {**os.environ, "TFDOCTOR_TEST_MARK": mark, "TERM": "xterm"}
    for name in ("NO_COLOR", "COLORTERM", "TEXTUAL_COLOR_SYSTEM"):
        env.pop(name, None)
    python = request.getfixturevalue("tf_cpu_python")
    drawn = io.StringIO()
    child = pexpect.spawn(sys.executable, ["-m", "tfdoctor", "--quick", "--python", python],
                          env=env, dimensions=(24, 80), encoding="utf-8",
                          codec_errors="replace", timeout=60)
    child.logfile_read = drawn
    child.expect(r"Verdict: (healthy|\d+ problem|incomplete)")
    verdict = child.match.group(1)
    with contextlib.suppress(pexpect.TIMEOUT):
        child.expect(pexpect.EOF, timeout=1.5)  # the rest of the first frames
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    seen = drawn.getvalue()
    sgr = set(re.findall(r"\x1b\[([0-9;]*)m", seen))
    assert not any(";38;2;" in s or s.startswith("38;2") or "48;5" in s for s in sgr), sgr
    backgrounds = {p for s in sgr for p in s.split(";") if p in {"40", "41", "42", "43", "44",
                                                                 "101", "102", "103"}}
    expected = {"healthy": "42", "incomplete": "43"}.get(verdict, "41")
    assert expected in backgrounds, (verdict, sorted(sgr))
