"""The support report as Markdown: verdict, findings with evidence, then a compact facts table.

Made to be pasted into a ticket or a GitHub issue: every value from the machine is in a code span
(pseudonyms like <user-3f2a9b01> would otherwise be read as HTML and vanish), and prose from the
checks has Markdown's special characters escaped.
"""

from __future__ import annotations

from collections.abc import Iterator

from tfdoctor import __version__
from tfdoctor.findings import CheckStatus, Finding
from tfdoctor.pictures import gpu_table
from tfdoctor.pictures.markdown import gpu_section
from tfdoctor.render_text import headline, summary_line, target_line
from tfdoctor.report import Report
from tfdoctor.share.markdown_facts import (
    code,
    environment_section,
    esc,
    facts_rows,
    libraries_section,
    smoke_section,
    table_cell,
)

STATUS_MARK = {
    CheckStatus.PASSED: "ok",
    CheckStatus.WARNED: "warning",
    CheckStatus.FAILED: "**failed**",
    CheckStatus.NOT_APPLICABLE: "n/a",
    CheckStatus.CRASHED: "**crashed**",
    CheckStatus.COULD_NOT_CHECK: "**could not check**",
    CheckStatus.NOT_RUN: "not run",
}


def render_markdown(
    report: Report, exit_code: int, redaction: str, tables_date: str, notes: tuple[str, ...] = ()
) -> str:
    """The whole Markdown document; `redaction` says in one line what was replaced."""
    lines = [
        "# tfdoctor report",
        "",
        esc(target_line(report)),
        "",
        f"**{esc(headline(report))}**",
        "",
        esc(summary_line(report)),
        "",
    ]
    lines += [f"> {esc(note)}" for note in notes] + ([""] if notes else [])
    lines += [
        "| | |",
        "| --- | --- |",
        f"| exit code | {code(exit_code)} |",
        f"| tfdoctor | {code(__version__)} (facts by {code(report.facts.tool_version)}) |",
        f"| compatibility tables checked | {code(tables_date)} |",
        f"| facts collected | {code(report.facts.collected_at)} |",
        f"| redaction | {esc(redaction)} |",
        "",
    ]
    lines += ["## Findings", ""]
    if not report.findings:
        lines += ["None.", ""]
    for n, finding in enumerate(report.findings, 1):
        lines += list(_finding(n, finding, finding is report.root_cause))
    lines += ["## Checks", "", "| check | status | title |", "| --- | --- | --- |"]
    lines += [
        f"| {code(o.check)} | {STATUS_MARK[o.status]} | "
        f"{esc(o.title + (f' ({o.reason})' if o.reason else ''))} |" for o in report.outcomes
    ]
    lines += ["", "## Facts", "", "| | |", "| --- | --- |"]
    lines += [f"| {name} | {table_cell(value)} |" for name, value in facts_rows(report.facts)]
    lines.append("")
    lines += gpu_section(gpu_table(report.facts))
    lines += _fits_section(report)
    for section in (libraries_section, environment_section, smoke_section):
        lines += section(report.facts)
    lines += [
        "---",
        "",
        "The JSON file beside this one is the full report; "
        "`tfdoctor replay FILE.json` re-diagnoses it with newer rules.",
        "",
    ]
    return "\n".join(lines)


FIT_MARK = {True: "ok", False: "**does not fit**", None: "unknown"}


def _fits_section(report: Report) -> list[str]:
    """What this TensorFlow needs against what the machine has (stack.evaluate)."""
    fits = report.compatibility
    if not fits:
        return []
    lines = ["## Compatibility", "", "| element | has | needs | fits |", "| --- | --- | --- | --- |"]
    lines += [f"| {esc(f.element)} | {esc(f'{f.have} ({f.have_from})')} | "
              f"{esc(f'{f.need} ({f.need_from})')} | {FIT_MARK[f.fits]} |" for f in fits]
    return lines + [""]


def _finding(n: int, f: Finding, root: bool) -> Iterator[str]:
    tag = " (root cause)" if root else f" (because of {code(f.caused_by)})" if f.caused_by else ""
    yield f"### {n}. {f.severity.value}: {code(f.id)}{tag}"
    yield ""
    yield esc(f.message)
    yield ""
    for key, value in f.evidence.items():
        yield f"- {code(key)}: {code(value)}"
    if f.evidence:
        yield ""
    if f.hint:
        yield f"**Hint:** {esc(f.hint)}"
        yield ""
    if f.remediation and f.remediation.commands:
        needs_root = " (needs root)" if f.remediation.needs_root else ""
        yield f"Fix {code(f.remediation.fix_id)}{needs_root}:"
        yield ""
        yield "```sh"
        yield from f.remediation.commands
        yield "```"
        yield ""
    for link in f.links:
        yield f"- <{link}>"
    if f.links:
        yield ""
