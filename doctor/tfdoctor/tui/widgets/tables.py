"""The two lists of the main screen: findings (root cause first) and one row per check."""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.widgets import DataTable, OptionList
from textual.widgets.option_list import Option

from tfdoctor.checks import all_checks
from tfdoctor.findings import CheckOutcome, CheckStatus, Finding
from tfdoctor.render_text import group_findings
from tfdoctor.report import Report
from tfdoctor.tui.keys import LIST_KEYS
from tfdoctor.tui.present import PENDING, finding_line, no_findings_text, status_badge
from tfdoctor.tui.widgets.filter import matches


class FindingsList(OptionList):
    """Every finding in report order; an option's id is the finding's index in the report."""

    BINDINGS = LIST_KEYS

    def show(self, report: Report | None, running: bool, needle: str = "") -> None:
        """The findings, errors first with the root cause on top; during a re-run the previous
        run's stay listed (under a note) until the new verdict replaces them. `needle` keeps
        the findings whose id, check, message or evidence contains it."""
        was = self.get_option_at_index(self.highlighted).id if (
            self.highlighted is not None and self.highlighted < self.option_count) else None
        self.clear_options()
        if report is None:
            self.add_option(Option("Waiting for the checks ...", disabled=True))
            return
        if running:
            self.add_option(Option("Re-running: the previous run's findings until the new verdict",
                                   disabled=True))
        if not report.findings:
            self.add_option(Option(no_findings_text(report), disabled=True))
            return
        # Findings alike but for their subject (several libraries, one fix) are one line.
        order = [i for i in display_order(report) if matches(
            needle, report.findings[i].id, report.findings[i].check, report.findings[i].message,
            *report.findings[i].evidence.values())]
        if not order:
            self.add_option(Option(f"No finding matches {needle!r} (Escape in the filter clears "
                                   "it)", disabled=True))
            return
        groups = group_findings(tuple(report.findings[i] for i in order))
        first = {id(report.findings[i]): i for i in order}
        self.add_options(Option(finding_line(g[0], report, alike=len(g) - 1),
                                id=str(first[id(g[0])])) for g in groups)
        ids = [self.get_option_at_index(i).id for i in range(self.option_count)]
        # Keep the finding that was highlighted; else the first one (the root cause).
        self.highlighted = ids.index(was) if was in ids else int(running)

    def finding(self, report: Report | None, option_id: str | None) -> Finding | None:
        if report is None or option_id is None or int(option_id) >= len(report.findings):
            return None  # an event about the previous report's options, posted before a re-run
        return report.findings[int(option_id)]


def display_order(report: Report) -> list[int]:
    """Indexes into report.findings: the root cause, then by severity (errors first), then in
    the report's order (its causal ranking) within a severity."""
    root = report.root_cause
    return sorted(range(len(report.findings)), key=lambda i: (
        report.findings[i] is not root, -report.findings[i].severity.rank, i))


STATUS_ORDER = (CheckStatus.FAILED, CheckStatus.CRASHED, CheckStatus.COULD_NOT_CHECK,
                CheckStatus.WARNED, CheckStatus.NOT_RUN, CheckStatus.PASSED,
                CheckStatus.NOT_APPLICABLE)
"""The checks table's order once a report is in: what failed or could not be judged first, then
warnings, then what did not run, passed or does not apply (registry order within each)."""


FOLDED = (CheckStatus.PASSED, CheckStatus.NOT_APPLICABLE)
"""The statuses folded into one row under the rest (Enter or a click on it shows them)."""
FOLD_KEY = "-fold-"
"""The row key of that row (no check id starts with a dash)."""


class OutcomesTable(DataTable[Content | Text]):
    """One row per registered check: pending in registry order while the run goes, then its
    status badge, failing and warning checks first, passed and not-applicable ones folded into
    one row "N passed, M not applicable" until it is opened."""

    BINDINGS = LIST_KEYS
    _state: tuple[Report | None, bool] = (None, True)
    _needle = ""
    folded = True
    """Whether the passed and not-applicable checks are one row (a filter shows all matches)."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True

    def show(self, report: Report | None, running: bool, needle: str = "") -> None:
        """The rows; `needle` keeps those whose check id, title or reason contains it."""
        self._state, self._needle = (report, running), needle
        self._fill()

    def toggle_fold(self) -> None:
        """Open or close the folded row, the cursor staying on it."""
        self.folded = not self.folded
        self._fill()
        keys = [r.key.value for r in self.ordered_rows]
        if FOLD_KEY in keys:
            self.move_cursor(row=keys.index(FOLD_KEY))

    def on_resize(self) -> None:
        if self.size.width != self._width:  # a height change keeps the rows as they are
            self._fill()

    _width = -1

    def _fill(self) -> None:
        """Rebuild the rows, the title column cut to the width (no sideways scrolling at 80)."""
        report, running = self._state
        row = self.cursor_row
        self._width = self.size.width
        fold: tuple[Content, str, str] | None = None
        if report is None:
            rows = [(PENDING, spec.id, spec.title) for spec in all_checks()]
        else:
            ordered = sorted(report.outcomes, key=lambda o: STATUS_ORDER.index(o.status))
            top = [o for o in ordered if self._needle or o.status not in FOLDED]
            rest = [o for o in ordered if not self._needle and o.status in FOLDED]
            rows = [_row(o) for o in top]
            if rest:
                fold = fold_row(report, self.folded)
                rows.append(fold)
                if not self.folded:
                    rows += [_row(o) for o in rest]
        rows = [r for r in rows if r is fold or matches(self._needle, r[1], r[2])]
        id_width = max((len(r[1]) for r in rows), default=5)
        # 3 columns x 2 cells of padding, the badge, and room for the vertical scrollbar.
        title_width = max(12, self.size.width - id_width - 4 - 6 - 2)
        self.clear(columns=True)
        self.add_column("", key="badge", width=4)
        self.add_column("check", key="check", width=id_width)
        self.add_column("what it checks", key="title", width=title_width)
        for r in rows:
            badge, check_id, title = r
            key = FOLD_KEY if r is fold else check_id
            self.add_row(badge, Text(check_id), Text(_cut(title, title_width)), key=key)
        if rows:
            self.move_cursor(row=min(row, len(rows) - 1))

    def outcome(self, report: Report | None, row_key: str | None) -> CheckOutcome | None:
        if report is None or row_key is None:
            return None
        return next((o for o in report.outcomes if o.check == row_key), None)


def _row(o: CheckOutcome) -> tuple[Content, str, str]:
    return status_badge(o.status), o.check, o.title + (f" ({o.reason})" if o.reason else "")


def fold_row(report: Report, folded: bool) -> tuple[Content, str, str]:
    """The folded row's cells: "[+]", "N passed, M not applicable", what Enter does."""
    passed = sum(o.status is CheckStatus.PASSED for o in report.outcomes)
    na = sum(o.status is CheckStatus.NOT_APPLICABLE for o in report.outcomes)
    words = ", ".join(w for n, w in ((passed, f"{passed} passed"), (na, f"{na} not applicable"))
                      if n)
    what = "Enter or click shows them" if folded else "Enter or click folds them"
    return Content.styled("[+]" if folded else "[-]", "bold $text-primary"), words, what


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
