"""The main screen: verdict on top, live progress, findings (root cause first), every check."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList

from tfdoctor.tui.present import checks_title, findings_title
from tfdoctor.tui.state import doctor
from tfdoctor.tui.widgets.filter import ListFilter
from tfdoctor.tui.widgets.gpu_panel import GpuPanel
from tfdoctor.tui.widgets.progress import ProgressPanel
from tfdoctor.tui.widgets.tables import FindingsList, OutcomesTable
from tfdoctor.tui.widgets.verdict import VerdictBar


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
        findings = FindingsList(id="findings")
        findings.border_title = "Findings"
        yield findings
        checks = OutcomesTable(id="checks")
        checks.border_title = "Checks"
        yield checks
        yield Footer()

    def on_mount(self) -> None:
        for name in ("report", "running", "error"):
            self.watch(self.app, name, self.show_report, init=False)
        self.show_report()

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
        outcome = self.query_one(OutcomesTable).outcome(app.report, event.row_key.value)
        if outcome is not None:
            app.open_detail(outcome=outcome)
