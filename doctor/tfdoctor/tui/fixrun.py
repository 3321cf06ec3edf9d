"""The fix plan and its apply and undo, as the app runs them: the plan made off the UI thread
(by the diagnosis worker, with the report it hands over), one apply or undo at a time in a worker
thread, with pip's lines and the applier's status followed live off the UI thread, SIGTERM turned
into quit-after-rollback, and a fresh diagnosis after each. DoctorApp (tui/app.py) is one of
these."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App
from textual.reactive import reactive
from textual.worker import get_current_worker

from tfdoctor.tui.messages import FixesDone

if TYPE_CHECKING:
    from tfdoctor.report import Report
    from tfdoctor.tui.seams import Applier


class FixRunner(App[None]):
    """The fix half of the app's state; start_run (a new diagnosis) is the app's."""

    applier: Applier | None
    report: Any
    before: Report | None
    fix_summary: FixesDone | None
    fixing: str | None
    fix_started: float
    quit_when_fixed: bool
    fix_exit: tuple[str, bool] | None
    fix_lines: deque[str]
    fix_status: str
    _old_sigterm: Any
    planned: tuple[Any, Any, str | None] = (None, None, None)
    """(report, its fix plan or None, why there is none): the last plan made, off the UI thread."""
    plans_made = reactive(0, init=False)
    """Counts the plans a planning worker made for a report that came without one (screens that
    wait for a plan watch it); the diagnosis worker's plan comes with its report."""

    def start_run(self) -> None:
        raise NotImplementedError

    def make_plan(self, report: Report) -> None:
        """Plan the fixes of `report` with the applier's planner (the CLI's, as `tfdoctor fix`),
        in the calling thread: a worker's (the diagnosis worker plans before it hands the report
        over), never the UI thread. A plan that cannot be made is recorded with the reason."""
        plan, error = None, None
        try:
            from tfdoctor.fixing.planner import plan_fixes

            planner: Any = getattr(self.applier, "plan", None) or plan_fixes
            plan = planner(report)
        except Exception as exc:  # noqa: BLE001  (a plan that cannot be made is shown, not raised)
            error = f"{type(exc).__name__}: {exc}"
        self.planned = (report, plan, error)

    def plan_of(self, report: Report | None) -> tuple[Any, str | None] | None:
        """(the plan made for this report, why there is none); None while it is not made yet."""
        made, plan, error = self.planned
        return (plan, error) if report is not None and made is report else None

    @work(thread=True, exclusive=True, group="planning", exit_on_error=False)
    def plan_in_worker(self, report: Report) -> None:
        """Plan a report that came without a plan; plans_made tells the screens waiting for it."""
        self.make_plan(report)
        self.call_from_thread(self._plan_made)

    def _plan_made(self) -> None:
        self.plans_made += 1

    def apply_fixes(self, plan: Any, fix_ids: list[str]) -> None:
        """Apply these steps of `plan` through the injected applier, in a worker (one at a
        time); then re-run the diagnosis for the "after"."""
        if self.fixing is None and self.applier is not None:
            self.before = self.report
            self._start_fix("apply", plan, fix_ids)

    def undo_fixes(self, prefix: str) -> None:
        if self.fixing is None and self.applier is not None:
            self.before = self.report
            self._start_fix("undo", prefix, [])

    def _start_fix(self, action: str, target: Any, fix_ids: list[str]) -> None:
        # The result shown from now on is this operation's: the previous one's is dropped.
        self.fix_summary, self.fix_started = None, time.monotonic()
        self.fix_lines.clear()
        self.fix_status = ""
        self.fixing = action
        self.refresh_bindings()
        self._guard_sigterm(True)
        self._run_applier(action, target, fix_ids)
        self._follow_applier()

    @work(thread=True, group="fix-status", exit_on_error=False)
    def _follow_applier(self) -> None:
        """While the apply or undo runs: the applier's output() (it reads the journal) every
        quarter second, off the UI thread. Also stops when the app cancels its workers (it is
        exiting): the apply's end is then never handled, and the loop would keep the interpreter
        from exiting (asyncio's shutdown joins this thread)."""
        worker = get_current_worker()
        output = getattr(self.applier, "output", None)
        while callable(output) and self.fixing is not None and not worker.is_cancelled:
            text = output()
            if text != self.fix_status:
                self.call_from_thread(self._set_fix_status, text)
            time.sleep(0.25)

    def _set_fix_status(self, text: str) -> None:
        self.fix_status = text

    def _fix_line(self, line: str) -> None:
        """A line a command of the running apply wrote (called in the apply's thread)."""
        self.call_from_thread(self._add_fix_line, line)

    def _add_fix_line(self, line: str) -> None:
        self.fix_lines.append(line)

    def _guard_sigterm(self, on: bool) -> None:
        """While a fix runs, SIGTERM is the quit key: stop, wait for the restore, then exit
        (the CLI's handler would kill pip and exit at once, leaving the journal unfinished)."""
        import signal

        if threading.current_thread() is not threading.main_thread():
            return
        if on:
            def handler(_signum: int, _frame: object) -> None:
                self.call_later(self.action_quit)

            self._old_sigterm = signal.signal(signal.SIGTERM, handler)
        elif getattr(self, "_old_sigterm", None) is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None

    @work(thread=True, group="fixes", exit_on_error=False)
    def _run_applier(self, action: str, target: Any, fix_ids: list[str]) -> None:
        from tfdoctor.fixing.proc import ON_LINE

        applier: Any = self.applier
        live = ON_LINE.set(self._fix_line)  # every command the apply runs, line by line
        try:
            summary = applier(target, fix_ids) if action == "apply" else applier.undo(target)
            self.post_message(FixesDone(action, str(summary)))
        except Exception as exc:  # noqa: BLE001  (a failed fix is shown, never a crash)
            self.post_message(FixesDone(action, str(exc) or type(exc).__name__, failed=True))
        finally:
            ON_LINE.reset(live)

    def on_fixes_done(self, message: FixesDone) -> None:
        self.fix_summary, self.fixing = message, None
        self._guard_sigterm(False)
        self.refresh_bindings()
        if self.quit_when_fixed:
            verb = "Undo" if message.action == "undo" else "Fix"
            how = ("stopped" if "stopped by quit" in message.summary
                   else "failed" if message.failed else "finished")
            # run_tui prints it after the verdict, unwrapped (paths stay whole for copying).
            changed = not message.failed or "recorded as applied" in message.summary
            self.fix_exit = (f"{verb} {how}: {message.summary}", changed)
            self.exit()
            return
        self.start_run()
