"""The main screen's layout (issue 22 item 2): at 80x24 the verdict, the root cause and the
failing checks are on screen without scrolling, with the passed and not-applicable checks folded
into one row that Enter or a click opens; from 140 columns on, the highlighted finding's or
check's detail stands beside the lists instead of leaving the right half of the screen empty."""

from __future__ import annotations

from textual.containers import VerticalScroll
from tfdoctor.findings import CheckStatus
from tfdoctor.tui.app import make_app
from tfdoctor.tui.screens.detail import DetailScreen
from tfdoctor.tui.screens.main import MainScreen
from tfdoctor.tui.widgets.tables import FOLD_KEY, FindingsList, OutcomesTable

from tui.kit import (
    FakeApplier,
    Loader,
    drive,
    problems_report,
    root_only_report,
    screen_text,
    settle,
)


def _keys(table: OutcomesTable) -> list[str]:
    return [str(r.key.value) for r in table.ordered_rows]


def test_80x24_shows_verdict_root_cause_and_failing_checks_at_once() -> None:
    """Everything a user needs first is in the first screenful; the 35 passed or not-applicable
    checks are one row that says how many there are."""
    report = problems_report()
    app = make_app(Loader(report))
    passed = sum(o.status is CheckStatus.PASSED for o in report.outcomes)
    na = sum(o.status is CheckStatus.NOT_APPLICABLE for o in report.outcomes)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        lines = screen_text(app).splitlines()
        assert len(lines) <= 24
        text = "\n".join(lines)
        assert lines[0].strip().startswith("Verdict: 2 problem(s); root cause: package-out-of-range")
        assert "package-out-of-range  root cause" in text
        assert "[XX]  python-packages" in text and "[XX]  cuda-visible-devices" in text
        assert f"[+]   {passed} passed, {na} not applicable" in text
        assert "[ok]" not in text and "[--]" not in text
        assert not app.screen.query_one("#side").display

    drive(app, scenario, size=(80, 24))


def test_enter_on_the_folded_row_opens_and_closes_it() -> None:
    """Enter on "N passed, M not applicable" lists those checks under it (the cursor stays on the
    row), and Enter again folds them; a check row still opens its detail."""
    report = problems_report()
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        table = app.screen.query_one(OutcomesTable)
        table.focus()
        await pilot.press("down", "down")
        assert _keys(table)[table.cursor_row] == FOLD_KEY
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert len(_keys(table)) == len(report.outcomes) + 1
        assert _keys(table)[table.cursor_row] == FOLD_KEY
        assert "[-]" in screen_text(app) and "[ok]  driver-present" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert _keys(table) == ["python-packages", "cuda-visible-devices", FOLD_KEY]
        await pilot.press("enter")
        await pilot.press("down", "enter")  # the first passed check
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.outcome is not None and app.screen.outcome.check == "driver-present"

    drive(app, scenario, size=(80, 24))


def test_a_click_on_the_folded_row_opens_it() -> None:
    """The mouse works on the folded row as Enter does."""
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        table = app.screen.query_one(OutcomesTable)
        # the title border, the header, two failing rows, then the folded one
        await pilot.click(OutcomesTable, offset=(8, 4))
        await pilot.click(OutcomesTable, offset=(8, 4))
        await pilot.pause()
        assert not table.folded and "[ok]  driver-present" in screen_text(app)

    drive(app, scenario, size=(80, 24))


def test_a_filter_shows_every_match_unfolded() -> None:
    """Filtering searches the passed checks too (folding would hide what was searched for)."""
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("slash", *"driver", "enter")
        await pilot.pause()
        keys = _keys(app.screen.query_one(OutcomesTable))
        assert FOLD_KEY not in keys and "driver-present" in keys

    drive(app, scenario, size=(80, 24))


def test_wide_screen_puts_the_detail_beside_the_lists() -> None:
    """At 200x60 the root cause's detail (evidence, what to do, the plan's fix step) is on the
    right of the lists; moving down the findings shows the next one there; at 120 columns there
    is no side pane."""
    app = make_app(Loader(problems_report()), applier=FakeApplier())

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.pause()
        side = app.screen.query_one("#side", VerticalScroll)
        lists = app.screen.query_one("#lists")
        assert side.display and side.region.x >= lists.region.right - 1
        assert side.region.y == lists.region.y and side.region.width >= 60
        text = screen_text(app).splitlines()
        left = " ".join(line[:side.region.x] for line in text)
        beside = " ".join(" ".join(line[side.region.x:] for line in text).split())
        assert "numpy 1.21.0 is outside" in left and "numpy 1.21.0 is outside" in beside
        assert "package-out-of-range (root cause)" in beside
        assert "Fix pin-python-packages (step 1 of the fix plan" in beside
        assert "$ /venv/bin/python -m pip install 'numpy>=1.26.0'" in beside  # the plan's command
        app.screen.query_one(FindingsList).focus()
        await pilot.press("down")
        await pilot.pause()
        beside = [line[side.region.x:] for line in screen_text(app).splitlines()]
        assert any("cuda-visible-devices-hides-all" in line for line in beside[:12]), beside[:12]
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not side.display
        assert "numpy 1.21.0 is outside" in screen_text(app)

    drive(app, scenario, size=(200, 60))


def test_wide_screen_follows_the_checks_table() -> None:
    """Moving in the checks table shows that check beside the lists."""
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        app.screen.query_one(OutcomesTable).focus()
        await pilot.press("down")
        await pilot.pause()
        side = app.screen.query_one("#side", VerticalScroll)
        beside = " ".join(line[side.region.x:] for line in screen_text(app).splitlines())
        assert "cuda-visible-devices-hides-all" in beside and "CUDA_VISIBLE_DEVICES='-1'" in beside

    drive(app, scenario, size=(200, 60))


def test_wide_screen_after_a_rerun_shows_the_new_report() -> None:
    """A re-run whose report has fewer findings: the side pane follows the new root cause (an
    option event from the old list once indexed past the new report's findings and crashed)."""
    app = make_app(Loader(problems_report(), root_only_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.pause()
        side = app.screen.query_one("#side", VerticalScroll)
        beside = " ".join(" ".join(line[side.region.x:] for line in screen_text(app).splitlines())
                          .split())
        assert "driver-not-loaded (root cause)" in beside
        assert "package-out-of-range" not in beside

    drive(app, scenario, size=(200, 60))


def test_the_checks_table_is_rebuilt_only_when_its_width_changes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A taller terminal keeps the rows (they were rebuilt on every resize); a wider one cuts
    the titles anew."""
    fills: list[int] = []
    real = OutcomesTable._fill

    def counted(self: OutcomesTable) -> None:
        fills.append(self.size.width)
        real(self)

    monkeypatch.setattr(OutcomesTable, "_fill", counted)
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        before = len(fills)
        await pilot.resize_terminal(80, 40)
        await pilot.pause()
        assert len(fills) == before
        await pilot.resize_terminal(100, 40)
        await pilot.pause()
        assert len(fills) > before

    drive(app, scenario, size=(80, 24))
