"""The fix flow is modal while it runs (issue 22 item 4): during an apply or undo, r did start a
diagnosis of the half-changed environment ("Diagnosing ... 8 of 6" above "Applying ..."),
Escape left the fix screen, and reopening it mid-undo showed the previous apply's result. Also
the step list itself: numbered in the order shown, each cause once, pip's versions."""

from __future__ import annotations

import re
import threading

from helpers import healthy, judge
from tfdoctor.fixing.planner import plan_fixes
from tfdoctor.report import build_report, load_facts_file
from tfdoctor.tui.app import make_app
from tfdoctor.tui.screens.fixes import FixScreen
from tfdoctor.tui.screens.main import MainScreen

from tui.kit import FakeApplier, Loader, drive, pin_and_root_report, problems_report, screen_text, settle
from tui.test_consistency import TESTS


class HeldApplier(FakeApplier):
    """A FakeApplier whose apply and undo wait for `release` (cleared again after each), with
    pip-like output while it waits."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.entered = threading.Event()

    def _hold(self) -> None:
        self.entered.set()
        self.release.wait(30)
        self.release.clear()
        self.entered.clear()

    def __call__(self, plan: object, fix_ids: list[str]) -> str:
        self._hold()
        return super().__call__(plan, fix_ids)

    def undo(self, prefix: str) -> str:
        self._hold()
        return super().undo(prefix)

    def output(self) -> str:
        return ("$ /venv/bin/python -m pip install 'numpy>=1.26.0'\n"
                "Collecting numpy>=1.26.0\n  Downloading numpy-2.1.3.whl (16.3 MB)\n")


async def _until(pilot, condition, tries: int = 300) -> None:  # type: ignore[no-untyped-def]
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("condition never held")


def test_r_escape_and_x_do_nothing_while_an_apply_or_undo_runs() -> None:
    """Mid-apply: r starts no diagnosis, Escape stays on the fix screen, the palette offers no
    re-run or new plan; the elapsed time ticks and pip's output shows. After it, the result is
    that apply's; mid-undo the apply's result is gone and the same keys do nothing again."""
    applier = HeldApplier()
    loader = Loader(problems_report(), judge(healthy()), problems_report())
    app = make_app(loader, applier=applier)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x", "space", "a", "y")
        await _until(pilot, applier.entered.is_set)
        for key in ("r", "escape", "x", "s", "f", "e"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, FixScreen), key
        assert loader.calls == 1 and app.fixing == "apply" and not app.running
        assert not any(app.check_action(a, ()) for a in ("rerun", "fixes", "facts", "export"))
        await pilot.pause(1.2)
        text = screen_text(app)
        # the elapsed time ticks: at least 1 s by now (more on a loaded machine)
        assert re.search(r"Applying \.\.\. [1-9]\d* s", text), text
        assert "[3 lines of output]" in text and "Downloading numpy-2.1.3.whl" in text
        assert "Diagnosing ..." not in text and "probe areas" not in text
        applier.release.set()
        await settle(pilot)
        text = screen_text(app)
        assert loader.calls == 2 and "Apply done" in text and "After:  Verdict: healthy" in text
        # The undo: the apply's result leaves the screen while it runs.
        await pilot.press("u", "y")
        await _until(pilot, applier.entered.is_set)
        for key in ("r", "escape", "x"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, FixScreen), key
        text = screen_text(app)
        assert "Undoing ..." in text and "Apply done" not in text and loader.calls == 2
        applier.release.set()
        await settle(pilot)
        text = screen_text(app)
        assert "Undo done" in text and "Apply done" not in text and loader.calls == 3
        assert "After:  Verdict: 2 problem(s)" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen), "Escape works again once the undo is done"

    drive(app, scenario, size=(100, 50))


def test_steps_numbered_as_shown_with_versions() -> None:
    """A plan whose manual driver step comes first: the screen lists the step tfdoctor applies
    first, so it is "1." and the manual one "2." ("2." was above "1."); the pip step says which
    version replaces which; the confirmation repeats the same number."""
    app = make_app(Loader(pin_and_root_report()), applier=FakeApplier())

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        text = screen_text(app)
        first, second = text.index("1. pin-python-packages"), text.index("2. blacklist-nouveau")
        assert first < second
        assert "version: numpy 1.21.0 -> >=1.26.0" in text
        await pilot.press("space", "a")
        await pilot.pause()
        assert "1. pin-python-packages" in screen_text(app)

    drive(app, scenario, size=(120, 60))


def test_each_cause_once() -> None:
    """The recorded no-GPU machine: three missing libraries, one activation-hook step. The step
    listed "fixes: cuda-library-missing, cuda-library-missing"; it names the cause once."""
    report = build_report(*load_facts_file(TESTS / "recorded/no-gpu-tf-cuda-2-21/facts.json"))
    hook = next(s for s in plan_fixes(report).steps if s.fix_id == "activation-hook-ld-library-path")
    assert hook.findings.count("cuda-library-missing") > 1, "the plan repeats it: the case"
    app = make_app(Loader(report), applier=FakeApplier())

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        text = screen_text(app)
        assert "fixes: cuda-library-missing" in text
        assert "cuda-library-missing, cuda-library-missing" not in text

    drive(app, scenario, size=(200, 60))


def test_the_diff_is_coloured() -> None:
    """A step's preview diff as the fix screen shows it (the CLI's render_step, then the
    screen's styling): added lines in the success colour, removed in the error colour, hunks
    accented, the file header bold; its commands stay plain."""
    from tfdoctor.fixing.preview import FileChange
    from tfdoctor.fixing.render import render_step
    from tfdoctor.tui.fixview import styled_step

    step = plan_fixes(problems_report()).steps[1]
    change = FileChange("/venv/bin/activate", "export A=1\nold line\n", "export A=1\nnew line\n")
    content = styled_step(render_step(2, step, [change]))
    plain = str(content)
    style = {plain[s.start:s.end]: str(s.style) for s in content.spans}
    assert style["   +new line"] == "$text-success" and style["   -old line"] == "$text-error"
    assert next(v for k, v in style.items() if k.startswith("   @@")) == "$text-accent"
    assert next(v for k, v in style.items() if k.startswith("   +++ ")) == "bold"
    assert not any(k.lstrip().startswith("$ ") for k in style), "a command was styled"


EXITS_MID_APPLY = """
import threading, time
from tui.test_fix_modal import HeldApplier, _until
from tui.kit import Loader, drive, settle, problems_report
from helpers import healthy, judge
from tfdoctor.tui.app import make_app

