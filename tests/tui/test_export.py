"""The main screen's export (issue 22): the real exporter writes the support report as Markdown
with its JSON beside it, so the default name is .md (it was tfdoctor-report.json while writing
both); an existing JSON beside it is asked about too; the redaction and writes run in a worker."""

from __future__ import annotations

import threading

from tfdoctor.tui.app import make_app
from tfdoctor.tui.screens.export import SUPPORT_NAME, ExportScreen
from tfdoctor.tui.seams import export_support_report

from tui.kit import Loader, drive, problems_report, settle


def test_support_export_defaults_to_markdown_and_asks_about_the_json_beside(tmp_path,  # type: ignore[no-untyped-def]
                                                                            monkeypatch) -> None:
    threads: list[str] = []

    def exporter(report, path):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return export_support_report(report, path)

    exporter.__name__ = "export_support_report"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tfdoctor-report.json").write_text("old")
    app = make_app(Loader(problems_report()), exporter=exporter)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        assert app.screen.query_one("#export-path").value == SUPPORT_NAME
        await pilot.press("enter")
        await settle(pilot)
        said = str(app.screen.query_one("#save-status").render())
        assert f"{tmp_path / 'tfdoctor-report.json'} exists: Enter again replaces it" in said
        assert not threads
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ExportScreen)

    drive(app, scenario, size=(120, 30))
    assert threads and threading.main_thread().name not in threads
    assert (tmp_path / "tfdoctor-report.md").exists()
    assert (tmp_path / "tfdoctor-report.json").read_text() != "old"
