"""The GPU panel of the main screen, through Pilot: one row per GPU with its bars, the rows that
stand out first when the screen is short, the full NVML columns on a wide screen, nothing on a
machine without a GPU; the same words as the text report (tfdoctor.pictures)."""

from __future__ import annotations

import sys
from pathlib import Path

from helpers import judge
from tfdoctor.tui.app import make_app
from tfdoctor.tui.widgets.gpu_panel import GpuPanel

from tui.kit import Loader, drive, screen_text, settle

sys.path.insert(0, str(Path(__file__).parents[1] / "share"))
from picture_fixtures import (  # noqa: E402
    eight_h100,
    four_a100,
    four_unmeasured,
    mig_a100,
    no_gpu,
)


def test_four_gpus_with_their_bars_at_120x40() -> None:
    """4x A100 at 120 columns: a row per GPU, the bf16 matmul bar and memory bar on each, the
    throttled GPU's low bar and its throttle reasons; the all-reduce under the table."""
    app = make_app(Loader(judge(four_a100())))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        panel = app.screen.query_one(GpuPanel)
        assert panel.display and panel.border_title == "GPUs: 4"
        assert panel.rows[0] == ("GPU", "name", "memory", "temp", "throttle", "matmul",
                                 "memory bw")
        assert [r[0] for r in panel.rows[1:]] == ["0", "1", "2", "3"]  # temperatures differ
        assert panel.rows[1] == ("0", "A100-SXM4-80GB", "0.0/80.0 GiB", "41C", "none",
                                 "bf16 ▇▇▇▇░░ 61 %", "▇▇▇▇▇░ 83 %")
        assert panel.rows[3][2:] == ("3.5/80.0 GiB", "84C",
                                     "sw_thermal_slowdown; measuring: hw_thermal_slowdown",
                                     "bf16 ▇▇░░░░ 32 %", "▇▇▇▇▇░ 81 %")
        text = screen_text(app)
        assert "bf16 ▇▇░░░░ 32 %" in text
        assert "all-reduce 180.0 GB/s busbw over 4 GPUs (NCCL)" in text

    drive(app, scenario, size=(120, 40))


def test_wide_screen_shows_every_nvml_column_and_the_peak() -> None:
    """At 200 columns: compute capability, memory, PCIe link and MIG too, and "of 312 TFLOPS"."""
    app = make_app(Loader(judge(mig_a100())))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        panel = app.screen.query_one(GpuPanel)
        assert panel.rows[0][:8] == ("GPU", "name", "CC", "mem used/total", "PCIe now/max",
                                     "temp", "MIG", "throttle")
        assert panel.rows[1][8] == "bf16 ▇▇▇▇▇▇▇▇░░ 80 % of 312 TFLOPS"
        assert panel.rows[2][6] == "on, 3 dev"
        assert panel.rows[2][8] == "not measured (no throughput result on this GPU)"
        assert "80 % of 312 TFLOPS" in screen_text(app)

    drive(app, scenario, size=(200, 60))


def test_short_screen_shows_the_gpus_that_stand_out_first() -> None:
    """8x H100 at 80x24 has room for 3 rows: no row stands out (GPU 7 was not measured, which
    is unknown, not a problem), so the first three show and the title says how many are not;
    at 120x60 all eight do."""
    app = make_app(Loader(judge(eight_h100())))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        panel = app.screen.query_one(GpuPanel)
        assert [r[0] for r in panel.rows[1:]] == ["0", "1", "2"]
        assert panel.border_title == "GPUs: 8 (5 not shown: f lists every GPU's facts)"
        await pilot.resize_terminal(120, 60)
        await pilot.pause()
        assert len(panel.rows) == 1 + 8 and panel.border_title == "GPUs: 8"
        assert panel.rows[8][5] == "not measured (throughput recipe timeout: killed after the " \
            "time limit of 60 s)"

    drive(app, scenario, size=(80, 24))


def test_the_throttled_gpu_is_shown_when_rows_are_few() -> None:
    """4x A100 at 80x18 has room for 2 rows: the throttled GPU 2 and the narrow-link GPU 3,
    not the two healthy ones before them."""
    app = make_app(Loader(judge(four_a100())))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        panel = app.screen.query_one(GpuPanel)
        assert [r[0] for r in panel.rows[1:]] == ["2", "3"]

    drive(app, scenario, size=(80, 18))


def test_quick_run_has_no_bar_columns() -> None:
    """--quick: the GPUs without bar columns, four alike as one row, and the panel says
    throughput was not measured."""
    app = make_app(Loader(judge(four_unmeasured())))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        panel = app.screen.query_one(GpuPanel)
        assert panel.rows[0] == ("GPU", "name", "memory", "temp", "throttle")
        assert panel.rows[1:] == [("0-3", "H100 80GB HBM3", "?/79.6 GiB", "?", "none")]  # alike
        assert panel.border_title == "GPUs: 4"
        assert panel.note.startswith("Throughput not measured: the smoke run did not run")
        assert panel.note in screen_text(app)

    drive(app, scenario, size=(120, 40))


def test_no_gpu_no_panel() -> None:
    """The recorded GPU-less container: no panel at all (not an empty one)."""
    app = make_app(Loader(judge(no_gpu())))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        assert not app.screen.query_one(GpuPanel).display
        assert "GPUs:" not in screen_text(app)

    drive(app, scenario, size=(80, 24))


def test_links_line_names_the_pairs_and_the_busbw(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The probed HGX node with GPU 3's links down: one line under the rows counts the pairs by
    link and puts the measured busbw beside the prediction."""
    from picture_fixtures import eight_h100_link_down

    app = make_app(Loader(judge(eight_h100_link_down(tmp_path))))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        panel = app.screen.query_one(GpuPanel)
        assert panel.note.startswith("links: NV18 (21 pairs), NV16 (7 pairs); all-reduce 360.0 "
                                     "GB/s measured = 112 % of the ~320 GB/s predicted")

    drive(app, scenario, size=(200, 60))
