"""pip's output shown live while a fix applies (issue 22 item 4): fixing.proc.run_guarded tells
a line callback (its argument, or the ON_LINE context variable the TUI sets around an apply)
each line as the command writes it, and the fix screen shows the last lines while the command
still runs; the applier's status (which reads its journal) is read off the UI thread."""

from __future__ import annotations

import sys
import threading
import time

from helpers import healthy, judge
from tfdoctor.fixing.proc import ON_LINE, run_guarded
from tfdoctor.tui.app import make_app

from tui.kit import FakeApplier, Loader, drive, problems_report, screen_text, settle

SLOW = ("import time\nprint('Collecting numpy>=1.26.0')\nprint('  Downloading numpy-2.1.3.whl')"
        "\ntime.sleep({pause})\nprint('Successfully installed numpy-2.1.3', end='')")
"""A pip-like child, not unbuffered by its own argv: run_guarded must make it so."""


def test_lines_arrive_while_the_command_runs() -> None:
    """The first lines reach the callback a second before the command ends; the last line,
    without its newline, at the end; the result's output is whole as before."""
    seen: list[tuple[float, str]] = []
    start = time.monotonic()
    result = run_guarded([sys.executable, "-c", SLOW.format(pause=1.5)], timeout=30,
                         on_line=lambda line: seen.append((time.monotonic(), line)))
    ended = time.monotonic()
    assert [line for _, line in seen] == ["Collecting numpy>=1.26.0",
                                          "  Downloading numpy-2.1.3.whl",
                                          "Successfully installed numpy-2.1.3"]
    assert seen[0][0] - start < ended - start - 1.0, (seen, ended - start)
    assert result.returncode == 0 and "Downloading numpy" in result.stdout


def test_the_context_variable_reaches_calls_that_pass_no_callback() -> None:
    """apply_plan calls run_guarded without a callback: the TUI's ON_LINE, set in the applying
    thread, is what it uses; another thread does not see it."""
    seen: list[str] = []
    token = ON_LINE.set(seen.append)
    try:
        run_guarded([sys.executable, "-c", "print('a'); print('b')"], timeout=30)
        other: list[str] = []
        thread = threading.Thread(target=lambda: other.append(
            run_guarded([sys.executable, "-c", "print('c')"], timeout=30).stdout))
        thread.start()
        thread.join()
    finally:
        ON_LINE.reset(token)
    assert seen == ["a", "b"] and other == ["c\n"]


def test_a_callback_that_raises_never_breaks_the_command() -> None:
    """A viewer's bug is not the apply's: the command runs to its end and its output is kept."""
    def broken(line: str) -> None:
        raise RuntimeError(line)

    result = run_guarded([sys.executable, "-c", "print('x'); print('y')"], timeout=30,
                         on_line=broken)
    assert result.returncode == 0 and result.stdout == "x\ny\n"


class CommandApplier(FakeApplier):
    """Applies by running a real pip-like child through run_guarded (as apply_plan does), and
    records which thread asks for its status."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.status_threads: set[str] = set()

    def __call__(self, plan: object, fix_ids: list[str]) -> str:
        code = ("import os, time\nprint('Collecting numpy>=1.26.0')\n"
                "print('  Downloading numpy-2.1.3.whl')\n"
                f"while not os.path.exists({self.flag!r}): time.sleep(0.05)\n"
                "print('Successfully installed numpy-2.1.3')")
        run_guarded([sys.executable, "-c", code], timeout=60)
        return super().__call__(plan, fix_ids)

    def output(self) -> str:
        self.status_threads.add(threading.current_thread().name)
        return "running step 1 of 1: pin-python-packages\n"

    flag = ""


def test_the_fix_screen_shows_pip_lines_while_pip_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Mid-apply, pip's lines so far are on the fix screen under the step running now; the
    status was read in a worker thread, never the UI's."""
    applier = CommandApplier()
    applier.flag = str(tmp_path / "go")
    app = make_app(Loader(problems_report(), judge(healthy())), applier=applier)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("x", "space", "a", "y")
        try:
            for _ in range(200):
                if any("Downloading" in line for line in app.fix_lines):
                    break
                await pilot.pause(0.05)
            await pilot.pause(0.6)  # the screen's half-second tick
            text = screen_text(app)
            assert app.fixing == "apply"
            assert "running step 1 of 1: pin-python-packages" in text, text
            assert "[2 lines of output]" in text and "Downloading numpy-2.1.3.whl" in text, text
        finally:
            (tmp_path / "go").touch()  # the child ends whatever happened above
        await settle(pilot)
        assert "Apply done" in screen_text(app)

    drive(app, scenario, size=(120, 50))
    assert applier.status_threads and threading.main_thread().name not in applier.status_threads