applier = HeldApplier()
app = make_app(Loader(problems_report(), judge(healthy()), problems_report()), applier=applier)

async def scenario(pilot):
    await settle(pilot)
    await pilot.press("x", "space", "a", "y")
    await _until(pilot, applier.entered.is_set)
    # the app exits mid-apply; the apply ends a second later, when nobody handles its end
    threading.Timer(1.0, applier.release.set).start()

drive(app, scenario, size=(100, 50))
print("exited while fixing:", app.fixing)
"""


def test_the_app_exits_even_when_it_quits_mid_apply() -> None:
    """The worker that follows an apply's output looped while `fixing` was set, which only the
    apply's end (handled by the app) clears: an app that exited first (a test that failed
    mid-apply on a loaded CI machine) never exited its process, as asyncio's shutdown joins that
    thread. The follower also stops when the app cancels its workers. Run in a child, so a
    regression fails here instead of hanging the suite."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{tests}{os.pathsep}{tests.parent / 'doctor'}"}
    try:
        done = subprocess.run([sys.executable, "-c", EXITS_MID_APPLY], env=env, cwd=tests, timeout=60,
                              capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        raise AssertionError("the app's process did not exit after quitting mid-apply") from None
    assert done.returncode == 0 and "exited while fixing: apply" in done.stdout, done.stderr[-2000:]
