"""Render the README's and docs/tui.md's pictures from the real app (Pilot screenshots) and the
real text renderer, as SVG and, through headless Chromium, PNG.

    .venv/bin/python docs/images/render.py

The machine is the tests' broken one (tests/tui/kit.py: numpy outside TensorFlow's range and
CUDA_VISIBLE_DEVICES=-1 on 8 H100s), so the pictures change only when the screens do.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "tests")]

from rich.console import Console  # noqa: E402
from tfdoctor.render_text import render_text  # noqa: E402
from tfdoctor.tui.app import make_app  # noqa: E402
from tui.kit import FakeApplier, Loader, pin_and_root_report, problems_report, settle  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
SHOTS = (  # name, report, terminal size, keys pressed after the verdict
    ("tui-broken-80x24", problems_report, (80, 24), ()),
    ("tui-broken-200x60", problems_report, (200, 60), ()),
    ("tui-fix-plan-120x40", pin_and_root_report, (120, 40), ("x", "space")),
)


async def _shoot(name: str, report, size: tuple[int, int], keys: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    app = make_app(Loader(report()), applier=FakeApplier())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        if keys:
            await pilot.press(*keys)
            await settle(pilot)
        app.save_screenshot(f"{name}.svg", path=str(HERE))


def _text_report() -> None:
    console = Console(record=True, width=92, file=open("/dev/null", "w"), color_system=None)  # noqa: SIM115
    console.print(render_text(problems_report()), markup=False, highlight=False, end="")
    (HERE / "report-text.svg").write_text(console.export_svg(title="tfdoctor --no-tui"))


def _png(svg: Path) -> None:
    box = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text())
    assert box, svg
    width, height = (int(float(v)) + 1 for v in box.groups())
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--force-color-profile=srgb",
                        f"--user-data-dir={profile}", f"--screenshot={svg.with_suffix('.png')}",
                        f"--window-size={width},{height}", svg.as_uri()],
                       check=True, capture_output=True, timeout=120)


def main() -> None:
    for name, report, size, keys in SHOTS:
        asyncio.run(_shoot(name, report, size, keys))
    _text_report()
    for svg in sorted(HERE.glob("*.svg")):
        _png(svg)
        print(svg.with_suffix(".png").relative_to(HERE.parents[1]))


if __name__ == "__main__":
    main()
