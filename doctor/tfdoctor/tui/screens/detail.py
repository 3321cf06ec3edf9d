"""A finding's detail: message, evidence, hint, fix commands, links, and the facts behind it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.style import Style
from textual.widgets import DataTable, Footer, Static

from tfdoctor.checks import all_checks
from tfdoctor.findings import CheckOutcome, Finding
from tfdoctor.fixing.model import FixStep
from tfdoctor.render_text import group_findings
from tfdoctor.report import Report
from tfdoctor.tui.fixview import numbers
from tfdoctor.tui.keys import LIST_KEYS
from tfdoctor.tui.present import AREA_SECTIONS, severity_tag, status_badge
from tfdoctor.tui.widgets.facts_tree import FactsTree
from tfdoctor.tui.widgets.verdict import VerdictBar


class CommandTable(DataTable[str]):
    """A fix's commands, one row each, never wrapped (long ones scroll sideways), one selected."""

    BINDINGS = LIST_KEYS

    def __init__(self, commands: tuple[str, ...]) -> None:
        super().__init__(show_header=False, cursor_type="row", classes="commands")
        self.commands = commands

    def on_mount(self) -> None:
        self.add_column("command", key="command")
        for n, command in enumerate(self.commands):
            self.add_row(f"$ {command}", key=str(n))
        # Mounted into a pane already laid out (the main screen's side pane), the auto height
        # is computed before the rows exist: lay out again once they do.
        self.call_after_refresh(self.refresh, layout=True)

    @property
    def selected(self) -> str:
        return self.commands[min(max(self.cursor_row, 0), len(self.commands) - 1)]


def plan_step(app: object, report: Report, finding: Finding) -> tuple[int, FixStep] | None:
    """The fix plan's step for this finding and its number on the fix screen; None when the
    plan has none, cannot be made or is not made yet. The plan is the fix screen's, made off
    the UI thread (it comes with the report: DoctorApp.make_plan), only looked up here."""
    if finding.remediation is None:  # the plan makes steps of remediations only
        return None
    plan_of = getattr(app, "plan_of", None)
    made = plan_of(report) if callable(plan_of) else None
    plan = made[0] if made else None
    if plan is None:
        return None
    index = next((i for i, s in enumerate(plan.steps) if finding.id in s.findings
                  and s.commands), None)
    return None if index is None else (numbers(plan)[index], plan.steps[index])


class DetailScreen(Screen[None]):
    """One finding (or one check with no finding: what it looks at and why)."""

    BINDINGS = [Binding("escape,backspace", "app.pop_screen", "Back"),
                Binding("c", "copy", "Copy command")]

    def __init__(self, report: Report, finding: Finding | None = None,
                 outcome: CheckOutcome | None = None) -> None:
        super().__init__()
        self.report = report
        self.parts = DetailParts(None, report, finding, outcome)
        self.finding, self.outcome = self.parts.finding, self.parts.outcome

    def compose(self) -> ComposeResult:
        self.parts.app = self.app
        yield VerdictBar(id="verdict")
        with VerticalScroll(id="detail"):
            yield from self.parts.widgets()
            sections = AREA_SECTIONS.get(self.outcome.area, ()) if self.outcome else ()
            if sections:
                yield Static(Content.styled("The facts behind it", "bold"), classes="heading")
                yield FactsTree("facts", id="detail-facts")
        yield Footer()

    def on_mount(self) -> None:
        sections = AREA_SECTIONS.get(self.outcome.area, ()) if self.outcome else ()
        for tree in self.query(FactsTree):
            tree.show(self.report.facts.to_dict(), sections=sections,
                      known=self.report.facts.known)
        self.query_one("#detail").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return bool(self.query(CommandTable)) if action == "copy" else True

    def action_copy(self) -> None:
        """Copy the selected command (OSC 52: the terminal's clipboard, over SSH too)."""
        tables = self.query(CommandTable)
        if not tables:
            return
        command = tables.first().selected
        self.app.copy_to_clipboard(command)
        self.notify(f"Copied: {command}", title="Clipboard", markup=False)


