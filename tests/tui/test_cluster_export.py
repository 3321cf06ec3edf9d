"""The cluster screen's export (issue 22 item 5): e saves the cluster document as JSON (what
`cluster --json` prints and `--replay` reads), owner-only, written off the UI thread; an
existing file is replaced only after a second Enter; help lists the key from the bindings."""

from __future__ import annotations

import json
import threading

from tfdoctor.tui.cluster import make_cluster_app
from tfdoctor.tui.screens.save import SaveScreen

from tui.kit import drive, screen_text, settle
from tui.test_cluster import recorded


async def _save_as(pilot, path) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("e")
    await pilot.pause()
    field = pilot.app.screen.query_one("#save-path")
    field.value = str(path)
    await pilot.press("enter")
    await settle(pilot)


def test_e_saves_the_document_and_asks_before_replacing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The file read back is the document on screen; mode 0600; a second export to the same
    path says it exists and replaces it only on the second Enter."""
    doc = recorded()
    app = make_cluster_app(lambda: doc, "replaying")
    target = tmp_path / "cluster.json"
    writers: list[str] = []

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        save = SaveScreen.__init__

        def spy(self, title, default, write, warning=""):  # type: ignore[no-untyped-def]
            def recorded_write(path):  # type: ignore[no-untyped-def]
                writers.append(threading.current_thread().name)
                return write(path)
            save(self, title, default, recorded_write, warning)

        SaveScreen.__init__ = spy  # type: ignore[method-assign]
        try:
            await _save_as(pilot, target)
            assert json.loads(target.read_text()) == json.loads(json.dumps(app.document))
            assert target.stat().st_mode & 0o777 == 0o600
            target.write_text("{}")
            await _save_as(pilot, target)
            assert isinstance(app.screen, SaveScreen)
            assert "exists: Enter again replaces it" in " ".join(screen_text(app).split())
            assert target.read_text() == "{}"
            await pilot.press("enter")
            await settle(pilot)
            assert not isinstance(app.screen, SaveScreen)
            assert json.loads(target.read_text())["verdict"] == app.document["verdict"]
        finally:
            SaveScreen.__init__ = save  # type: ignore[method-assign]

    drive(app, scenario, size=(120, 40))
    assert writers and threading.main_thread().name not in writers


def test_export_waits_for_the_document_and_help_lists_it() -> None:
    """While the job runs there is nothing to export (the key is greyed); help names e."""
    release = threading.Event()

    def load():  # type: ignore[no-untyped-def]
        release.wait(10)
        return recorded()

    app = make_cluster_app(load, "running")

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await pilot.pause()
        assert app.check_action("export", ()) is None
        await pilot.press("e")
        await pilot.pause()
        assert not isinstance(app.screen, SaveScreen)
        release.set()
        await settle(pilot)
        assert app.check_action("export", ()) is True
        await pilot.press("question_mark")
        await pilot.pause()
        assert "export the cluster report (JSON" in " ".join(screen_text(app).split())

    drive(app, scenario, size=(120, 40))
