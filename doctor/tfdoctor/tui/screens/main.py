"""The main screen: verdict on top, live progress, findings (root cause first), every check."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList

from tfdoctor.tui.present import checks_title, findings_title
from tfdoctor.tui.state import doctor
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
    ]

    def compose(self) -> ComposeResult:
        yield VerdictBar(id="verdict")
        yield ProgressPanel(id="progress")
        yield GpuPanel(id="gpus")
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
        findings.show(report, running)
        checks.show(report, running)
        if report is not None and not running:
            findings.border_title = findings_title(report)
            checks.border_title = checks_title(report)
        else:
            findings.border_title, checks.border_title = "Findings", "Checks"

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
