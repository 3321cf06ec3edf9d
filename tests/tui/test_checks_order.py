"""The Checks table once a report is in: failing and warning checks first (issue 22: the only
[XX] was row 26 of 37, off screen at 80x24), registry order within a status and while running."""

from __future__ import annotations

from textual.widgets import DataTable
from tfdoctor.checks import all_checks
from tfdoctor.tui.app import make_app
from tfdoctor.tui.widgets.tables import FOLD_KEY, OutcomesTable

from tui.kit import Loader, drive, problems_report, screen_text, settle


def test_failing_checks_are_the_first_rows_at_80x24() -> None:
    """Both failing checks of the problems report are the table's first rows and on screen."""
    report = problems_report()
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        table: DataTable = app.screen.query_one(OutcomesTable)  # type: ignore[type-arg]
        keys = [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]
        failed = [o.check for o in report.outcomes if o.status.value == "failed"]
        assert keys[:len(failed)] == failed == ["python-packages", "cuda-visible-devices"]
        text = screen_text(app)
        assert all(f"[XX]  {check}" in text for check in failed)
        assert keys[len(failed):] == [FOLD_KEY]  # the passed and not-applicable ones: one row
        table.toggle_fold()
        keys = [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]
        passed = [o.check for o in report.outcomes if o.status.value == "passed"]
        assert [k for k in keys if k in passed] == passed  # registry order within a status

    drive(app, scenario, size=(80, 24))


def test_registry_order_while_running() -> None:
    """Before the first report, the pending rows are in registry order."""
    loader = Loader(problems_report(), block=True)
    app = make_app(loader)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await pilot.pause()
        table = app.screen.query_one(OutcomesTable)
        keys = [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]
        assert keys == [spec.id for spec in all_checks()]
        loader.release.set()
        await settle(pilot)

    drive(app, scenario, size=(80, 24))
