"""The GPU panel of the main screen: one row per GPU with its matmul and memory bars.

A view of tfdoctor.pictures' GPU table (the same words as the text, Markdown and HTML
reports). Neighbouring GPUs alike in every cell are one row ("0-7"). Rows that stand out
(a low bar, throttling, a narrow PCIe link) come first when the screen is too short for all
of them; the title says how many are not shown.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from textual.content import Content
from textual.widgets import Static

from tfdoctor.pictures import gpu_table
from tfdoctor.pictures.model import GPU_COLUMNS, Bar, GpuRow, GpuTable, TopologyMatrix
from tfdoctor.pictures.text import draw_bar
from tfdoctor.tui.state import WATCHED, doctor

WIDE = 140
"""From this many columns on, every NVML column and the full bar words are shown."""
MATMUL_ORDER = ("bf16", "fp16", "fp32")
"""The matmul bar a row shows: the first of these that was measured (Tensor Core work first)."""


class GpuPanel(Static):
    """NVML's GPUs and what the smoke run measured on them; hidden without a report or a GPU."""

    DEFAULT_CSS = """
    GpuPanel {
        height: auto;
        border: none;
        border-top: solid $primary;
        border-title-color: $text-primary;
        border-subtitle-color: $text-muted;
        padding: 0 1;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: list[tuple[str, ...]] = []
        """The cells shown, header first, bars as their words (what the tests read)."""
        self.note = ""
        """The line under the rows (the all-reduce, or why nothing was measured)."""
        self._layout_shown: tuple[bool, int] | None = None

    def on_mount(self) -> None:
        for name in WATCHED:
            self.watch(self.app, name, self.show_state, init=False)
        self.show_state()

    def on_resize(self) -> None:
        # Redrawn only when the layout changes (wide or narrow, rows that fit), not per resize.
        if self._layout_shown is not None and self._layout() != self._layout_shown:
            self.show_state()

    def show_state(self, _value: object = None) -> None:
        app = doctor(self)
        table = gpu_table(app.report.facts) if app.report is not None else None
        self.display = table is not None
        if table is not None:
            self.show_table(table)

    def _layout(self) -> tuple[bool, int]:
        """(wide, GPU rows the screen has room for: a sixth of its height, so the findings and
        the failing checks keep theirs at 80x24)."""
        return self.app.size.width >= WIDE, max(1, self.app.size.height // 6 - 1)

    def show_table(self, table: GpuTable) -> None:
        """Draw the pictures' GPU table."""
        wide, fit = self._layout_shown = self._layout()
        measured = any(r.bars for r in table.rows)
        heads = GPU_COLUMNS if wide else ("GPU", "name", "memory", "temp", "throttle")
        if measured:
            heads = (*heads, "matmul", "memory bw")
        rows = _fold(table.rows)
        if len(rows) > fit:
            rows = sorted(rows, key=lambda r: not r.warn)[:fit]
        lines: list[list[Content]] = [[Content.styled(h, "bold") for h in heads]]
        for row in rows:
            cells = [Content(c) for c in (row.cells if wide else _narrow(row))]
            if measured:
                cells += [_bar_cell(_matmul(row), wide, True), _bar_cell(_memory(row), wide, False)]
            lines.append(cells)
        self.rows = [tuple(c.plain for c in line) for line in lines]
        widths = [max(c.cell_length for c in col) for col in zip(*lines, strict=True)]
        text = [Content("  ").join([c.pad_right(w - c.cell_length) for c, w in
                                    zip(line, widths, strict=True)]) for line in lines]
        self.note = _note(table)
        if self.note:
            text.append(Content.styled(self.note, "dim"))
        self.update(Content("\n").join(text))
        hidden = len(table.rows) - sum(_count(r) for r in rows)
        self.border_title = f"GPUs: {len(table.rows)}" + (
            f" ({hidden} not shown: f lists every GPU's facts)" if hidden else "")


def _fold(rows: tuple[GpuRow, ...]) -> list[GpuRow]:
    """Neighbouring GPUs alike in every cell and bar as one row, its first cell "0-7"."""
    out: list[GpuRow] = []
    for row in rows:
        last = out[-1] if out else None
        if last is not None and last.cells[1:] == row.cells[1:] and \
                [b.text for b in last.bars] == [b.text for b in row.bars]:
            first = last.cells[0].split("-")[0]
            out[-1] = replace(last, cells=(f"{first}-{row.cells[0]}", *last.cells[1:]))
        else:
            out.append(row)
    return out


def _count(row: GpuRow) -> int:
    """How many GPUs a (folded) row stands for."""
    first, _, last = row.cells[0].partition("-")
    return int(last) - int(first) + 1 if last else 1


def _links(matrix: TopologyMatrix) -> str:
    """"links: NV18 (28 pairs); all-reduce ...": the matrix in one line."""
    n = len(matrix.labels)
    kinds = Counter(matrix.cells[a][b] for a in range(n) for b in range(a + 1, n))
    words = "links: " + ", ".join(f"{kind} ({count} pairs)" for kind, count in kinds.most_common())
    return words + (f"; all-reduce {matrix.busbw.text}" if matrix.busbw is not None else "")


def _narrow(row: GpuRow) -> tuple[str, ...]:
    index, name, _cc, memory, _pcie, temp, _mig, throttle = row.cells
    return index, name.removeprefix("NVIDIA "), memory, temp, throttle


def _matmul(row: GpuRow) -> Bar | None:
    bars = {b.label: b for b in row.bars}
    measured = [bars[k] for k in MATMUL_ORDER if k in bars and bars[k].value is not None]
    return measured[0] if measured else bars.get("fp32") or (row.bars[0] if row.bars else None)


def _memory(row: GpuRow) -> Bar | None:
    return next((b for b in row.bars if b.label == "memory"), None)


def _bar_cell(bar: Bar | None, wide: bool, labelled: bool) -> Content:
    if bar is None:
        return Content("")
    label = f"{bar.label} " if labelled and bar.label != "throughput" else ""
    if bar.fraction is None:
        return Content.styled(label + bar.text, "$text-muted" if bar.value is None else "")
    words = bar.text if wide else bar.text.split(" of ")[0]
    style = "bold $text-warning" if bar.flag else "$text-success"
    return Content.assemble(label, (draw_bar(bar, width=10 if wide else 6), style), " ", words)


def _note(table: GpuTable) -> str:
    """The line under the rows: why nothing was measured, the all-reduce, unmatched devices."""
    parts = [table.note] if table.note else []
    if table.allreduce is not None:
        parts.append("all-reduce " + table.allreduce.text.split(";")[0])
    parts += list(table.unmatched)
    if table.topology is not None:
        parts.append(_links(table.topology))
    return " | ".join(p for p in parts if p)
