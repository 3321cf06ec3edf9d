"""The README's and docs/tui.md's pictures exist, are PNGs, and are the real app's screens: each
PNG has its SVG beside it (docs/images/render.py makes both from Pilot screenshots), and each
SVG shows what the screen it claims to be shows today, so a picture cannot silently drift into
showing a screen the app no longer draws."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "images"


def _linked(doc: Path) -> list[Path]:
    return [(doc.parent / m).resolve() for m in re.findall(r"!\[[^]]*\]\(([^)]+\.png)\)",
                                                          doc.read_text())]


@pytest.mark.parametrize("doc", ["README.md", "docs/tui.md"])
def test_every_linked_picture_is_a_png_with_its_svg(doc: str) -> None:
    pictures = _linked(ROOT / doc)
    assert len(pictures) >= (2 if doc == "README.md" else 3)
    for png in pictures:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
        assert png.with_suffix(".svg").exists(), png


def _svg_text(name: str) -> str:
    svg = (IMAGES / name).read_text()
    return " ".join(html.unescape(t).replace("\xa0", " ")
                    for t in re.findall(r"<text [^>]*>(.*?)</text>", svg))


def test_the_pictures_show_todays_screens() -> None:
    """The 80x24 picture has the folded row and both failing checks; the wide one, the detail
    beside the lists; the text report, its verdict."""
    small = _svg_text("tui-broken-80x24.svg")
    assert "Verdict: 2 problem(s); root cause: package-out-of-range" in small
    assert "19 passed, 16 not applicable" in small and "cuda-visible-devices" in small
    wide = _svg_text("tui-broken-200x60.svg")
    assert "(root cause)" in wide and "step 1 of the fix plan" in wide
    assert "Verdict: 2 problem(s)" in _svg_text("report-text.svg")
    assert "Fix plan for" in _svg_text("tui-fix-plan-120x40.svg")
