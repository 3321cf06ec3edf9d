"""Live progress: probe areas as they land, and the slow step running now with its clock."""

from __future__ import annotations

import time

from textual.content import Content
from textual.widgets import Static

from tfdoctor.tui.state import WATCHED, doctor

PROBE_AREAS = ("driver", "cuda-driver", "platform", "toolkits", "host", "target", "libraries",
               "xla")
"""The areas `collect_facts` always reports, in the order shown; one it reports only on some
runs (tf-loader) is appended when it lands, and counted from then on (see area_names)."""


def area_names(done: tuple[str, ...]) -> list[str]:
    """Every probe area of this run known so far: the chips and the "N of M" total both count
    these, so N never exceeds M."""
    return [*PROBE_AREAS, *dict.fromkeys(n for n in done if n not in PROBE_AREAS)]


class ProgressPanel(Static):
    """Shown while a run is under way: one chip per probe area, then the current slow step."""

    def on_mount(self) -> None:
        for name in WATCHED:
            self.watch(self.app, name, self.show_state, init=False)
        self.watch(self.app, "step", self.show_state, init=False)
        self.set_interval(0.5, self.tick)
        self.show_state()

    def tick(self) -> None:
        if doctor(self).running and doctor(self).step is not None:
            self.show_state()

    def show_state(self, _value: object = None) -> None:
        app = doctor(self)
        self.display = app.running
        if not app.running:
            return
        self.update(Content("\n").join([self._chips(app.areas_done), self._step()]))

    def _chips(self, done: tuple[str, ...]) -> Content:
        names = area_names(done)
        # A no-break space inside a chip: at 80 columns the line wraps between chips, never
        # inside one.
        chips = [Content.styled(f"+\u00a0{n}", "$text-success") if n in done
                 else Content.styled(f".\u00a0{n}", "$text-muted") for n in names]
        return Content("  ").join(chips)

    def _step(self) -> Content:
        app = doctor(self)
        if app.step is None:
            return Content.styled("waiting for the probes ...", "$text-muted")
        name, value, started = app.step
        parts = [Content.styled(name, "bold"), Content(f"  {time.monotonic() - started:.0f} s")]
        if app.step_limit is not None:
            parts.append(Content(f" of {app.step_limit:.0f} s limit"))
        if value is not None and 0.0 <= value <= 1.0:
            parts.append(Content(f"  ({value:.0%} done)"))
        return Content.assemble(*parts)
