"""The main screen: verdict on top, live progress, findings (root cause first), every check;
from WIDE columns on, the highlighted finding's or check's detail beside the lists."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList, Static

from tfdoctor.findings import CheckOutcome, Finding
from tfdoctor.tui.present import checks_title, findings_title
from tfdoctor.tui.state import doctor
from tfdoctor.tui.widgets.filter import ListFilter
from tfdoctor.tui.widgets.gpu_panel import GpuPanel
from tfdoctor.tui.widgets.progress import ProgressPanel
from tfdoctor.tui.widgets.tables import FOLD_KEY, FindingsList, OutcomesTable
from tfdoctor.tui.widgets.verdict import VerdictBar

WIDE = 140
"""From this many columns on, the lists and the detail are side by side (as harlequin, posting
and lazygit do); below, Enter opens the detail as a screen of its own."""


class MainScreen(Screen[None]):
    """What `tfdoctor` shows first, from the first paint on."""

    BINDINGS = [
        Binding("f", "app.facts", "Facts"),
        Binding("x", "app.fixes", "Fix plan"),
        Binding("e", "app.export", "Export"),
        Binding("slash", "filter", "Filter", show=False),  # in help; the footer is full at 80
    ]
    needle = ""
    """The filter's text (/): the findings and checks shown contain it."""

    def compose(self) -> ComposeResult:
        yield VerdictBar(id="verdict")
        yield ProgressPanel(id="progress")
        yield GpuPanel(id="gpus")
        yield ListFilter(placeholder="filter findings and checks (id, words); Escape clears",
                         id="filter")
        with Horizontal(id="body"):
            with Vertical(id="lists"):
                findings = FindingsList(id="findings")
                findings.border_title = "Findings"
                yield findings
                checks = OutcomesTable(id="checks")
                checks.border_title = "Checks"
                yield checks
            yield VerticalScroll(id="side")
        yield Footer()

    shown_in_side: object = None
    """What the side pane shows: the finding or outcome object (None: nothing yet)."""

    def on_resize(self) -> None:
        wide = self.size.width >= WIDE
        if wide != self.has_class("-wide"):
            self.set_class(wide, "-wide")
            if wide:
                self.call_after_refresh(self._show_side_of_focus)

    def on_mount(self) -> None:
        for name in ("report", "running", "error"):
            self.watch(self.app, name, self.show_report, init=False)
        self.show_report()
        self.watch(self.app, "plans_made", self._plan_made, init=False)

    def _plan_made(self, _value: object = None) -> None:
        """A plan made late (the report came without one): the side pane shows its step."""
        self.shown_in_side = None
        if self.has_class("-wide"):
            self._show_side_of_focus()

    def show_report(self, _value: object = None) -> None:
        app = doctor(self)
        report, running = app.report, app.running
        findings, checks = self.query_one(FindingsList), self.query_one(OutcomesTable)
        findings.show(report, running, self.needle)
        checks.show(report, running, self.needle)
        if report is not None and not running:
            findings.border_title = findings_title(report)
            checks.border_title = checks_title(report)
        else:
            findings.border_title, checks.border_title = "Findings", "Checks"
        if self.needle:  # the counts stay the report's; the title says what is hidden
            findings.border_title += f" (filter {self.needle!r})"
            checks.border_title += f" ({checks.row_count} match {self.needle!r})"
        if self.has_class("-wide"):
            self.call_after_refresh(self._show_side_of_focus)

    def action_filter(self) -> None:
        self.query_one(ListFilter).open()

    def on_list_filter_narrowed(self, event: ListFilter.Narrowed) -> None:
        self.needle = event.needle
        self.show_report()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        app = doctor(self)
        finding = self.query_one(FindingsList).finding(app.report, event.option.id)
        if finding is not None:
            app.open_detail(finding=finding)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        app = doctor(self)
        table = self.query_one(OutcomesTable)
        if event.row_key.value == FOLD_KEY:
            table.toggle_fold()
            return
        outcome = table.outcome(app.report, event.row_key.value)
        if outcome is not None:
            app.open_detail(outcome=outcome)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if not self.has_class("-wide"):
            return
        app = doctor(self)
        finding = self.query_one(FindingsList).finding(app.report, event.option.id)
        if finding is not None:
            self.show_side(finding=finding)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if not self.has_class("-wide") or not self.query_one(OutcomesTable).has_focus:
            return  # the table's own rebuilds move its cursor: only the user's moves count
        app = doctor(self)
        outcome = self.query_one(OutcomesTable).outcome(app.report, event.row_key.value)
        if outcome is not None:
            self.show_side(outcome=outcome)

    def _show_side_of_focus(self) -> None:
        findings, table = self.query_one(FindingsList), self.query_one(OutcomesTable)
        app = doctor(self)
        if table.has_focus and table.row_count:
            key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
            outcome = table.outcome(app.report, key)
            if outcome is not None:
                self.show_side(outcome=outcome)
                return
        if findings.highlighted is not None and findings.option_count:
            option = findings.get_option_at_index(findings.highlighted)
            finding = findings.finding(app.report, option.id)
            if finding is not None:
                self.show_side(finding=finding)

    def show_side(self, *, finding: Finding | None = None,
                  outcome: CheckOutcome | None = None) -> None:
        """Show this finding's or check's detail in the side pane (when the screen is wide)."""
        from tfdoctor.tui.screens.detail import DetailParts

        report = doctor(self).report
        subject = finding or outcome
        if report is None or not self.has_class("-wide") or subject is self.shown_in_side:
            return
        self.shown_in_side = subject
        side = self.query_one("#side", VerticalScroll)
        side.remove_children()
        parts = list(DetailParts(self.app, report, finding, outcome).widgets())
        parts.append(Static("Enter opens it with the facts behind it", classes="muted heading"))
        side.mount(*parts)
        side.scroll_home(animate=False)
