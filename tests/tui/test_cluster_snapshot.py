"""SVG snapshot of the cluster screen (update: pytest --snapshot-update); reviewed by eye."""

from __future__ import annotations

from tfdoctor.tui.cluster import make_cluster_app

from tui.kit import settle
from tui.test_cluster import broken


def test_cluster_with_problems(snap_compare, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A recorded real run made broken (another TensorFlow, a wrong sum): root cause on top,
    the straggler and the wrong size marked, the first finding's detail."""
    doc = broken(tmp_path)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)

    assert snap_compare(make_cluster_app(lambda: doc, "replaying"), terminal_size=(120, 40),
                        run_before=run_before)
