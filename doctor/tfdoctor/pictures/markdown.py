"""The pictures as Markdown tables with Unicode bars, for the support report.

Values from the machine go in code spans and pipes are escaped, as in share/markdown_facts.py
(a pseudonym such as <gpu-3f2a> would otherwise be read as HTML and vanish).
"""

from __future__ import annotations

from tfdoctor.pictures.model import GPU_COLUMNS, Bar, GpuTable, TopologyMatrix
from tfdoctor.pictures.text import draw_bar


def _cell(text: str) -> str:
    from tfdoctor.share.markdown_facts import code, table_cell

    return table_cell(code(text)) if text else ""


def bar_cell(bar: Bar) -> str:
    """`▇▇▇▇▇▇░░░░` 61 % of 989 TFLOPS; the words alone when there is nothing to draw."""
    from tfdoctor.share.markdown_facts import esc, table_cell

    flag = f" **{bar.flag}**" if bar.flag else ""
    words = table_cell(esc(bar.text)) + flag
    if bar.fraction is None:
        return words
    return f"`{draw_bar(bar)}` {words}"


def gpu_section(table: GpuTable | None) -> list[str]:
    """`### GPUs`: one row per GPU, then the measured bars per GPU; nothing without a GPU."""
    from tfdoctor.share.markdown_facts import esc

    if table is None:
        return []
    lines = [f"### GPUs ({len(table.rows)})", "", "| " + " | ".join(GPU_COLUMNS) + " |",
             "|" + " --- |" * len(GPU_COLUMNS)]
    lines += ["| " + " | ".join(_cell(c) for c in row.cells) + " |" for row in table.rows]
    lines.append("")
    labels = list(dict.fromkeys(b.label for row in table.rows for b in row.bars))
    if labels:
        lines += ["| GPU | " + " | ".join(labels) + " |", "|" + " --- |" * (len(labels) + 1)]
        for row in table.rows:
            by_label = {b.label: b for b in row.bars}
            cells = [bar_cell(by_label[x]) if x in by_label else "" for x in labels]
            lines.append(f"| {row.index} | " + " | ".join(cells) + " |")
        lines.append("")
    if table.peak_source:
        lines += [esc(f"Measured by the smoke run against the spec of {table.peak_source}."), ""]
    for words in (table.note, *table.unmatched):
        if words:
            lines += [esc(words), ""]
    if table.allreduce is not None:
        lines += [f"All-reduce: {bar_cell(table.allreduce)}", ""]
    return lines + (topology_section(table.topology) if table.topology else [])


def topology_section(matrix: TopologyMatrix) -> list[str]:
    """The matrix as a table, like `nvidia-smi topo -m`, and the busbw line."""
    from tfdoctor.share.markdown_facts import esc

    lines = [f"### GPU topology of {esc(matrix.where)} ({esc(matrix.source)})", "",
             "| | " + " | ".join(matrix.labels) + " |", "|" + " --- |" * (len(matrix.labels) + 1)]
    for label, cells in zip(matrix.labels, matrix.cells, strict=True):
        lines.append(f"| {label} | " + " | ".join(_cell(c) for c in cells) + " |")
    lines.append("")
    if matrix.busbw is not None:
        lines += [f"All-reduce busbw: {bar_cell(matrix.busbw)}", ""]
    return lines
