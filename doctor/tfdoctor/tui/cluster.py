"""The cluster TUI: one screen over one cluster document, made by a loader in a thread worker.

`tfdoctor cluster` on a terminal runs the job through the loader (the launchers of
cluster/run.py) and shows the document when it arrives; `--replay FILE` loads a saved one.
Like the main TUI, only this package imports textual, and importing tfdoctor.tui does not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive
from textual.worker import Worker, WorkerState

LoadDocument = Callable[[], dict[str, Any]]
"""Makes (or reads) the cluster document; runs in a thread worker."""
DEFAULT_EXPORT = "tfdoctor-cluster.json"


class ClusterApp(App[None]):
    """Renders the cluster document `load` makes."""

    CSS_PATH = "cluster.tcss"
    TITLE = "tfdoctor cluster"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help"),
        Binding("e", "export", "Export"),
    ]

    document: reactive[dict[str, Any] | None] = reactive(None, always_update=True, init=False)
    running = reactive(False, init=False)
    error: reactive[str | None] = reactive(None, init=False)

    def __init__(self, load: LoadDocument, doing: str, stop: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.load, self.doing, self.stop = load, doing, stop
        self.outcome = "finished"
        """finished, or interrupted when the user quit while the job ran."""
        self.failure: BaseException | None = None
        """What the loader raised, if it did."""

    def on_mount(self) -> None:
        from tfdoctor.tui.screens.cluster import ClusterScreen

        self.push_screen(ClusterScreen())
        self.running = True
        self.call_after_refresh(self._load)

    @work(thread=True, exclusive=True, group="cluster", exit_on_error=False)
    def _load(self) -> dict[str, Any]:
        return self.load()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.SUCCESS:
            self.document = event.worker.result
        elif event.state is WorkerState.ERROR:
            self.failure = event.worker.error
            self.error = f"{type(event.worker.error).__name__}: {event.worker.error}"
        else:
            return
        self.running = False

    def action_help(self) -> None:
        """The cluster's keys, read from its bindings, and what the screen shows."""
        from tfdoctor.tui.screens.cluster import ClusterScreen
        from tfdoctor.tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        from tfdoctor.tui.keys import EXTRA, LIST_KEYS, help_rows

        sections = [("Everywhere", help_rows(self.BINDINGS)),
                    ("Cluster screen", help_rows(ClusterScreen.BINDINGS)),
                    ("In every list", help_rows(LIST_KEYS)), ("Also", list(EXTRA[:2]))]
        self.push_screen(HelpScreen(sections, badges=False, about=(
            "The cluster verdict is on top; then one row per worker (the straggler marked), the "
            "all-reduce sizes, the cluster findings and the highlighted one's detail.")))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "export":
            return True if self.document is not None else None
        return True

    def watch_document(self) -> None:
        self.refresh_bindings()

    def action_export(self) -> None:
        """Save the cluster document as JSON (what `tfdoctor cluster --json` prints, and what
        `--replay` reads back)."""
        from tfdoctor.tui.screens.save import SaveScreen

        doc = self.document
        if doc is None:
            return

        def write(path: Path) -> Path:
            from tfdoctor.tui.seams import write_export

            write_export(path, json.dumps(doc, indent=2) + "\n")
            return path

        self.push_screen(SaveScreen(
            "Export the cluster report (JSON; tfdoctor cluster --replay reads it)",
            DEFAULT_EXPORT, write, "It names hosts, GPUs and versions: share it with care."),
            self._exported)

    def _exported(self, path: Path | None) -> None:
        if path is not None:
            self.notify(f"Saved {path.absolute()} (readable by you only)", title="Export",
                        markup=False)

    async def action_quit(self) -> None:
        """Quit; while the job runs, its workers are killed first (no process left behind)."""
        if self.running:
            self.outcome = "interrupted"
            if self.stop is not None:
                self.stop()
        self.exit()


def make_cluster_app(load: LoadDocument, doing: str, stop: Callable[[], None] | None = None) -> ClusterApp:
    """The cluster TUI over the document `load` makes (the CLI's and the tests' shared factory);
    `doing` says what runs while it loads; `stop` kills a running job when the user quits."""
    return ClusterApp(load, doing, stop)


def run_cluster_tui(load: LoadDocument, doing: str, fail_on: str = "error",
                    stop: Callable[[], None] | None = None) -> tuple[int, dict[str, Any] | None]:
    """Show the document live; after the TUI closes, leave its verdict on stdout.
    Returns (exit code, the document or None)."""
    from tfdoctor.cluster import view
    from tfdoctor.cluster.document import exit_code
    from tfdoctor.console import error
    from tfdoctor.exit_codes import ExitCode

    app = make_cluster_app(load, doing, stop)
    app.run()
    doc = app.document
    if app.outcome == "interrupted":
        # Never a silent 130: say what was stopped and that nothing was judged.
        error("cluster: interrupted: the job's workers were stopped before the cluster report "
              "was made; nothing was judged (exit 130)")
        return int(ExitCode.INTERRUPTED), doc
    if doc is None:
        from tfdoctor.errors import TfdoctorError

        # A tool failure (no report from srun's chief task) could not check; anything else is a bug.
        known = isinstance(app.failure, TfdoctorError)
        error(f"cluster: {app.failure}" if known else f"cluster: internal error: {app.error}")
        return int(ExitCode.INCOMPLETE if known else ExitCode.INTERNAL), None
    code = exit_code(doc, fail_on)
    doc["verdict"]["exit_code"] = int(code)
    print(f"{view.headline(doc)}\n{view.summary(doc)}\n(tfdoctor cluster --no-tui prints the whole "
          "report)", flush=True)
    return int(code), doc
