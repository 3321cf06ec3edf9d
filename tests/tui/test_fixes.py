"""Pilot tests of the fix screen: the CLI's plan through a fake applier, and through the real planner
and applier on a copy of a cached TensorFlow venv; and of export."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import threading
import time

import pytest
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
    """The screen is the CLI's plan: each step's tags, its exact commands; the confirmation shows
    what will run; the applier gets exactly the chosen steps; the doctor re-runs for the after."""
    applier = FakeApplier()
    loader = Loader(problems_report(), judge(healthy()))
    app = make_app(loader, applier=applier)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, FixScreen)
        text = screen_text(app)
        assert "Fix plan for /venv/bin/python (venv): 2 step(s)" in text
        assert "$ /venv/bin/python -m pip install 'numpy>=1.26.0'" in text
        assert "[applied by tfdoctor, pip, reversible]" in text
        assert "activation-hook-ld-library-path.sh --cvd-from -1" in text
        await pilot.press("space", "a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "$ /venv/bin/python -m pip install 'numpy>=1.26.0'" in screen_text(app)
        await pilot.press("y")
        await settle(pilot)
        assert applier.applied == [["pin-python-packages"]]
        assert loader.calls == 2
        text = screen_text(app)
        assert "Apply done" in text and "numpy: 1.21.0 -> 2.1.3" in text
        assert "Before: Verdict: 2 problem(s)" in text and "After:  Verdict: healthy" in text
        assert "Nothing to fix" in text, "the plan is rebuilt from the new report"

    drive(app, scenario, size=(100, 40))


def test_undo_only_when_there_is_something_to_undo() -> None:
    """Declining applies nothing and leaves nothing to undo (u is not even offered); after an
    apply, u (after a yes) goes to the applier's undo and the doctor re-runs."""
    applier = FakeApplier()
    loader = Loader(problems_report())
    app = make_app(loader, applier=applier)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x", "space", "a", "n")
        await pilot.pause()
        assert isinstance(app.screen, FixScreen) and applier.applied == []
        assert app.screen.check_action("undo", ()) is False
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, FixScreen), "u opened a dialog with nothing to undo"
        await pilot.press("a", "y")
        await settle(pilot)
        assert app.screen.check_action("undo", ()) is True
        await pilot.press("u", "y")
        await settle(pilot)
        assert applier.undone == 1 and loader.calls == 3
        assert "Undo done" in screen_text(app)

    drive(app, scenario, size=(100, 40))


class BlockingApplier(FakeApplier):
    """Applies only when released: the screen is seen while an apply runs."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def __call__(self, plan: object, fix_ids: list[str]) -> str:
        self.release.wait(30)
        return super().__call__(plan, fix_ids)


def test_one_apply_at_a_time_with_a_progress_line() -> None:
    """While an apply runs, apply and undo are disabled and a second a starts nothing; the
    progress line says what runs and that quitting waits for the rollback."""
    applier = BlockingApplier()
    app = make_app(Loader(problems_report()), applier=applier)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x", "space", "a", "y")
        await pilot.pause()
        assert app.fixing == "apply"
        assert app.screen.check_action("apply", ()) is None
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, FixScreen), "a second apply was offered"
        assert "Applying ..." in screen_text(app)
        applier.release.set()
        await settle(pilot)
        assert applier.applied == [["pin-python-packages"]] and app.fixing is None
        assert "Applying ..." not in screen_text(app)

    drive(app, scenario, size=(100, 40))


def test_without_an_applier_fixes_are_shown_but_not_applied() -> None:
    """A build without an applier shows the same plan read-only and says so; a does nothing."""
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x", "space", "a")
        await pilot.pause()
        assert isinstance(app.screen, FixScreen)
        text = screen_text(app)
        assert "cannot apply fixes" in text and "pin-python-packages" in text

    drive(app, scenario, size=(100, 40))


def test_root_fixes_are_printed_not_offered() -> None:
    """A manual step (root) is a command to copy, never selectable and never applied."""
    applier = FakeApplier()
    app = make_app(Loader(root_only_report()), applier=applier)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x")
        await pilot.pause()
        assert not app.screen.query(SelectionList)
        text = screen_text(app)
        assert "Manual: run these yourself" in text and "$ sudo" in text
        assert "[manual: for you to run" in text or "for you to run" in text
        assert app.screen.check_action("apply", ()) is False
        await pilot.press("a")
        await settle(pilot)
        assert applier.applied == [] and "Apply done" not in screen_text(app)

    drive(app, scenario, size=(100, 40))


def test_export_writes_an_owner_only_json_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """e then Enter writes the report's JSON with mode 0600; over an existing file only after a
    second Enter (the first says it exists and writes nothing)."""
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
        await settle(pilot)
        said = str(app.screen.query_one("#save-status").render())
        assert f"{target} exists: Enter again replaces it" in said
        assert target.read_text() == "old"
        await pilot.press("enter")
        await settle(pilot)
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
        await settle(pilot)
        text = screen_text(app)
        assert "Cannot write" in text and "No such file or directory" in text

    drive(app, scenario, size=(100, 30))


def test_real_applier_and_exporter_seams(tmp_path, monkeypatch):
    """The TUI's real seams: the planner-backed applier finds nothing to apply on a healthy
    machine, and the exporter writes the redacted support report (Markdown + JSON, 0600)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
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
    assert "Nothing to apply" in applier(applier.plan(judge(healthy())), [])


