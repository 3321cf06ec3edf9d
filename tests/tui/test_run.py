"""Pilot tests of the live run: progress, stop, quit during a run, re-run, a failing loader."""

from __future__ import annotations

from helpers import healthy, judge
from tfdoctor.exit_codes import ExitCode
from tfdoctor.tui.app import make_app
from tfdoctor.tui.seams import final_words

from tui.kit import Loader, drive, problems_report, screen_text, settle


async def _until(pilot, condition, tries: int = 200) -> None:  # type: ignore[no-untyped-def]
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("condition never held")


def test_progress_streams_while_the_run_is_under_way() -> None:
    """Areas land one by one and the slow step shows with its limit, before any report."""
    loader = Loader(judge(healthy()), areas=("driver", "target"), block=True)
    app = make_app(loader, step_limit=60)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await _until(pilot, loader.entered.is_set)
        app._progress("smoke: matmul on GPU:0", 0.25)  # what the smoke runner calls
        await _until(pilot, lambda: "matmul" in screen_text(app))
        text = screen_text(app)
        assert "Diagnosing ... 2 of 8 probe areas done" in text
        assert "+ driver" in text and ". cuda-driver" in text and "+ target" in text
        assert "smoke: matmul on GPU:0" in text and "of 60 s limit" in text and "(25% done)" in text
        assert "Waiting for the checks" in text and "[..]" in text
        loader.release.set()
        await settle(pilot)
        assert "Verdict: healthy" in screen_text(app)
        assert not app.screen.query_one("#progress").display

    drive(app, scenario)


def test_q_during_a_run_cancels_waits_and_exits_130() -> None:
    """q while probing sets the cancel event, waits for the worker, exits as interrupted and
    leaves the partial report for stdout."""
    loader = Loader(problems_report(), block=True)
    app = make_app(loader)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await _until(pilot, loader.entered.is_set)
        await pilot.press("q")
        await _until(pilot, lambda: not app.is_running)

    drive(app, scenario)
    assert loader.saw_cancel
    assert app.outcome == "interrupted" and app.report is not None
    assert loader.thread is not None and not loader.thread.is_alive()
    code, text, error = final_words(app.report, app.outcome, app.error)
    assert code == ExitCode.INTERRUPTED and error is None
    assert text.splitlines()[1].startswith("Verdict: 2 problem(s)")


def test_ctrl_c_during_a_run_is_the_same_as_q() -> None:
    """Ctrl+C arrives as a key in the raw terminal: it must stop the run, not be ignored."""
    loader = Loader(problems_report(), block=True)
    app = make_app(loader)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await _until(pilot, loader.entered.is_set)
        await pilot.press("ctrl+c")
        await _until(pilot, lambda: not app.is_running)

    drive(app, scenario)
    assert loader.saw_cancel and app.outcome == "interrupted"


def test_s_stops_the_run_and_keeps_the_partial_report_on_screen() -> None:
    """s stops the run but stays: the partial report becomes the verdict; r runs again."""
    loader = Loader(problems_report(), judge(healthy()), block=True)
    app = make_app(loader)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await _until(pilot, loader.entered.is_set)
        await pilot.press("s")
        await settle(pilot)
        assert loader.saw_cancel and app.is_running and app.outcome == "finished"
        assert "Verdict: 2 problem(s)" in screen_text(app)
        assert "Stopped early, so this report is partial" in screen_text(app)
        loader.release.set()
        await pilot.press("r")
        await settle(pilot)
        assert loader.calls == 2
        assert "Verdict: healthy" in screen_text(app) and "Stopped early" not in screen_text(app)
        await pilot.press("q")

    drive(app, scenario)
    code, text, _ = final_words(app.report, app.outcome, app.error)
    # After the TUI closes, the target, the verdict and the root cause stay in the terminal.
    assert code == ExitCode.OK and text.splitlines()[1] == "Verdict: healthy"
    assert text.startswith("Diagnosing /venv/bin/python")


def test_a_failing_loader_is_shown_not_raised() -> None:
    """A bug below the TUI shows in the verdict bar; the exit code says internal error."""

    def broken(progress, cancel):  # type: ignore[no-untyped-def]
        progress("driver")
        raise RuntimeError("facts went missing")

    app = make_app(broken)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        assert "The diagnosis failed: RuntimeError: facts went missing" in screen_text(app)
        await pilot.press("q")

    drive(app, scenario)
    code, _, error = final_words(app.report, app.outcome, app.error)
    assert code == ExitCode.INTERNAL and error and "facts went missing" in error
