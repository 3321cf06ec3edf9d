"""In a notebook: `%load_ext tfdoctor` then `%tfdoctor`, or `tfdoctor.check()`.

The diagnosis is of the running kernel as it is: its own interpreter (sys.executable) and its
own environment (os.environ), which is what a kernel started by Jupyter really got, not what a
shell would have. TensorFlow is still probed in child processes, never imported here.
"""

from __future__ import annotations

import html
import json
import os
import shlex
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfdoctor.findings import Finding
    from tfdoctor.report import Report

COLOURS = {"error": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}


class NotebookReport:
    """A report that Jupyter displays as HTML (`_repr_html_`) and scripts read as a dict."""

    def __init__(self, report: Report) -> None:
        self.report = report

    def to_dict(self) -> dict[str, Any]:
        """The same document as `tfdoctor --json`."""
        from tfdoctor.exit_codes import exit_code_for

        return self.report.to_dict(exit_code=int(exit_code_for(self.report, "error")))

    def _repr_html_(self) -> str:
        return render_html(self.report)

    def __repr__(self) -> str:
        from tfdoctor.render_text import render_text

        return render_text(self.report)


def check(*, full: bool = False, as_json: bool = False, budget: float = 300.0) -> Any:
    """Diagnose this kernel (static checks; `full=True` adds the smoke work in a child).
    Returns a NotebookReport (shown as HTML), or the JSON report's dict with `as_json=True`."""
    from tfdoctor.diagnose import SmokeOptions, diagnose
    from tfdoctor.host import Host

    host = Host(env=dict(os.environ), python=sys.executable,
                python_why="the running Jupyter kernel (sys.executable, os.environ)")
    report = diagnose(host, smoke=SmokeOptions(None, budget) if full else None)
    result = NotebookReport(report)
    return result.to_dict() if as_json else result


def magic(line: str) -> Any:
    """`%tfdoctor [--full] [--json]`."""
    words = shlex.split(line)
    unknown = [w for w in words if w not in ("--full", "--json")]
    if unknown:
        raise ValueError(f"%tfdoctor: unknown argument(s) {' '.join(unknown)} "
                         "(usage: %tfdoctor [--full] [--json])")
    result = check(full="--full" in words, as_json="--json" in words)
    return json.dumps(result, indent=2) if isinstance(result, dict) else result


def load(ipython: Any) -> None:
    """Register `%tfdoctor` with this IPython shell."""
    ipython.register_magic_function(magic, magic_kind="line", magic_name="tfdoctor")


def render_html(report: Report) -> str:
    """The report as one self-contained HTML block: headline, target, findings with evidence,
    hint and fix commands, then the checks."""
    from tfdoctor.render_text import headline, summary_line, target_line

    e = html.escape
    parts = ['<div class="tfdoctor-report" style="font-family: sans-serif; line-height: 1.4">',
             f"<h3 style='margin: 0.2em 0'>{e(headline(report))}</h3>",
             f"<div style='color: #555'>{e(target_line(report))}</div>"]
    if report.facts.python.chosen_by:
        parts.append(f"<div style='color: #555'>Diagnosed: {e(report.facts.python.chosen_by)}</div>")
    for f in report.findings:
        parts.append(_finding_html(f))
    parts.append(f"<div style='margin-top: 0.6em'>{e(summary_line(report))}</div></div>")
    return "\n".join(parts)


def _finding_html(f: Finding) -> str:
    e = html.escape
    colour = COLOURS.get(f.severity.value, "#333")
    rows = [f"<div class='tfdoctor-finding' data-id='{e(f.id)}' style='border-left: 4px solid "
            f"{colour}; padding: 0.3em 0.8em; margin: 0.6em 0'>",
            f"<b style='color: {colour}'>{e(f.severity.value)}</b> <code>{e(f.id)}</code>"
            + (f" <span style='color: #777'>(because of {e(f.caused_by)})</span>"
               if f.caused_by else ""),
            f"<div>{e(f.message)}</div>"]
    if f.evidence:
        rows.append("<ul style='margin: 0.2em 0'>" + "".join(
            f"<li><code>{e(k)}</code>: {e(str(v))}</li>" for k, v in f.evidence.items())
            + "</ul>")
    if f.hint:
        rows.append(f"<div><i>hint:</i> {e(f.hint)}</div>")
    rem = f.remediation
    if rem is not None:
        root = " (needs root)" if rem.needs_root else ""
        rows.append(f"<div>fix <code>{e(rem.fix_id)}</code>{e(root)}:</div>")
        if rem.commands:
            rows.append("<pre style='background: #f5f5f5; padding: 0.4em'>"
                        + e("\n".join(f"$ {c}" for c in rem.commands)) + "</pre>")
    for link in f.links:
        rows.append(f"<div>see: <a href='{e(link)}'>{e(link)}</a></div>")
    rows.append("</div>")
    return "\n".join(rows)
