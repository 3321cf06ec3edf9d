"""The tfdoctor TUI: an app whose state is one report, made by a loader in a thread worker."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual import work
from textual.app import SystemCommand
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from tfdoctor.findings import CheckOutcome, Finding
from tfdoctor.report import Report
from tfdoctor.tui.fixrun import FixRunner
from tfdoctor.tui.messages import FixesDone, ProgressStep
from tfdoctor.tui.seams import Applier, Exporter, LoadReport, export_json

MODAL_WHILE_FIXING = frozenset({"rerun", "stop", "fixes", "facts", "export", "back"})
"""Actions refused while an apply or undo runs: no diagnosis of a half-changed environment, no
new plan, no leaving the fix screen (q stays: it stops the fix and waits for the rollback)."""


class DoctorApp(FixRunner):
    """Renders the report `load_report` makes; applies and exports only through its seams."""

    CSS_PATH = "app.tcss"
    TITLE = "tfdoctor"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help"),
        Binding("r", "rerun", "Re-run"),
        Binding("s", "stop", "Stop"),
    ]

    report: reactive[Report | None] = reactive(None, always_update=True, init=False)
    running = reactive(False, init=False)
    error: reactive[str | None] = reactive(None, init=False)
    areas_done: reactive[tuple[str, ...]] = reactive((), init=False)
    step: reactive[tuple[str, float | None, float] | None] = reactive(None, init=False)
    """The slow step under way: (name, value the runner sent, monotonic start)."""
    stopping = reactive(False, init=False)

    def __init__(self, load_report: LoadReport, applier: Applier | None = None,
                 exporter: Exporter = export_json, step_limit: float | None = None) -> None:
        super().__init__()
        self.load_report, self.applier, self.exporter = load_report, applier, exporter
        self.step_limit = step_limit
        self.cancel_event = threading.Event()
        self.outcome = "finished"
        """finished, or interrupted when the user quit during a run."""
        self.quit_when_stopped = False
        self.stopped = False
        """The last run was stopped by the user: its report is partial."""
        self.before: Report | None = None
        """The report before the last fix was applied (the fix screen's "before")."""
        self.fix_summary: FixesDone | None = None
        self.fixing: str | None = None
        """"apply" or "undo" while the applier runs (one at a time), else None."""
        self.fix_started = 0.0
        """When the running (or last) apply or undo started (monotonic): its live clock."""
        self.quit_when_fixed = False
        self.fix_exit: tuple[str, bool] | None = None
        """After quitting during a fix: what state the environment is in (one line for the
        terminal), and whether the fix changed it (then the report is from before the fix)."""
        self._old_sigterm: Any = None
        self.exported: Path | None = None
        self.fix_lines: deque[str] = deque(maxlen=200)
        """The running apply's commands' output, line by line as written (pip's, live)."""
        self.fix_status = ""
        """The applier's own account of the running apply (its output(): the step running now,
        the finished commands' logs), read by a worker thread, never on the UI thread."""

    def on_mount(self) -> None:
        from tfdoctor.tui.screens.main import MainScreen
        from tfdoctor.tui.theme import SIXTEEN, sixteen_colours

        self.register_theme(SIXTEEN)
        if sixteen_colours(self):
            self.theme = SIXTEEN.name
        self.push_screen(MainScreen())
        self.start_run()

    def get_css_variables(self) -> dict[str, str]:
        """The theme's variables; with NO_COLOR, error text is the body text's colour (and bold
        where it is shown), so that greyed it is the strongest text, never dimmer than the rest."""
        variables = super().get_css_variables()
        if self.no_color:
            variables["text-error"] = variables["foreground"]
        elif not self.current_theme.ansi and "foreground" in variables:
            # Textual's error text is 66 % error over the text colour: 5.1:1 on the dark theme's
            # background, under 4.5:1 on a highlighted row. 45 % keeps it red, and above 4.5.
            from textual.color import Color

            text, error = Color.parse(variables["foreground"]), Color.parse(variables["error"])
            variables["text-error"] = text.blend(error, 0.45).hex
        return variables

    def on_unmount(self) -> None:
        # However the app ends, a run still going is told to stop (its workers are awaited).
        self.cancel_event.set()

    def start_run(self) -> None:
        """Diagnose again in a thread worker; the screen keeps responding meanwhile."""
        if self.running:
            return
        self.cancel_event = threading.Event()
        self.error, self.areas_done, self.step, self.stopping = None, (), None, False
        self.running = True
        self.refresh_bindings()
        # Start the worker after the next frame: the probes' threads would otherwise compete
        # with the first paint for the interpreter (measured: benchmarks/bench_tui.py).
        self.call_after_refresh(self._diagnose, self.cancel_event)

    @work(thread=True, exclusive=True, group="diagnosis", exit_on_error=False)
    def _diagnose(self, cancel: threading.Event) -> Report:
        report = self.load_report(self._progress, cancel)
        self.make_plan(report)  # here, off the UI thread: the report arrives with its fix plan
        return report

    def _progress(self, name: str, value: float | None = None, *_: Any) -> None:
        """Called from probe and smoke threads; posting a message is thread-safe."""
        self.post_message(ProgressStep(str(name), value))

    def on_progress_step(self, message: ProgressStep) -> None:
        if message.value is None and not message.name.startswith("smoke"):
            if message.name not in self.areas_done:
                self.areas_done = (*self.areas_done, message.name)
            return
        started = self.step[2] if self.step and self.step[0] == message.name else time.monotonic()
        self.step = (message.name, message.value, started)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if worker.group != "diagnosis":
            return  # the fix, its status reader: only a diagnosis makes a report
        if event.state is WorkerState.SUCCESS:
            self.report = worker.result
        elif event.state is WorkerState.ERROR:
            self.error = f"{type(worker.error).__name__}: {worker.error}"
        self.stopped = self.cancel_event.is_set()
        self.running, self.stopping, self.step = False, False, None
        self.refresh_bindings()
        if self.quit_when_stopped:
            self.exit()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.fixing is not None and action in MODAL_WHILE_FIXING:
            return None  # shown greyed: the fix flow is modal until the environment settles
        if action == "stop":
            return self.running and not self.stopping
        if action == "rerun":
            return True if not self.running else None
        if action in ("facts", "export", "fixes"):
            return True if self.report is not None else None
        return True

    async def action_quit(self) -> None:
        """Quit; during a run, first stop it and wait for its child processes to end; during a
        fix, first stop it and wait until the environment is restored (then say so)."""
        if self.fixing is not None:
            if not self.quit_when_fixed:
                self.quit_when_fixed = True
                stop = getattr(self.applier, "stop", None)
                if callable(stop) and self.fixing == "apply":
                    stop()
                self.notify("Stopping the fix and restoring the environment; tfdoctor quits "
                            "when it is back as it was.", title="Quit", timeout=30)
            return
        if not self.running:
            self.exit()
            return
        self.outcome, self.quit_when_stopped = "interrupted", True
        self.action_stop()

    def action_stop(self) -> None:
        """Stop the run; what was learned so far stays on screen."""
        if self.running and not self.stopping:
            self.cancel_event.set()
            self.stopping = True
            self.refresh_bindings()

    def action_rerun(self) -> None:
        if self.fixing is None:
            self.start_run()

    def action_help(self) -> None:
        from tfdoctor.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_facts(self) -> None:
        from tfdoctor.tui.screens.facts import FactsScreen

        if self.report is not None:
            self.push_screen(FactsScreen(self.report))

    def action_fixes(self) -> None:
        from tfdoctor.tui.screens.fixes import FixScreen

        if self.report is not None and self.fixing is None:
            self.push_screen(FixScreen())

    def action_export(self) -> None:
        from tfdoctor.tui.screens.export import ExportScreen

        if self.report is not None:
            self.push_screen(ExportScreen(self.report, self.exporter), self._exported)

    def _exported(self, path: Path | None) -> None:
        if path is not None:
            self.exported = path
            # The support report writes its JSON beside the Markdown: name both, absolute.
            beside = path.with_suffix(".json")
            both = [path] + ([beside] if path.suffix == ".md" and beside.exists() else [])
            self.notify("Saved " + " and ".join(str(p.absolute()) for p in both)
                        + " (readable by you only)", title="Export", markup=False)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette (Ctrl+P): Textual's own commands, then tfdoctor's actions."""
        yield from super().get_system_commands(screen)
        ours = [("Re-run the diagnosis", "Probe and judge again", self.action_rerun, "rerun"),
                ("Stop the run", "Stop; what was learned stays", self.action_stop, "stop"),
                ("Facts", "Everything the probes learned", self.action_facts, "facts"),
                ("Fix plan", "What tfdoctor would change", self.action_fixes, "fixes"),
                ("Export the report", "Save the support report", self.action_export, "export"),
                ("Help", "tfdoctor's keys (from its bindings) and badges", self.action_help,
                 "help")]
        for title, help_text, callback, action in ours:
            if self.check_action(action, ()):
                yield SystemCommand(title, help_text, callback)

    def open_detail(self, *, finding: Finding | None = None,
                    outcome: CheckOutcome | None = None) -> None:
        from tfdoctor.tui.screens.detail import DetailScreen

        if self.report is not None:
            self.push_screen(DetailScreen(self.report, finding=finding, outcome=outcome))


def make_app(load_report: LoadReport, applier: Applier | None = None,
             exporter: Exporter = export_json, step_limit: float | None = None) -> DoctorApp:
    """The TUI over the reports `load_report` makes (the CLI's and the tests' shared factory)."""
    return DoctorApp(load_report, applier=applier, exporter=exporter, step_limit=step_limit)
