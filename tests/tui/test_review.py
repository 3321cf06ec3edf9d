"""Pilot tests of the TUI review items (issue 12, point 6): order, no silent caps, commands
that copy, no colour needed, a header everywhere, the palette, the export notice, re-runs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from helpers import change, healthy, judge
from tfdoctor.findings import CheckStatus, Finding, Severity
from tfdoctor.render_text import BADGE
from tfdoctor.report import Report
from tfdoctor.tui.app import make_app
from tfdoctor.tui.screens.detail import CommandTable, DetailScreen
from tfdoctor.tui.screens.facts import FactsScreen
from tfdoctor.tui.widgets.facts_tree import LEAF_LIMIT
from tfdoctor.tui.widgets.tables import FindingsList, OutcomesTable, display_order

from tui.kit import Loader, drive, problems_report, screen_text, settle


def mixed_report() -> Report:
    """The root cause, a warning, then an error it explains (the report's causal order)."""
    report = problems_report()
    root, caused = report.findings[0], report.findings[1]
    warning = Finding("gpu-throttled", Severity.WARNING, "GPU 0 is throttled.", check="gpu-health")
    assert report.root_cause is root and caused.severity is Severity.ERROR
    return replace(report, findings=(root, warning, replace(caused, caused_by=root.id)))


def test_findings_show_errors_first_with_the_root_cause_on_top() -> None:
    """A caused error ranks after a warning in the report; on screen errors come first."""
    report = mixed_report()
    assert display_order(report) == [0, 2, 1]
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        ids = [opt.id for opt in app.screen.query_one(FindingsList)._options]
        assert ids == ["0", "2", "1"]
        text = screen_text(app)
        assert text.index(report.findings[2].id) < text.index("gpu-throttled")

    drive(app, scenario, size=(120, 40))


def test_facts_tree_says_how_many_values_it_left_out() -> None:
    """More values than the tree shows: the count line and the tree say "N more", never a
    silent cut."""
    many = {f"VAR_{i:04d}": "x" for i in range(LEAF_LIMIT + 40)}
    app = make_app(Loader(judge(change(healthy(), env=many))))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, FactsScreen)
        count = str(app.screen.query_one("#facts-count").render())
        assert "more not shown (search to narrow)" in count, count
        tree = app.screen.query_one("#facts-tree")
        assert tree.hidden > 0  # type: ignore[attr-defined]
        assert any("more value(s) not shown" in str(node.label) for node in tree.root.children)

    drive(app, scenario)


def test_fix_commands_are_rows_and_c_copies_the_selected_one() -> None:
    """A fix's commands are never wrapped (one table row each, scrolled sideways) and `c`
    copies the selected command to the clipboard (OSC 52 through Textual)."""
    report = problems_report()
    root = report.findings[0]
    assert root.remediation and root.remediation.commands
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        app.open_detail(finding=root)
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        table = app.screen.query_one(CommandTable)
        assert table.row_count == len(root.remediation.commands)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == [
            f"$ {c}" for c in root.remediation.commands]
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == root.remediation.commands[0]

    drive(app, scenario)


def test_no_color_keeps_every_status_readable(monkeypatch: pytest.MonkeyPatch) -> None:
    """With NO_COLOR (and so on a 16-colour terminal too) statuses are glyphs, not colours:
    every status has its own text badge and the screen carries them."""
    assert len({BADGE[s][0] for s in CheckStatus if s is not CheckStatus.COULD_NOT_CHECK}) == len(
        CheckStatus) - 1
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        assert app.no_color
        app.screen.query_one(OutcomesTable).toggle_fold()  # the passed ones are folded
        await pilot.pause()
        text = screen_text(app)
        assert "[XX]" in text and "[ok]" in text and "error" in text

    drive(app, scenario, size=(120, 40))


@pytest.mark.parametrize("key,screen", [("f", FactsScreen), ("enter", DetailScreen)])
def test_every_screen_has_the_verdict_and_target_header(key: str, screen: type) -> None:
    """The verdict and the interpreter diagnosed stay in view on the facts and detail screens."""
    report = problems_report()
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, screen)
        text = screen_text(app)
        assert "Verdict: 2 problem(s)" in text
        assert f"Diagnosing {report.facts.python.executable}" in text

    drive(app, scenario, size=(120, 40))


def test_command_palette_offers_the_apps_actions() -> None:
    """Ctrl+P lists tfdoctor's own actions (those possible now), beside Textual's."""
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for title in ("Re-run the diagnosis", "Facts", "Fix plan", "Export the report", "Keys"):
            assert title in titles
        assert "Stop the run" not in titles  # nothing is running

    drive(app, scenario)


