"""Save a document to a file the user names: asked in a dialog, never overwriting an existing
file without a second Enter, looked up and written (owner-only) in a thread worker, not on the
UI thread (a path on a hung mount blocks the worker, never the screen)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

Write = Callable[[Path], Path]
"""Writes the document to the path given (may raise OSError); returns the path written."""


class SaveScreen(ModalScreen[Path | None]):
    """A path, then `write` in a worker; dismissed with the path written, None on Escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    INPUT_ID = "save-path"

    def __init__(self, title: str, default: str, write: Write, warning: str = "") -> None:
        super().__init__()
        self.title_text, self.default, self.write, self.warning = title, default, write, warning
        self._confirmed: Path | None = None
        """The existing file a first Enter was told about: a second Enter overwrites it."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Content.styled(self.title_text, "bold"))
            if self.warning:
                yield Static(self.warning, classes="muted")
            yield Input(value=self.default, id=self.INPUT_ID)
            yield Static("Enter saves, Escape cancels.", id="save-status", classes="muted")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = Path(event.value.strip() or self.default).expanduser()
        self._say(f"Writing {path} ...", "")
        self._save(path, self._confirmed == path)

    def targets(self, path: Path) -> list[Path]:
        """Every file writing to `path` writes (asked about before any is replaced)."""
        return [path]

    @work(thread=True, exclusive=True, group="save", exit_on_error=False)
    def _save(self, path: Path, confirmed: bool) -> None:
        try:
            there = [p for p in self.targets(path) if p.exists()]
            if there and not confirmed:
                names = " and ".join(str(p.absolute()) for p in there)
                self.app.call_from_thread(self._ask, path, f"{names} exists: Enter again "
                                          "replaces it, Escape keeps it.")
                return
            written = self.write(path)
        except OSError as exc:
            why = f"Cannot write {path}: {exc.strerror or exc}"
            self.app.call_from_thread(self._say, why, "$text-error")
            return
        self.app.call_from_thread(self.dismiss, written)

    def _ask(self, path: Path, question: str) -> None:
        self._confirmed = path
        self._say(question, "$text-warning")

    def _say(self, text: str, style: str) -> None:
        self.query_one("#save-status", Static).update(Content.styled(text, style) if style
                                                      else Content(text))

    def action_cancel(self) -> None:
        self.dismiss(None)
