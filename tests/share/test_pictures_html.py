"""`tfdoctor report --html`: the page is looked at in real headless Chromium, as a picture (the
bars are on the screenshot, in their colours, as long as the SVG says) and as a DOM (the SVG
elements exist), and it is redacted exactly as the Markdown report beside it."""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path

import pytest
from helpers import need
from picture_fixtures import four_a100, no_gpu, save
from pngread import Image, read_png
from share_helpers import invoke
from tfdoctor.share.html_report import COLORS

CHROMIUM = "/usr/bin/chromium"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-color-profile=srgb")


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def chromium(page: Path, tmp_path: Path, *what: str) -> subprocess.CompletedProcess[str]:
    need(Path(CHROMIUM).exists(), "Debian chromium (tests/envs/apt.sh installs it)")
    argv = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'chromium'}", *what,
            page.resolve().as_uri()]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)


def write_page(tmp_path: Path, facts_maker=four_a100) -> Path:  # type: ignore[no-untyped-def]
    facts = save(facts_maker(), tmp_path / "facts.json")
    result = invoke("report", "--from", str(facts), "-o", f"{tmp_path}/out/",
                    "--html", str(tmp_path / "report.html"))
    assert result.exit_code == 0, result.output
    return tmp_path / "report.html"


def bands(image: Image, colour: tuple[int, int, int]) -> list[int]:
    """The middle row of each run of rows where `colour` appears."""
    ys = [y for y, row in enumerate(image.rows) if colour in row]
    groups: list[list[int]] = []
    for y in ys:
        if groups and y == groups[-1][-1] + 1:
            groups[-1].append(y)
        else:
            groups.append([y])
    return [g[len(g) // 2] for g in groups]


def measured_fraction(image: Image, y: int, colour: tuple[int, int, int]) -> float:
    """How much of the bar's track the coloured run fills on row y, in pixels."""
    row = image.rows[y]
    xs = [x for x, p in enumerate(row) if p == colour]
    start, end = min(xs), max(xs)
    track = rgb(COLORS["track"])
    x = end + 1
    while x < image.width and row[x] == track:
        x += 1
    return (end - start + 1) / (x - start)


def test_the_bars_are_on_the_screenshot_where_the_svg_puts_them(tmp_path):
    """4x A100 with GPU 2 throttled: Chromium draws 13 green bars and 3 orange (low) ones, top
    to bottom in the SVG's order, each as full as its data-fraction; the page is not blank."""
    page = write_page(tmp_path)
    dom = chromium(page, tmp_path, "--dump-dom").stdout
    rects = re.findall(r'<rect class="bar (ok|low)" data-fraction="([0-9.]+)" x="\d+" y="(\d+)"', dom)
    assert len(rects) == 16
    expected = [(kind, float(f)) for kind, f, _ in sorted(rects, key=lambda r: int(r[2]))]
    assert [k for k, _ in expected].count("low") == 3

    shot = tmp_path / "shot.png"
    chromium(page, tmp_path, f"--screenshot={shot}", "--window-size=1200,900")
    image = read_png(shot)
    assert (image.width, image.height) == (1200, 900)
    assert len({p for row in image.rows[::10] for p in row[::10]}) > 20, "a blank page"
    seen = sorted([(y, "ok") for y in bands(image, rgb(COLORS["ok"]))] +
                  [(y, "low") for y in bands(image, rgb(COLORS["low"]))])
    assert [k for _, k in seen] == [k for k, _ in expected]
    for (y, kind), (_, fraction) in zip(seen, expected, strict=True):
        drawn = measured_fraction(image, y, rgb(COLORS[kind]))
        assert drawn == pytest.approx(fraction, abs=0.01), (y, kind)


def test_the_dom_has_the_svg_chart_and_no_external_resource(tmp_path):
    """The chart is an inline <svg> with a track per bar and the words beside each; nothing on
    the page loads from anywhere (a ticket attachment is opened offline)."""
    page = write_page(tmp_path)
    dom = chromium(page, tmp_path, "--dump-dom").stdout
    assert '<svg id="gpu-throughput"' in dom
    assert dom.count('class="track"') == 16
    assert "32 % of 312 TFLOPS" in dom and "GPU 2: NVIDIA A100-SXM4-80GB" in dom
    assert '<table id="gpu-table">' in dom and "gen4x8/gen4x16" in dom
    source = page.read_text()
    assert not re.search(r"\b(src|href)=|url\(|@import", source)
    assert set(re.findall(r"https?://[^\s\"'<]+", source)) <= {"http://www.w3.org/2000/svg"}


def test_html_is_redacted_exactly_as_the_markdown(tmp_path):
    """The same run's Markdown and HTML carry the same pseudonyms and neither the user's name
    nor a GPU UUID: the page is rendered from redact.py's output, not from the raw facts."""
    facts = four_a100()
    facts = type(facts).from_dict({**facts.to_dict(), "python": {
        **facts.to_dict()["python"], "executable": "/home/zoe4711/venv/bin/python"}})
    saved = save(facts, tmp_path / "facts.json")
    env = {"USER": "zoe4711", "LOGNAME": "zoe4711", "HOME": "/home/zoe4711"}
    result = invoke("report", "--from", str(saved), "-o", f"{tmp_path}/out/",
                    "--html", str(tmp_path / "r.html"), env=env)
    assert result.exit_code == 0, result.output
    page = html.unescape((tmp_path / "r.html").read_text())
    markdown = next((tmp_path / "out").glob("*.md")).read_text()
    assert "zoe4711" not in page and "GPU-00000000" not in page
    names = re.compile(r"<(?:user|host|pci)-[0-9a-f]+>|GPU-<[0-9a-f]+>")
    own = page.split("<details>")[0]  # the page's own sections, before the Markdown it carries
    assert set(names.findall(own)) and set(names.findall(own)) <= set(names.findall(markdown))
    assert "Diagnosing /home/<user-" in own
    assert markdown in page  # the Markdown report itself, inside the page


def test_no_gpu_page_has_no_chart(tmp_path):
    """The recorded GPU-less container: the page has its verdict and no GPU section at all."""
    page = write_page(tmp_path, no_gpu).read_text()
    assert 'id="verdict"' in page and "<svg" not in page and 'id="gpus"' not in page


def test_chromium_is_in_the_apt_list():
    """CI installs what this test runs: tests/envs/apt.sh lists chromium."""
    script = (Path(__file__).parents[1] / "envs" / "apt.sh").read_text()
    assert "chromium:chromium" in script


def test_eight_gpus_and_an_unmeasured_one_in_the_dom(tmp_path):
    """8x H100 with GPU 7's run timed out: 28 measured bars and, for GPU 7, a dashed outline
    with "not measured" (never a 0 % bar); the all-reduce line under the chart."""
    from picture_fixtures import eight_h100

    page = write_page(tmp_path, eight_h100)
    dom = chromium(page, tmp_path, "--dump-dom").stdout
    assert len(re.findall(r'<rect class="bar ok"', dom)) == 28
    assert len(re.findall(r'<rect class="unknown"', dom)) == 1
    assert "not measured (throughput recipe timeout" in dom
    assert 'data-fraction="0.0000"' not in dom
    assert "360.0 GB/s busbw over 8 GPUs (NCCL)" in dom


def test_quick_run_page_has_the_table_and_no_chart(tmp_path):
    """--quick: the GPU table and why nothing was measured; no chart to draw."""
    from picture_fixtures import four_unmeasured

    page = write_page(tmp_path, four_unmeasured).read_text()
    assert '<table id="gpu-table">' in page and "<svg" not in page
    assert "Throughput not measured: the smoke run did not run" in page


def test_the_topology_matrix_and_its_busbw_bar_in_the_page(tmp_path):
    """The probed HGX node with a link down: the page has the matrix as a table and the
    measured-against-predicted busbw as its own SVG bar."""
    from picture_fixtures import eight_h100_link_down

    page = write_page(tmp_path, lambda: eight_h100_link_down(tmp_path / "machine"))
    dom = chromium(page, tmp_path, "--dump-dom").stdout
    assert '<table id="topology-matrix">' in dom and dom.count("<td>NV16</td>") == 14
    assert '<svg id="allreduce-busbw"' in dom
    assert re.search(r'<rect class="bar ok" data-fraction="1\.1250"', dom)
    assert "360.0 GB/s measured = 112 % of the ~320 GB/s predicted" in dom
