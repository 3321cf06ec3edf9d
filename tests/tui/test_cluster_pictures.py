"""The cluster screen's pictures through Pilot, over the recorded straggler run: busbw by
message size and each worker's compute time as bars, the straggler's bar full and marked."""

from __future__ import annotations

import copy

from textual.containers import VerticalScroll
from tfdoctor.tui.cluster import make_cluster_app

from tui.kit import drive, screen_text, settle
from tui.test_cluster import recorded


def test_straggler_bar_stands_out_on_the_cluster_screen() -> None:
    """Scrolled to the foot: worker:1's compute bar is full and flagged, worker:0's a sliver,
    and the 4 MiB all-reduce is the longest busbw bar."""
    doc = recorded()
    app = make_cluster_app(lambda: copy.deepcopy(doc), "replaying")

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        app.screen.query_one("#cluster-body", VerticalScroll).scroll_end(animate=False)
        await pilot.pause()
        text = screen_text(app)
        assert "worker:1 vm  ▇▇▇▇▇▇▇▇▇▇  compute 51.26 ms, step 58.5 ms  << straggler" in text
        assert "worker:0 vm  ▇░░░░░░░░░  compute 0.25 ms, step 58.6 ms" in text
        assert "4 MiB    ▇▇▇▇▇▇▇▇▇▇  0.233 GB/s" in text

    drive(app, scenario, size=(120, 40))
