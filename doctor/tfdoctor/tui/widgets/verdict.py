"""The verdict bar: on top from the first paint, settling into the report's headline."""

from __future__ import annotations

from textual.markup import escape
from textual.widgets import Static

from tfdoctor.render_text import headline, summary_line, target_line
from tfdoctor.tui.present import verdict_style
from tfdoctor.tui.state import WATCHED, doctor
from tfdoctor.tui.widgets.progress import area_names

CLASSES = ("-running", "-healthy", "-problems", "-incomplete", "-failed")


class VerdictBar(Static):
    """The verdict (or what the run is doing), what was diagnosed, and the target interpreter
    with why it was chosen; on every full screen."""

    def on_mount(self) -> None:
        for name in WATCHED:
            self.watch(self.app, name, self.show_state, init=False)
        self.show_state()

    def show_state(self, _value: object = None) -> None:
        app = doctor(self)
        self.remove_class(*CLASSES)
        self.add_class(verdict_style(app.report, app.running, app.error is not None))
        self.update(self._text())

    def _text(self) -> str:
        app = doctor(self)
        if app.stopping:
            return "Stopping: waiting for the running probes to end ...\n "
        if app.running:
            names = area_names(app.areas_done)
            done = sum(n in app.areas_done for n in names)
            doing = "Probing the driver, CUDA, the libraries and TensorFlow" if (
                done < len(names)) else "Running TensorFlow work in the target interpreter"
            target = getattr(app.load_report, "target", None)
            return f"Diagnosing ... {done} of {len(names)} probe areas done\n{doing}" + (
                f"\n{escape(target)}" if target else "")
        if app.error is not None:
            return f"The diagnosis failed: {escape(app.error)}\nPress r to try again."
        if app.report is None:
            return "No report yet\n "
        partial = "Stopped early, so this report is partial | " if app.stopped else ""
        return (f"{escape(headline(app.report))}\n{partial}{escape(summary_line(app.report))}"
                f"\n{escape(target_line(app.report))}")
