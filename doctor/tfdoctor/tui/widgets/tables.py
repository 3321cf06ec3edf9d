"""The two lists of the main screen: findings (root cause first) and one row per check."""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.widgets import DataTable, OptionList
from textual.widgets.option_list import Option

from tfdoctor.findings import CheckOutcome, Finding
from tfdoctor.registry import all_checks
from tfdoctor.report import Report
from tfdoctor.tui.present import PENDING, finding_line, status_badge


class FindingsList(OptionList):
    """Every finding in report order; an option's id is the finding's index in the report."""

    def show(self, report: Report | None, running: bool) -> None:
        highlighted = self.highlighted
        self.clear_options()
        if report is None or running:
            self.add_option(Option("Waiting for the checks ...", disabled=True))
            return
        if not report.findings:
            self.add_option(Option("No findings: every check passed.", disabled=True))
            return
        self.add_options(Option(finding_line(f, report), id=str(i))
                         for i, f in enumerate(report.findings))
        self.highlighted = min(highlighted or 0, len(report.findings) - 1)

    def finding(self, report: Report | None, option_id: str | None) -> Finding | None:
        if report is None or option_id is None:
            return None
        return report.findings[int(option_id)]


class OutcomesTable(DataTable[Content | Text]):
    """One row per registered check: pending while the run goes, then its status badge."""

    _state: tuple[Report | None, bool] = (None, True)

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True

    def show(self, report: Report | None, running: bool) -> None:
        self._state = (report, running)
        self._fill()

    def on_resize(self) -> None:
        self._fill()

    def _fill(self) -> None:
        """Rebuild the rows, the title column cut to the width (no sideways scrolling at 80)."""
        report, running = self._state
        row = self.cursor_row
        if report is None or running:
            rows = [(PENDING, spec.id, spec.title) for spec in all_checks()]
        else:
            rows = [(status_badge(o.status), o.check, o.title) for o in report.outcomes]
        id_width = max((len(r[1]) for r in rows), default=5)
        # 3 columns x 2 cells of padding, the badge, and room for the vertical scrollbar.
        title_width = max(12, self.size.width - id_width - 4 - 6 - 2)
        self.clear(columns=True)
        self.add_column("", key="badge", width=4)
        self.add_column("check", key="check", width=id_width)
        self.add_column("what it checks", key="title", width=title_width)
        for badge, check_id, title in rows:
            self.add_row(badge, Text(check_id), Text(_cut(title, title_width)), key=check_id)
        if rows:
            self.move_cursor(row=min(row, len(rows) - 1))

    def outcome(self, report: Report | None, row_key: str | None) -> CheckOutcome | None:
        if report is None or row_key is None:
            return None
        return next((o for o in report.outcomes if o.check == row_key), None)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
