"""The support report as one self-contained HTML page: the verdict, the GPU table with inline
SVG bar charts of the measured throughput against spec, the findings and the checks, and the
Markdown report itself.

No external resource of any kind (a Content-Security-Policy of default-src 'none' says so to
the browser too): the page is a file attached to a ticket and opened offline. It is rendered
from the same redacted report as the Markdown (share/support.py), never from raw facts.
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape

from tfdoctor.docload import printable
from tfdoctor.findings import Finding
from tfdoctor.pictures import gpu_table
from tfdoctor.pictures.model import GPU_COLUMNS, Bar, GpuTable, TopologyMatrix
from tfdoctor.render_text import headline, summary_line, target_line
from tfdoctor.report import Report

COLORS = {"ok": "#2e7d32", "low": "#e65100", "track": "#e0e0e0", "unknown": "#9e9e9e"}
"""Bar fills: a measured bar, one under half its peak, the empty track, an unmeasured outline."""

LABEL_W, TRACK_W, ROW_H, BAR_H = 190, 420, 24, 14
"""SVG geometry in px: the label column, a full bar, a row, a bar's height."""

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #1a1a1a; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px 0; } h2 { font-size: 16px; margin: 20px 0 6px 0; }
.verdict { font-weight: bold; padding: 6px 10px; border-radius: 4px; display: inline-block; }
.v-healthy { background: #e8f5e9; } .v-problems { background: #ffebee; }
.v-incomplete { background: #fff8e1; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left;
  border-bottom: 1px solid #eee; font-size: 13px; } th { background: #f5f5f5; }
code, pre { font: 12px ui-monospace, monospace; } pre { background: #f5f5f5; padding: 6px; }
.error { color: #b71c1c; } .warning { color: #8d5300; } .muted { color: #666; }
svg text { font: 12px system-ui, sans-serif; fill: #1a1a1a; }
"""


def render_html(report: Report, exit_code: int, redaction: str, markdown: str) -> str:
    """The whole page; `markdown` is the Markdown report of the same redacted report."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">",
        "<title>tfdoctor report</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>tfdoctor report</h1>",
        f'<p class="muted">{_t(target_line(report))}</p>',
        f'<p class="verdict v-{escape(report.verdict)}" id="verdict">{_t(headline(report))}</p>',
        f"<p>{_t(summary_line(report))}</p>",
    ]
    # The charts come right after the verdict: what people look at first, above the fold.
    parts += list(gpu_html(gpu_table(report.facts)))
    parts.append(f'<p class="muted">exit code {exit_code}; facts collected '
                 f"{_t(report.facts.collected_at)}; redaction: {_t(redaction)}</p>")
    parts += list(_findings(report))
    parts += list(_checks(report))
    parts += [
        "<h2>The Markdown report</h2>",
        f"<details><summary>Show</summary><pre>{_t(markdown, keep_newlines=True)}</pre></details>",
        "</body></html>",
        "",
    ]
    return "\n".join(parts)


def gpu_html(table: GpuTable | None) -> Iterator[str]:
    """The GPU section: the throughput chart (SVG), then the table of NVML's facts."""
    if table is None:
        return
    yield f'<h2 id="gpus">GPUs ({len(table.rows)})</h2>'
    rows = [(f"GPU {r.index}: {r.cells[1]}", r.bars) for r in table.rows if r.bars]
    if rows:
        yield bars_svg("gpu-throughput", "Measured throughput against spec peak", rows)
    if table.peak_source:
        yield f'<p class="muted">Measured by the smoke run against the spec of {_t(table.peak_source)}.</p>'
    for words in (table.note, *table.unmatched):
        if words:
            yield f"<p>{_t(words)}</p>"
    if table.allreduce is not None:
        yield f'<p id="allreduce">All-reduce: {_t(table.allreduce.text)}</p>'
    yield "<table id=\"gpu-table\"><tr>" + "".join(f"<th>{escape(h)}</th>" for h in GPU_COLUMNS) + "</tr>"
    for r in table.rows:
        yield "<tr>" + "".join(f"<td>{_t(c)}</td>" for c in r.cells) + "</tr>"
    yield "</table>"
    if table.topology is not None:
        yield from topology_html(table.topology)


def topology_html(matrix: TopologyMatrix) -> Iterator[str]:
    """The matrix like `nvidia-smi topo -m`, then measured against predicted busbw as a bar."""
    yield f'<h3 id="topology">GPU topology of {_t(matrix.where)} ({_t(matrix.source)})</h3>'
    yield '<table id="topology-matrix"><tr><th></th>' + "".join(
        f"<th>{_t(label)}</th>" for label in matrix.labels) + "</tr>"
    for label, cells in zip(matrix.labels, matrix.cells, strict=True):
        yield f"<tr><th>{_t(label)}</th>" + "".join(f"<td>{_t(c)}</td>" for c in cells) + "</tr>"
    yield "</table>"
    if matrix.busbw is not None:
        yield bars_svg("allreduce-busbw", "All-reduce bus bandwidth against the topology",
                       [("All-reduce", (matrix.busbw,))])


def bars_svg(svg_id: str, title: str, groups: list[tuple[str, tuple[Bar, ...]]]) -> str:
    """A horizontal bar chart: a heading row per group, a row per bar (track, fill, words)."""
    out: list[str] = []
    y = 0
    for heading, bars in groups:
        out.append(f'<text x="0" y="{y + 16}" font-weight="bold">{_t(heading)}</text>')
        y += ROW_H
        for bar in bars:
            out.extend(_bar_svg(bar, y))
            y += ROW_H
    width = LABEL_W + TRACK_W + 380
    return (f'<svg id="{svg_id}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
            f'viewBox="0 0 {width} {y}" role="img" aria-label="{escape(title)}">'
            f"<title>{escape(title)}</title>" + "".join(out) + "</svg>")


def _bar_svg(bar: Bar, y: int) -> Iterator[str]:
    top = y + (ROW_H - BAR_H) // 2
    yield f'<text x="16" y="{y + 16}">{_t(bar.label)}</text>'
    fraction = bar.fraction
    words_x = LABEL_W + TRACK_W + 10
    if fraction is None and bar.value is not None:
        words_x = LABEL_W  # a value with nothing to measure it against: words only
    elif fraction is None:
        yield (f'<rect class="unknown" x="{LABEL_W}" y="{top}" width="{TRACK_W}" height="{BAR_H}" '
               f'fill="none" stroke="{COLORS["unknown"]}" stroke-dasharray="4 3"/>')
    else:
        fill = min(TRACK_W, round(fraction * TRACK_W))
        kind = "low" if bar.flag else "ok"
        yield (f'<rect class="track" x="{LABEL_W}" y="{top}" width="{TRACK_W}" height="{BAR_H}" '
               f'fill="{COLORS["track"]}"/>')
        yield (f'<rect class="bar {kind}" data-fraction="{fraction:.4f}" x="{LABEL_W}" y="{top}" '
               f'width="{fill}" height="{BAR_H}" fill="{COLORS[kind]}"/>')
    yield f'<text x="{words_x}" y="{y + 16}">{_t(bar.text)}</text>'


def _findings(report: Report) -> Iterator[str]:
    yield '<h2 id="findings">Findings</h2>'
    if not report.findings:
        yield "<p>None.</p>"
    for f in report.findings:
        yield from _finding(f, f is report.root_cause)


def _finding(f: Finding, root: bool) -> Iterator[str]:
    tag = " (root cause)" if root else f" (because of {f.caused_by})" if f.caused_by else ""
    yield (f'<h3 class="{f.severity.value}">{f.severity.value}: <code>{_t(f.id)}</code>'
           f"{_t(tag)}</h3>")
    yield f"<p>{_t(f.message)}</p>"
    if f.evidence:
        yield "<ul>" + "".join(f"<li><code>{_t(k)}</code>: <code>{_t(v)}</code></li>"
                               for k, v in f.evidence.items()) + "</ul>"
    if f.hint:
        yield f"<p><b>Hint:</b> {_t(f.hint)}</p>"
    if f.remediation and f.remediation.commands:
        yield f"<p>Fix <code>{_t(f.remediation.fix_id)}</code>:</p>"
        yield "<pre>" + _t("\n".join(f.remediation.commands), keep_newlines=True) + "</pre>"


def _checks(report: Report) -> Iterator[str]:
    yield '<h2 id="checks">Checks</h2><table><tr><th>check</th><th>status</th><th>title</th></tr>'
    for o in report.outcomes:
        why = f" ({o.reason})" if o.reason else ""
        yield (f"<tr><td><code>{_t(o.check)}</code></td><td>{escape(o.status.value)}</td>"
               f"<td>{_t(o.title + why)}</td></tr>")
    yield "</table>"


def _t(text: str, keep_newlines: bool = False) -> str:
    """Text from the facts, made printable and HTML-escaped."""
    return escape(printable(str(text), keep_newlines=keep_newlines))
