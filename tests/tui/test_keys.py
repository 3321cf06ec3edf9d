"""Keys as people expect (issue 22 item 5): help made from the real bindings (it omitted space, a,
u, y/n and /), j/k in every list, and the cluster screen answering ? and Enter."""

from __future__ import annotations

import copy

import pytest
from textual.widgets import DataTable, OptionList, Static, Tree
from tfdoctor.tui.app import DoctorApp, make_app
from tfdoctor.tui.cluster import ClusterApp, make_cluster_app
from tfdoctor.tui.keys import LIST_KEYS, key_name, keys_of
from tfdoctor.tui.screens.cluster import ClusterScreen
from tfdoctor.tui.screens.confirm import ConfirmScreen
from tfdoctor.tui.screens.detail import CommandTable, DetailScreen
from tfdoctor.tui.screens.export import ExportScreen
from tfdoctor.tui.screens.facts import FactsScreen
from tfdoctor.tui.screens.fixes import FixScreen, StepList
from tfdoctor.tui.screens.help import HelpScreen
from tfdoctor.tui.screens.main import MainScreen
from tfdoctor.tui.widgets.facts_tree import FactsTree
from tfdoctor.tui.widgets.filter import ListFilter
from tfdoctor.tui.widgets.tables import FindingsList, OutcomesTable

from tui.kit import FakeApplier, Loader, drive, pin_and_root_report, problems_report, settle
from tui.test_cluster import recorded

DOCTOR_BINDINGS = (DoctorApp, MainScreen, DetailScreen, FactsScreen, FixScreen, ConfirmScreen,
                   ExportScreen, FindingsList, OutcomesTable, StepList, FactsTree, CommandTable,
                   ListFilter)
"""Every class of the doctor's TUI that declares keys of its own."""


def help_text(app: object) -> str:
    """The text of every block of the help screen on top."""
    return "\n".join(str(s.content) for s in app.screen.query(Static))  # type: ignore[attr-defined]


def help_keys(text: str) -> set[str]:
    """The keys the help's rows name (the key column is 18 wide, keys joined by " / ")."""
    return {k for line in text.splitlines() if len(line) > 19 and line[18] == " "
            for k in line[:18].strip().split(" / ")}


def own_keys(*classes: type) -> set[str]:
    """The keys these classes bind themselves (not inherited from Textual's widgets)."""
    return {key_name(k) for cls in classes for b in cls.__dict__.get("BINDINGS", ())
            for k in keys_of(b)}


def test_help_lists_every_key_that_is_bound() -> None:
    """? opens help whose keys are read from the BINDINGS: every key any screen or list binds
    is in it, Space and Enter too; a key added to a screen shows up without editing help."""
    app = make_app(Loader(problems_report()), applier=FakeApplier())

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = help_text(app)
        keys = own_keys(*DOCTOR_BINDINGS)
        assert {"?", "/", "a", "u", "y", "n", "j", "k", "Escape", "Ctrl+C"} <= keys
        assert keys - help_keys(text) == set(), text
        assert {"Space", "Enter", "click", "Up", "Down"} <= help_keys(text)

    drive(app, scenario, size=(120, 60))


@pytest.mark.parametrize("where", ["findings", "checks", "fix-steps", "facts"])
def test_j_and_k_move_in_every_list(where: str) -> None:
    """j moves the cursor down one row and k back up, in each list of the doctor's TUI."""
    app = make_app(Loader(pin_and_root_report()), applier=FakeApplier())

    def cursor() -> int | None:
        widget = app.screen.focused
        if isinstance(widget, DataTable):
            return widget.cursor_row
        if isinstance(widget, OptionList):
            return widget.highlighted
        if isinstance(widget, Tree):
            return widget.cursor_line
        raise AssertionError(f"focus on {widget!r}")

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        if where == "checks":
            app.screen.query_one(OutcomesTable).focus()
        elif where == "fix-steps":
            await pilot.press("x")
        elif where == "facts":
            await pilot.press("f")
        else:
            app.screen.query_one(FindingsList).focus()
        await settle(pilot)
        start = cursor()
        await pilot.press("j")
        await pilot.pause()
        moved = cursor()
        await pilot.press("k")
        await pilot.pause()
        if where == "fix-steps":  # one step tfdoctor applies: j stays on it
            assert moved == start == cursor()
        else:
            assert moved == (start or 0) + 1 and cursor() == start

    drive(app, scenario, size=(120, 40))