@pytest.fixture
def broken_env(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A copy of the cached tensorflow-cpu venv with protobuf 5 (TF 2.21 needs >= 6.31.1), and
    a private state directory for the journals."""
    from fixing.cached_envs import add_pause, cached_env, copy_env

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    env = copy_env(cached_env("tf-cpu"), tmp_path / "venv")
    subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", "--no-deps", "protobuf==5.29.5"], check=True)
    add_pause(env)
    return env


def real_app(env):  # type: ignore[no-untyped-def]
    from tfdoctor.diagnose import diagnose
    from tfdoctor.host import Host
    from tfdoctor.tui.seams import PlanApplier

    host = Host(python=str(env / "bin" / "python"), env=dict(os.environ))
    return make_app(lambda _progress, _cancel: diagnose(host), applier=PlanApplier(host))


async def until(pilot, done, timeout: float = 300.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < end, "timed out"
        await pilot.pause(0.2)


@pytest.mark.slow
def test_real_planner_and_applier_apply_then_undo(broken_env):  # type: ignore[no-untyped-def]
    """The TUI's apply path with the real planner and applier on a real venv: the step shown is
    the step applied, the findings after are a subset of before, the plan and verdict refresh,
    undo is offered only then and gives the venv back byte for byte."""
    from fixing.cached_envs import differences, tree

    before = tree(broken_env)
    app = real_app(broken_env)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await until(pilot, lambda: app.report is not None and not app.running)
        first = {f.id for f in app.report.findings}
        assert "package-out-of-range" in first
        await pilot.press("x")
        await settle(pilot)
        text = screen_text(app)
        assert "pin-python-packages" in text and "install 'protobuf<8.0.0,>=6.31.1'" in text
        assert app.screen.check_action("undo", ()) is False
        await pilot.press("space", "a")
        await pilot.pause()
        assert "install 'protobuf<8.0.0,>=6.31.1'" in screen_text(app)
        await pilot.press("y")
        await until(pilot, lambda: app.fix_summary is not None and not app.running)
        assert not app.fix_summary.failed, app.fix_summary.summary
        after = {f.id for f in app.report.findings}
        assert "package-out-of-range" not in after and after <= first
        await settle(pilot)
        text = screen_text(app)
        assert "Nothing to fix" in text and "After:  Verdict:" in text, text
        assert app.screen.check_action("undo", ()) is True
        await pilot.press("u", "y")
        # The apply's summary is dropped when the undo starts (the result is the undo's).
        await until(pilot, lambda: app.fix_summary is not None
                    and app.fix_summary.action == "undo" and not app.running)
        assert not app.fix_summary.failed, app.fix_summary.summary
        assert "package-out-of-range" in {f.id for f in app.report.findings}

    drive(app, scenario, size=(250, 60))  # wide: the temporary venv's paths are long
    assert differences(broken_env, before) == []


@pytest.mark.slow
@pytest.mark.parametrize("how", ["q", "SIGTERM"])
def test_quitting_during_an_apply_waits_for_the_rollback(broken_env, tmp_path, monkeypatch, how):  # type: ignore[no-untyped-def]
    """q, or SIGTERM to tfdoctor, while pip installs (paused mid-install): pip is stopped, the
    backup restored, the app quits only then and says so; the venv is byte for byte as before
    and no child is left."""
    from fixing.cached_envs import differences, processes_using, tree

    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("TFDOCTOR_TEST_PAUSE", "install")
    monkeypatch.setenv("TFDOCTOR_TEST_PAUSE_DIR", str(marks))
    before = tree(broken_env)
    app = real_app(broken_env)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await until(pilot, lambda: app.report is not None and not app.running)
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("space", "a", "y")
        await until(pilot, lambda: (marks / "paused").exists())
        if how == "q":
            await pilot.press("q")
        else:
            os.kill(os.getpid(), signal.SIGTERM)  # the app's handler, not the default's exit
        await until(pilot, lambda: app.fix_summary is not None)

    drive(app, scenario, size=(120, 50))
    assert app.quit_when_fixed and app.fix_summary.failed
    assert "stopped by quit" in app.fix_summary.summary
    assert "byte for byte" in app.fix_summary.summary, app.fix_summary.summary
    assert differences(broken_env, before) == []
    assert processes_using(broken_env) == []
