"""Issue 22, item 6: the fix plan is made off the UI thread (by the diagnosis worker, with the
report it hands over; a report that came without one is planned in a worker), and the screens
that show it (the fix screen, a finding's detail, the wide side pane) only look it up."""

from __future__ import annotations

import threading

import tfdoctor.fixing.planner
from tfdoctor.tui.app import make_app
from tfdoctor.tui.screens.detail import DetailScreen
from tfdoctor.tui.screens.fixes import FixScreen

from tui.kit import FakeApplier, Loader, drive, problems_report, screen_text, settle


class RecordingApplier(FakeApplier):
    """FakeApplier whose planner records the thread it ran in and can wait to be released."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[threading.Thread] = []
        self.release = threading.Event()
        self.release.set()

    def plan(self, report):  # type: ignore[no-untyped-def]
        self.threads.append(threading.current_thread())
        self.release.wait(10)
        return super().plan(report)


def test_the_plan_comes_with_the_report_made_in_a_worker() -> None:
    """The diagnosis worker plans; the fix screen, the detail and the side pane show that plan
    (its step number) without planning again, and the UI thread never plans."""
    applier = RecordingApplier()
    app = make_app(Loader(problems_report()), applier=applier)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        ui = threading.current_thread()
        await settle(pilot)
        assert len(applier.threads) == 1 and applier.threads[0] is not ui
        assert "(step 1 of the fix plan, applied by tfdoctor" in screen_text(app), "side pane"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        assert "of the fix plan" in screen_text(app)
        await pilot.press("escape", "x")
        await settle(pilot)
        assert isinstance(app.screen, FixScreen)
        assert "Fix plan for /venv/bin/python (venv): 2 step(s)" in screen_text(app)
        assert len(applier.threads) == 1, "the screens looked the plan up, never made it"
        assert all(t is not ui and t is not threading.main_thread() for t in applier.threads)

    drive(app, scenario, size=(200, 60))


def test_the_cli_planner_runs_in_a_worker_too(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With no applier the app plans with the CLI's plan_fixes: in the diagnosis worker."""
    threads: list[threading.Thread] = []
    real = tfdoctor.fixing.planner.plan_fixes

    def plan_fixes(report):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        return real(report)

    monkeypatch.setattr(tfdoctor.fixing.planner, "plan_fixes", plan_fixes)
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        assert "Fix plan for /venv/bin/python (venv): 2 step(s)" in screen_text(app)
        assert threads and threading.current_thread() not in threads
        assert threading.main_thread() not in threads

    drive(app, scenario, size=(100, 40))


def test_a_report_without_a_plan_is_planned_in_a_worker_while_the_screen_says_so() -> None:
    """A report with no plan yet (none was made for it): the fix screen says the plan is being
    made, a worker makes it, and the screen shows it when it comes."""
    applier = RecordingApplier()
    app = make_app(Loader(problems_report()), applier=applier)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        ui = threading.current_thread()
        await settle(pilot)
        app.planned = (None, None, None)  # as if the report had come without its plan
        applier.release.clear()
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, FixScreen)
        assert "Making the fix plan ..." in screen_text(app)
        applier.release.set()
        await settle(pilot)
        text = screen_text(app)
        assert "Fix plan for /venv/bin/python (venv): 2 step(s)" in text, text
        assert "Making the fix plan" not in text
        assert len(applier.threads) == 2 and ui not in applier.threads

    drive(app, scenario, size=(100, 40))


def test_a_plan_that_cannot_be_made_is_shown_not_raised() -> None:
    """The planner's exception (raised in the worker) is the fix screen's heading."""

    class Broken(FakeApplier):
        def plan(self, report):  # type: ignore[no-untyped-def]
            raise ValueError("no prefix")

    app = make_app(Loader(problems_report()), applier=Broken())

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        assert "Cannot make the fix plan: ValueError: no prefix" in screen_text(app)

    drive(app, scenario, size=(100, 40))


def test_the_export_looks_for_existing_files_in_a_worker(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Whether the files exist is asked in the save worker (a hung mount blocks it, not the
    screen); an existing file is still only replaced after a second Enter."""
    from tfdoctor.tui.screens.export import ExportScreen

    threads: list[threading.Thread] = []
    real = ExportScreen.targets

    def targets(self, path):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        return real(self, path)

    monkeypatch.setattr(ExportScreen, "targets", targets)
    target = tmp_path / "report.json"
    target.write_text("old")
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        ui = threading.current_thread()
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
        assert app.exported == target and not isinstance(app.screen, ExportScreen)
        assert len(threads) == 2 and ui not in threads

    drive(app, scenario, size=(100, 30))
    assert target.read_text().startswith("{")