def test_cluster_screen_answers_help_and_enter() -> None:
    """? on the cluster screen opens its help (its own bindings: q, Ctrl+C, ?, Enter, j/k);
    Enter on a worker's row shows that worker; j/k move between findings."""
    doc = recorded()
    app = make_cluster_app(lambda: copy.deepcopy(doc), "replaying")

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = help_text(app)
        keys = own_keys(ClusterApp, ClusterScreen) | own_keys(type("L", (), {"BINDINGS": LIST_KEYS}))
        assert keys - help_keys(text) == set(), text
        assert {"q", "Ctrl+C", "?", "Enter", "j", "k"} <= keys
        await pilot.press("escape")
        await pilot.pause()
        nodes = app.screen.query_one("#cluster-nodes", DataTable)
        nodes.focus()
        await pilot.press("j", "enter")
        await pilot.pause()
        detail = str(app.screen.query_one("#cluster-detail", Static).content)
        task = doc["workers"][1]["task"]
        assert detail.startswith(task) and "ended: completed" in detail, detail
        findings = app.screen.query_one("#cluster-findings", OptionList)
        findings.focus()
        await pilot.press("j")
        await pilot.pause()
        assert findings.highlighted == 1
        assert doc["findings"][1]["id"] in str(app.screen.query_one("#cluster-detail", Static).content)

    drive(app, scenario, size=(120, 50))


def test_slash_filters_the_findings_and_checks() -> None:
    """/ on the main screen opens a filter box: typing keeps the findings and check rows that
    contain it (the titles say so, the counts stay the report's); Enter goes back to the list
    with the filter kept; Escape in the box clears it and every row is back."""
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        findings = app.screen.query_one(FindingsList)
        checks = app.screen.query_one(OutcomesTable)
        all_rows = checks.row_count
        await pilot.press("slash", *"numpy")
        await pilot.pause()
        prompts = [str(findings.get_option_at_index(i).prompt) for i in range(findings.option_count)]
        assert len(prompts) == 1 and "package-out-of-range" in prompts[0], prompts
        assert 0 < checks.row_count < all_rows
        assert "python-packages" in [str(r.key.value) for r in checks.ordered_rows]
        assert "filter 'numpy'" in str(findings.border_title)
        assert f"{checks.row_count} match 'numpy'" in str(checks.border_title)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.focused is findings and findings.option_count == 1
        await pilot.press("j", "enter")  # the list answers its keys, the filter holds
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("slash", "escape")
        await pilot.pause()
        assert checks.row_count == all_rows and findings.option_count == 2
        assert "filter" not in str(findings.border_title)

    drive(app, scenario, size=(120, 40))


def test_slash_filters_the_cluster_screen() -> None:
    """/ on the cluster screen keeps the worker rows and findings that contain the text; Enter
    on a kept row still opens that worker (rows keep their worker's index); Escape clears."""
    doc = recorded()
    app = make_cluster_app(lambda: copy.deepcopy(doc), "replaying")
    slow = doc["workers"][1]["task"]

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        nodes = app.screen.query_one("#cluster-nodes", DataTable)
        findings = app.screen.query_one("#cluster-findings", OptionList)
        assert nodes.row_count == 2 and findings.option_count == 3
        await pilot.press("slash", *"straggler")
        await pilot.pause()
        assert findings.option_count == 1 and "filter 'straggler'" in str(findings.border_title)
        await pilot.press("escape")
        await pilot.press("slash", *slow)
        await pilot.pause()
        assert nodes.row_count == 1 and str(nodes.ordered_rows[0].key.value) == "1"
        await pilot.press("enter")
        nodes.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert str(app.screen.query_one("#cluster-detail", Static).content).startswith(slow)
        app.screen.query_one("#filter").focus()
        await pilot.press("escape")
        await pilot.pause()
        assert nodes.row_count == 2 and findings.option_count == 3

    drive(app, scenario, size=(120, 50))


def test_keys_typed_in_the_filter_are_text() -> None:
    """In the filter box, letters that are keys elsewhere (f, x, e, q, ?, j, k) are typed: none
    opens a screen or quits."""
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("slash", *"fix eq", "question_mark", "j", "k")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and app.is_running
        assert app.screen.query_one(ListFilter).value == "fix eq?jk"

    drive(app, scenario, size=(120, 40))
