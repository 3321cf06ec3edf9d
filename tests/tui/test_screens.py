"""Pilot tests of what the TUI shows: verdict, findings, checks, detail, facts, help."""

from __future__ import annotations

import re

from helpers import healthy, judge
from textual.widgets import DataTable, Input, Static, Tree
from tfdoctor.tui.app import make_app
from tfdoctor.tui.screens.detail import DetailScreen
from tfdoctor.tui.screens.facts import FactsScreen
from tfdoctor.tui.screens.help import HelpScreen
from tfdoctor.tui.screens.main import MainScreen

from tui.kit import (
    Loader,
    crashed_report,
    drive,
    problems_report,
    root_only_report,
    screen_text,
    settle,
)


def test_verdict_and_root_cause_first() -> None:
    """The verdict settles into the report's headline and the root cause is the first finding."""
    report = problems_report()
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        text = screen_text(app)
        assert "Verdict: 2 problem(s); root cause: package-out-of-range" in text
        lines = text.splitlines()
        first = next(i for i, line in enumerate(lines)
                     if "package-out-of-range  root cause" in line)
        second = next(i for i, line in enumerate(lines) if "cuda-visible-devices-hides-all" in line)
        assert first < second
        passed = sum(o.status.value == "passed" for o in report.outcomes)
        assert f"Checks: {passed} of {len(report.outcomes)} passed" in text

    drive(app, scenario)


def test_enter_opens_the_finding_and_escape_comes_back() -> None:
    """Enter on a finding shows its message, evidence, hint, fix commands and facts."""
    report = root_only_report()
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.finding is report.findings[0]
        text = screen_text(app)
        assert "driver-not-loaded  (root cause)" in text
        assert "driver.nvml_error: NVML_ERROR_DRIVER_NOT_LOADED" in text
        assert "needs root: run it yourself" in text
        assert "$ sudo update-initramfs -u" in text
        tree = app.screen.query_one(Tree)
        assert [str(n.label).split(" ")[0] for n in tree.root.children] == ["driver"]
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)

    drive(app, scenario, size=(120, 40))


def test_a_check_row_opens_its_explanation() -> None:
    """A passed check has no finding; its row still opens what it looks at and why."""
    app = make_app(Loader(judge(healthy())))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("tab")
        assert isinstance(app.focused, DataTable)
        await pilot.press("enter")  # the passed checks are one folded row: open it
        await pilot.pause()
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.finding is None and app.screen.outcome.check == "gpus-present"
        assert "Check gpus-present (driver)" in screen_text(app)

    drive(app, scenario, size=(120, 40))


def test_mouse_click_on_a_finding_opens_it() -> None:
    """The mouse works: clicking the finding selects and opens it."""
    app = make_app(Loader(root_only_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.click("#findings", offset=(10, 1))
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)

    drive(app, scenario)


def test_crashed_check_and_failed_probe_are_rows() -> None:
    """A probe that timed out and a check that raised show as a finding and a [??] row."""
    app = make_app(Loader(crashed_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        text = screen_text(app)
        assert "Verdict: could not check everything" in text
        assert "probe-failed" in text and "check-crashed" in text
        table = app.screen.query_one(DataTable)
        table.move_cursor(row=table.get_row_index("tf-compute-table"))
        await pilot.pause()
        assert "[??]  tf-compute-table" in screen_text(app)
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert "KeyError: 'sm_90a'" in screen_text(app)

    drive(app, scenario, size=(120, 40))


def test_facts_search_filters_the_tree() -> None:
    """Typing in the facts search keeps only the matching values and says how many."""
    app = make_app(Loader(judge(healthy())))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, FactsScreen)
        await pilot.press("slash", *"cudnn_version")
        await pilot.pause()
        assert app.screen.query_one(Input).value == "cudnn_version"
        text = screen_text(app)
        assert "1 value(s) match 'cudnn_version'" in text
        assert "cudnn_version: 9.3.0" in text
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, MainScreen)

    drive(app, scenario)


def test_help_lists_keys_and_badges() -> None:
    """? opens help with every key and badge, and closes again."""
    app = make_app(Loader(judge(healthy())))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        # The help scrolls: read its blocks, not the visible part of the screen.
        text = "\n".join(str(s.content) for s in app.screen.query(Static))
        assert "fix plan: review, apply" in text and "[??]  could not check" in text
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)

    drive(app, scenario, size=(100, 40))


def test_no_color_renders_without_colour(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With NO_COLOR set the screen has no hue at all (badges carry text, not colour alone)."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        svg = app.export_screenshot()
        # Text colours (the r* classes) and cell backgrounds; not the window's frame buttons.
        colours = set(re.findall(r"-r\d+ \{ fill: #([0-9a-f]{6})", svg))
        colours |= set(re.findall(r'<rect fill="#([0-9a-f]{6})" x=', svg))
        # Grey means equal channels; Rich's default foreground #c5c8c6 is within a few steps.
        hues = {c for c in colours
                if max(bytes.fromhex(c)) - min(bytes.fromhex(c)) > 8}
        assert colours and not hues, hues

    drive(app, scenario)
