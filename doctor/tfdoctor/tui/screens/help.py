"""The help screen: keys, badges, and what the doctor does."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from tfdoctor.findings import CheckStatus
from tfdoctor.tui.keys import EXTRA, LIST_KEYS, help_rows
from tfdoctor.tui.present import status_badge

MEANING = {
    CheckStatus.PASSED: "passed", CheckStatus.WARNED: "warning", CheckStatus.FAILED: "failed",
    CheckStatus.NOT_APPLICABLE: "does not apply here", CheckStatus.CRASHED: "crashed: could not check",
    CheckStatus.COULD_NOT_CHECK: "could not check: facts not collected",
    CheckStatus.NOT_RUN: "did not run (stopped, cut short, or no GPU)",
}


Section = tuple[str, list[tuple[str, str]]]
"""A heading and its (keys, what they do) rows."""


def doctor_sections() -> list[Section]:
    """The keys of `tfdoctor`'s TUI, read from the BINDINGS of the app and of each screen."""
    from tfdoctor.tui.app import DoctorApp
    from tfdoctor.tui.screens.confirm import ConfirmScreen
    from tfdoctor.tui.screens.detail import DetailScreen
    from tfdoctor.tui.screens.export import ExportScreen
    from tfdoctor.tui.screens.facts import FactsScreen
    from tfdoctor.tui.screens.fixes import FixScreen
    from tfdoctor.tui.screens.main import MainScreen

    return [("Everywhere", help_rows(DoctorApp.BINDINGS)),
            ("Main screen", help_rows(MainScreen.BINDINGS)),
            ("In every list", help_rows(LIST_KEYS)),
            ("A finding's or a check's detail", help_rows(DetailScreen.BINDINGS)),
            ("Facts", help_rows(FactsScreen.BINDINGS)),
            ("Fix plan", help_rows(FixScreen.BINDINGS)),
            ("Questions (apply? undo?)", help_rows(ConfirmScreen.BINDINGS)),
            ("Export", help_rows(ExportScreen.BINDINGS)),
            ("Also", list(EXTRA))]


class HelpScreen(ModalScreen[None]):
    """Keys (from the real bindings), badges, and what the doctor does. Escape, q or ? close."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, sections: list[Section] | None = None, badges: bool = True,
                 about: str | None = None) -> None:
        super().__init__()
        self.sections = sections if sections is not None else doctor_sections()
        self.badges = badges
        self.about = about or ("The verdict is on top; the root cause is the first finding, then "
                               "errors, warnings, info. Findings that follow from it say so.")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(Content.styled("tfdoctor: TensorFlow on NVIDIA GPUs", "bold"))
            yield Static(self.about, classes="muted")
            for title, rows in self.sections:
                keys = Content("\n").join(Content.assemble((f"{k:<18} ", "bold $text-accent"), v)
                                          for k, v in rows)
                yield Static(Content.assemble((title, "bold"), "\n", keys), classes="block")
            if self.badges:
                badges = Content("\n").join(Content.assemble(status_badge(s), f"  {m}")
                                            for s, m in MEANING.items())
                yield Static(Content.assemble(("Badges", "bold"), "\n", badges), classes="block")