class DetailParts:
    """The widgets that show one finding (or one check): the detail screen's body, and the side
    pane of the main screen when it is wide (the same words in both places)."""

    def __init__(self, app: object, report: Report, finding: Finding | None = None,
                 outcome: CheckOutcome | None = None) -> None:
        self.app, self.report = app, report
        if finding is None and outcome is not None and outcome.findings:
            finding = next((f for f in report.findings if f.check == outcome.check), None)
        self.finding = finding
        check_id = finding.check if finding else outcome.check if outcome else ""
        self.outcome = outcome or next((o for o in report.outcomes if o.check == check_id), None)

    def widgets(self) -> ComposeResult:
        """Title, the finding's parts (message, evidence, hint, the plan's fix, links), then
        what the check looks at."""
        yield Static(self._title(), classes="title")
        if self.finding is not None:
            yield from self._finding_parts(self.finding)
        yield from self._check_parts()

    def _title(self) -> Content:
        if self.finding is not None:
            f = self.finding
            root = Content.styled("  (root cause)", "bold $text-error") if (
                f is self.report.root_cause) else Content("")
            return Content.assemble(severity_tag(f.severity), " ", (f.id, "bold"), root)
        assert self.outcome is not None
        outcome = self.outcome
        return Content.assemble(status_badge(outcome.status), " ", (outcome.check, "bold"))

    def _alike(self, f: Finding) -> list[Finding]:
        """f and the findings alike but for their subject (the findings list shows one line)."""
        return next((g for g in group_findings(self.report.findings) if f in g), [f])

    def _finding_parts(self, f: Finding) -> ComposeResult:
        alike = self._alike(f)
        yield Static(Content(f.message), classes="message")
        if f.caused_by:
            yield Static(Content.assemble(("Follows from ", "$text-muted"), (f.caused_by, "bold"),
                                          (": fix that first.", "$text-muted")))
        if f.evidence:
            yield Static(Content.styled("Evidence", "bold"), classes="heading")
            yield Static(Content("\n").join(Content.assemble((f"{k}: ", "$text-primary"), str(v))
                                             for k, v in f.evidence.items()))
        for other in alike[1:]:
            yield Static(Content.assemble(("Alike: ", "bold"), other.message), classes="message")
            yield Static(Content("\n").join(Content.assemble((f"{k}: ", "$text-primary"), str(v))
                                             for k, v in other.evidence.items()))
        if f.hint:
            yield Static(Content.styled("What to do", "bold"), classes="heading")
            yield Static(Content(f.hint))
        step = plan_step(self.app, self.report, f)
        if step is not None:  # the fix the plan applies, never a different one (issue 22)
            number, s = step
            who = ("applied by tfdoctor: x opens the fix plan" if s.automatic
                   else "needs root: run it yourself" if s.needs_root
                   else "manual: run it yourself")
            yield Static(Content.assemble(("Fix ", "bold"), (s.fix_id, "bold $text-accent"),
                                          f" (step {number} of the fix plan, {who})"),
                         classes="heading")
            yield Static(Content(s.summary))
            yield CommandTable(s.commands)
        elif f.remediation and f.remediation.commands:
            rem = f.remediation
            root = " (needs root: run it yourself)" if rem.needs_root else ""
            fix = Content.assemble(("Fix ", "bold"), (rem.fix_id, "bold $text-accent"), root)
            yield Static(fix, classes="heading")
            yield CommandTable(tuple(dict.fromkeys(
                c for g in alike if g.remediation for c in g.remediation.commands)))
        if f.links:
            yield Static(Content.styled("See", "bold"), classes="heading")
            yield Static(Content("\n").join(
                Content.styled(link, Style(link=link)) for link in f.links))

    def _check_parts(self) -> ComposeResult:
        if self.outcome is None:
            return
        spec = next((s for s in all_checks() if s.id == self.outcome.check), None)
        yield Static(Content.assemble(("Check ", "bold"), (self.outcome.check, "bold"),
                                      f" ({self.outcome.area}): {self.outcome.title}, ",
                                      status_badge(self.outcome.status)), classes="heading")
        if self.outcome.reason:  # not run / could not check: say why, never look passed
            yield Static(Content.assemble(("Why: ", "bold"), self.outcome.reason))
        if spec is not None and spec.doc:
            yield Static(Content(spec.doc), classes="doc")
