"""The pictures as lines of plain text: Unicode bars, or `#` and `.` where the output's
encoding cannot show them (decided by `unicode_ok` from the stream that will carry them)."""

from __future__ import annotations

from typing import Any

import click

from tfdoctor.docload import printable
from tfdoctor.pictures.model import (
    GPU_COLUMNS,
    TOPOLOGY_LEGEND,
    Bar,
    ClusterPictures,
    GpuTable,
    TopologyMatrix,
)

UNICODE = ("▇", "░")
ASCII = ("#", ".")
WIDTH = 10
"""Characters of a bar at 100 %."""


def unicode_ok(stream: Any) -> bool:
    """Whether the stream's encoding can carry the bar glyphs (a C locale's ascii cannot)."""
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "".join(UNICODE).encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def draw_bar(bar: Bar, unicode: bool = True, width: int = WIDTH) -> str:
    """The bar's cells: filled to its fraction (capped at full); blank when it is unknown, so
    an unmeasured value never looks like 0 %."""
    full, empty = UNICODE if unicode else ASCII
    fraction = bar.fraction
    if fraction is None:
        return " " * width
    filled = min(width, round(fraction * width))
    if filled == 0 and bar.value:
        filled = 1  # a measured, tiny value still shows
    return full * filled + empty * (width - filled)


def bar_line(bar: Bar, unicode: bool, label_width: int) -> str:
    """`label  ▇▇▇▇▇▇░░░░  61 % of 989 TFLOPS`, with a marker when flagged."""
    mark = f"  << {bar.flag}" if bar.flag else ""
    if bar.fraction is None and (bar.value is not None or bar.scale is None):
        return f"{bar.label:<{label_width}}  {bar.text}{mark}"  # nothing to draw a bar against
    return f"{bar.label:<{label_width}}  {draw_bar(bar, unicode)}  {bar.text}{mark}"


def table_lines(heads: tuple[str, ...], rows: list[tuple[str, ...]], indent: str = "  ") -> list[str]:
    """Columns as wide as their widest cell, two spaces apart; the last is not padded."""
    widths = [max(len(c) for c in col) for col in zip(heads, *rows, strict=True)]
    out = []
    for row in (heads, *rows):
        cells = [c.ljust(w) for c, w in zip(row[:-1], widths, strict=False)] + [row[-1]]
        out.append((indent + "  ".join(cells)).rstrip())
    return out


def render_gpu_table(table: GpuTable | None, unicode: bool = True, color: bool = False) -> list[str]:
    """The GPU section of the plain-text report; nothing when NVML listed no GPU. With `color`,
    a flagged bar's line is yellow too (its `<< low` mark carries the meaning without)."""
    if table is None:
        return []
    lines = [f"GPUs ({len(table.rows)}, as NVML lists them):"]
    body = [printable(line) for line in table_lines(GPU_COLUMNS, [r.cells for r in table.rows])]
    lines.append(body[0])
    label_width = max((len(b.label) for r in table.rows for b in r.bars if b.scale), default=0)
    for row, line in zip(table.rows, body[1:], strict=True):
        lines.append(line)
        for bar in row.bars:
            drawn = "       " + printable(bar_line(bar, unicode, label_width))
            lines.append(click.style(drawn, fg="yellow") if color and bar.flag else drawn)
    tail = []
    if table.peak_source:
        tail.append(f"  Bars: measured by the smoke run against the spec of {table.peak_source}.")
    if table.note:
        tail.append(f"  {table.note}")
    tail.extend(f"  {u}" for u in table.unmatched)
    if table.allreduce is not None:
        tail.append("  " + bar_line(table.allreduce, unicode, len(table.allreduce.label)))
    lines += [printable(line) for line in tail]
    return lines + [""] + (render_topology(table.topology, unicode) if table.topology else [])


def render_topology(matrix: TopologyMatrix, unicode: bool = True) -> list[str]:
    """The matrix like `nvidia-smi topo -m`, its source, then predicted against measured busbw."""
    lines = [f"GPU topology of {matrix.where} ({matrix.source}):"]
    rows = [(label, *cells) for label, cells in zip(matrix.labels, matrix.cells, strict=True)]
    lines += table_lines(("", *matrix.labels), rows)
    if matrix.source.startswith("NVML"):
        lines.append("  " + "; ".join(f"{k} = {v}" for k, v in TOPOLOGY_LEGEND))
    if matrix.busbw is not None:
        lines.append("  " + bar_line(matrix.busbw, unicode, len(matrix.busbw.label)))
    return [printable(line) for line in lines] + [""]


def render_cluster_pictures(pictures: ClusterPictures, unicode: bool = True) -> list[str]:
    """Busbw by message size and the step time of each worker, as bars; then the topologies."""
    lines: list[str] = []
    if pictures.busbw:
        width = max(len(b.label) for b in pictures.busbw)
        lines.append(f"all-reduce busbw by message size ({pictures.busbw_whose}):")
        lines += ["  " + bar_line(b, unicode, width) for b in pictures.busbw]
        lines.append("")
    if pictures.steps:
        width = max(len(b.label) for b in pictures.steps)
        lines.append("compute time per step of each worker (its fastest; longer is slower):")
        lines += ["  " + bar_line(b, unicode, width) for b in pictures.steps]
        lines.append("")
    for matrix in pictures.topologies:
        lines += render_topology(matrix, unicode)
    return [printable(line) for line in lines]
