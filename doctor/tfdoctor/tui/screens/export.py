"""Export: save the support report to a file only its owner can read."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tfdoctor.report import Report
from tfdoctor.tui.state import doctor

DEFAULT_NAME = "tfdoctor-report.json"


class ExportScreen(ModalScreen[Path | None]):
    """Asks for a path, writes through the app's exporter, dismisses with the path written."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, report: Report) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Content.styled("Export the report", "bold"))
            yield Static("It names paths, GPUs and package versions: share it with care.",
                         classes="muted")
            yield Input(value=DEFAULT_NAME, id="export-path")
            yield Static("Enter saves, Escape cancels.", id="export-status", classes="muted")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = Path(event.value.strip() or DEFAULT_NAME).expanduser()
        try:
            written = doctor(self).exporter(self.report, path)
        except OSError as exc:
            status = self.query_one("#export-status", Static)
            why = f"Cannot write {path}: {exc.strerror or exc}"
            status.update(Content.styled(why, "$text-error"))
            return
        self.dismiss(written)

    def action_cancel(self) -> None:
        self.dismiss(None)