def test_export_notice_names_both_files_absolute(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The support export writes Markdown and JSON: the notice names both, as absolute paths."""

    def exporter(report: Report, path: Path) -> Path:
        path.write_text("md")
        path.with_suffix(".json").write_text("{}")
        return path

    monkeypatch.chdir(tmp_path)
    app = make_app(Loader(problems_report()), exporter=exporter)
    said: list[str] = []

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        monkeypatch.setattr(app, "notify", lambda message, **kw: said.append(message))
        app._exported(exporter(problems_report(), Path("report.md")))
        assert said == [f"Saved {tmp_path / 'report.md'} and {tmp_path / 'report.json'} "
                        "(readable by you only)"]

    drive(app, scenario)


def test_rerun_keeps_the_previous_findings_until_the_new_verdict() -> None:
    """Pressing r no longer blanks the findings: the previous run's stay, marked, until the
    new report arrives."""
    loader = Loader(problems_report(), judge(healthy()))
    app = make_app(loader)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        loader.release.clear()
        await pilot.press("r")
        await pilot.pause()
        await pilot.pause()
        text = screen_text(app)
        assert app.running and "Re-running: the previous run's findings" in text
        assert "package-out-of-range" in text
        loader.release.set()
        await settle(pilot)
        text = screen_text(app)
        assert "Verdict: healthy" in text and "package-out-of-range" not in text

    drive(app, scenario, size=(120, 40))


@pytest.mark.parametrize("state", ["stopped-during-import", "budget-during-import", "import-failed"])
def test_checks_that_did_not_run_are_shown_as_not_run_with_the_reason(state: str) -> None:
    """The bug: stopping during the TensorFlow import turned smoke-gpus into "[ok] TensorFlow
    sees the GPUs". Now every smoke check that did not run is [..] with its reason, in the
    table and in its detail, and the verdict is incomplete unless a real problem was found."""
    from early_stops import EARLY_STOPS, make_facts
    from tfdoctor.report import build_report

    report = build_report(make_facts(EARLY_STOPS[state]))
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        text = screen_text(app)
        rows = [line for line in text.splitlines() if "smoke-" in line and "[" in line]
        # After a failed import the child ended normally: its whole log was read and judged.
        judged = ("smoke-log",) if state == "import-failed" else ()
        assert not any("[ok]" in row for row in rows if not any(j in row for j in judged)), rows
        assert any("[..]" in row and "smoke-tensor-cores" in row for row in rows), rows
        expect = "1 problem(s); root cause: smoke-import-failed" if state == "import-failed" \
            else "incomplete"
        assert f"Verdict: {expect}" in text
        outcome = next(o for o in report.outcomes if o.check == "smoke-tensor-cores")
        app.open_detail(outcome=outcome)
        await pilot.pause()
        assert f"Why: {outcome.reason}"[:60] in " ".join(screen_text(app).split())

    drive(app, scenario, size=(160, 50))


@pytest.mark.parametrize("theme", ["ansi-dark", "ansi-light"])
def test_sixteen_colour_themes_keep_badges_and_verdict(theme: str) -> None:
    """On a 16-colour terminal (Textual's ANSI themes use only the terminal's 16 colours) the
    verdict, severities and status glyphs are all still on screen as text."""
    app = make_app(Loader(problems_report()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        app.theme = theme
        await settle(pilot)
        app.screen.query_one(OutcomesTable).toggle_fold()  # the passed ones are folded
        await pilot.pause()
        text = screen_text(app)
        assert "Verdict: 2 problem(s)" in text and "[XX]" in text and "[ok]" in text
        assert "error   package-out-of-range" in text

    drive(app, scenario, size=(120, 40))


def test_header_names_the_target_while_the_first_run_goes() -> None:
    """Before any report exists the header already says which interpreter is diagnosed and why
    (the real loader knows it from the start)."""
    from tfdoctor.host import Host
    from tfdoctor.registry import CheckConfig
    from tfdoctor.tui.seams import diagnosis_loader

    real = diagnosis_loader(Host(python="/venv/bin/python", python_why="--python"),
                            CheckConfig(), None)
    assert real.target == "Diagnosing /venv/bin/python (--python)"  # type: ignore[attr-defined]
    loader = Loader(problems_report(), block=True)
    loader.target = "Diagnosing /venv/bin/python (--python)"  # type: ignore[attr-defined]
    app = make_app(loader)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        while not loader.entered.is_set():
            await pilot.pause(0.02)
        await pilot.pause()
        assert app.running and "Diagnosing /venv/bin/python (--python)" in screen_text(app)
        loader.release.set()
        await settle(pilot)

    drive(app, scenario, size=(120, 40))


def test_findings_alike_are_one_line_and_one_detail() -> None:
    """Three libraries with the same finding and fix are one line (+2 alike); its detail shows
    each library's message and evidence and every command once."""
    from tfdoctor.findings import Remediation

    def lib(soname: str) -> Finding:
        return Finding("cuda-library-missing", Severity.WARNING, f"TensorFlow cannot load {soname}.",
                       {"library.soname": soname}, "Add its directory.",
                       Remediation("activation-hook-ld-library-path",
                                   ("export A=1", f"export B={soname}")), check="cuda-libraries")

    base = problems_report()
    libs = (lib("libcurand.so.10"), lib("libcufft.so.11"), lib("libcusparse.so.12"))
    report = replace(base, findings=(*base.findings, *libs))
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        options = app.screen.query_one(FindingsList)
        assert options.option_count == len(base.findings) + 1
        assert screen_text(app).count("cuda-library-missing") == 1
        assert "+2 alike" in screen_text(app)
        app.open_detail(finding=libs[0])
        await pilot.pause()
        text = " ".join(screen_text(app).split())
        assert "Alike: TensorFlow cannot load libcufft.so.11." in text
        assert "library.soname: libcusparse.so.12" in text
        table = app.screen.query_one(CommandTable)
        assert table.commands == ("export A=1", "export B=libcurand.so.10",
                                  "export B=libcufft.so.11", "export B=libcusparse.so.12")

    drive(app, scenario, size=(120, 50))
