"""Pilot tests of the fix plan (through a fake applier) and of export."""

from __future__ import annotations

import json
import os
import stat

from helpers import healthy, judge
from textual.widgets import SelectionList
from tfdoctor.tui.app import make_app
from tfdoctor.tui.screens.confirm import ConfirmScreen
from tfdoctor.tui.screens.fixes import FixScreen
from tfdoctor.tui.screens.main import MainScreen

from tui.kit import (
    FakeApplier,
    Loader,
    drive,
    problems_report,
    root_only_report,
    screen_text,
    settle,
)


def test_apply_confirms_then_shows_before_and_after() -> None:
    """Selected fixes go to the applier only after "yes"; the doctor re-runs for the after."""
    applier = FakeApplier()
    loader = Loader(problems_report(), judge(healthy()))
    app = make_app(loader, applier=applier)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, FixScreen)
        text = screen_text(app)
        assert "$ /venv/bin/python -m pip install 'numpy>=1.26.0'" in text
        assert "$ unset CUDA_VISIBLE_DEVICES" in text
        await pilot.press("space", "a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "numpy>=1.26.0" in screen_text(app)
        await pilot.press("y")
        await settle(pilot)
        assert applier.applied == [["pin-python-packages"]]
        assert loader.calls == 2
        text = screen_text(app)
        assert "Apply done" in text and "numpy: 1.21.0 -> 2.1.3" in text
        assert "Before: Verdict: 2 problem(s)" in text and "After:  Verdict: healthy" in text

    drive(app, scenario, size=(100, 40))


def test_no_does_not_apply_and_undo_goes_through_the_applier() -> None:
    """Declining applies nothing; u (after a yes) calls the applier's undo and re-runs."""
    applier = FakeApplier()
    loader = Loader(problems_report())
    app = make_app(loader, applier=applier)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x", "space", "a", "n")
        await pilot.pause()
        assert isinstance(app.screen, FixScreen) and applier.applied == []
        await pilot.press("u", "y")
        await settle(pilot)
        assert applier.undone == 1 and loader.calls == 2
        assert "Undo done" in screen_text(app)

    drive(app, scenario, size=(100, 40))


def test_without_an_applier_fixes_are_shown_but_not_applied() -> None:
    """Until the fix planner lands, the plan is read-only and says so; a does nothing."""
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x", "space", "a")
        await pilot.pause()
        assert isinstance(app.screen, FixScreen)
        assert "run the commands yourself" in screen_text(app)

    drive(app, scenario, size=(100, 40))


def test_root_fixes_are_printed_not_offered() -> None:
    """A fix that needs root is listed for a human, never as a selectable fix."""
    app = make_app(Loader(root_only_report()), applier=FakeApplier())

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x")
        await pilot.pause()
        assert not app.screen.query(SelectionList)
        text = screen_text(app)
        assert "Run these yourself (need root)" in text and "$ sudo reboot" in text

    drive(app, scenario, size=(100, 40))


def test_export_writes_an_owner_only_json_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """e then Enter writes the report's JSON with mode 0600, even over an existing file."""
    target = tmp_path / "support.json"
    target.write_text("old")
    target.chmod(0o644)
    report = problems_report()
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path").value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert app.exported == target and isinstance(app.screen, MainScreen)

    drive(app, scenario, size=(100, 30))
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert json.loads(target.read_text())["verdict"]["root_cause"] == report.root_cause.id


def test_export_to_an_unwritable_place_says_why(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A bad path is an error line in the dialog, and the dialog stays open."""
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path").value = str(tmp_path / "no" / "such" / "dir.json")
        await pilot.press("enter")
        await pilot.pause()
        text = screen_text(app)
        assert "Cannot write" in text and "No such file or directory" in text

    drive(app, scenario, size=(100, 30))


def test_real_applier_and_exporter_seams(tmp_path):
    """The TUI's real seams: the planner-backed applier finds nothing to apply on a healthy
    machine, and the exporter writes the redacted support report (Markdown + JSON, 0600)."""
    import json
    import os

    from helpers import healthy, judge
    from tfdoctor.host import Host
    from tfdoctor.tui.seams import PlanApplier, export_support_report

    written = export_support_report(judge(healthy()), tmp_path / "ticket")
    assert written.suffix == ".md" and written.read_text().startswith("#")
    doc = json.loads(written.with_suffix(".json").read_text())
    assert doc["verdict"]["status"] == "healthy"
    assert oct(os.stat(written).st_mode & 0o777) == "0o600"
    applier = PlanApplier(Host(env={"PATH": os.environ["PATH"]}))
    assert "Nothing to apply" in applier([])
