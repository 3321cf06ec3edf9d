"""The help screen: keys, badges, and what the doctor does."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from tfdoctor.findings import CheckStatus
from tfdoctor.tui.present import status_badge

KEYS = (
    ("Enter / click", "open a finding or a check"),
    ("Tab", "move between findings and checks"),
    ("f", "facts: everything the probes learned (/ searches)"),
    ("x", "fix plan: review, apply (with confirmation), undo"),
    ("e", "export the report to a file"),
    ("r", "re-run the diagnosis"),
    ("s", "stop the run under way (what was learned stays)"),
    ("c", "copy the selected fix command (in a finding's detail)"),
    ("Escape", "back"),
    ("Ctrl+P", "command palette: tfdoctor's actions, themes and more"),
    ("q / Ctrl+C", "quit (stops a run cleanly first)"),
)
MEANING = {
    CheckStatus.PASSED: "passed", CheckStatus.WARNED: "warning", CheckStatus.FAILED: "failed",
    CheckStatus.NOT_APPLICABLE: "does not apply here", CheckStatus.CRASHED: "crashed: could not check",
    CheckStatus.COULD_NOT_CHECK: "could not check: facts not collected",
    CheckStatus.NOT_RUN: "did not run (stopped, cut short, or no GPU)",
}


class HelpScreen(ModalScreen[None]):
    """Dismissed by Escape, q or ?."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        keys = Content("\n").join(Content.assemble((f"{k:<14}", "bold $text-accent"), v)
                                  for k, v in KEYS)
        badges = Content("\n").join(Content.assemble(status_badge(s), f"  {m}")
                                    for s, m in MEANING.items())
        with VerticalScroll(id="dialog"):
            yield Static(Content.styled("tfdoctor: TensorFlow on NVIDIA GPUs", "bold"))
            yield Static("The verdict is on top; the root cause is the first finding, then "
                         "errors, warnings, info. Findings that follow from it say so.",
                         classes="muted")
            yield Static(keys, classes="block")
            yield Static(badges, classes="block")
