"""What the TUI shows of one report, read back from its widgets, and the agreement rules between
those places (verdict, findings pane and title, checks table and title, facts tree), plus the
text and Markdown reports of the same report. Shared by test_consistency.py's states."""

from __future__ import annotations

import re
from dataclasses import dataclass

from textual.widgets import Tree
from tfdoctor.findings import CheckStatus
from tfdoctor.render_text import render_text
from tfdoctor.report import Report
from tfdoctor.share.markdown_facts import smoke_section
from tfdoctor.tui.app import DoctorApp
from tfdoctor.tui.widgets.tables import FOLD_KEY, FindingsList, OutcomesTable

from tui.kit import screen_text

LABELS = {"failed": "[XX]", "warned": "[!!]", "crashed": "[??]", "could not check": "[??]",
          "did not run": "[..]", "do not apply here": "[--]"}
"""The Checks title's labels and the badge each one's rows carry."""


@dataclass
class Shown:
    """The main screen of one report, as a user reads it."""

    screen: str
    findings_title: str
    findings: list[str]
    checks_title: str
    badges: dict[str, str]
    """check id -> the badge on its row."""


def read_main(app: DoctorApp) -> Shown:
    findings = app.screen.query_one(FindingsList)
    table = app.screen.query_one(OutcomesTable)
    prompts = [str(findings.get_option_at_index(i).prompt) for i in range(findings.option_count)]
    screen = screen_text(app)
    folded = _fold_words(table)
    if table.folded:  # what a user sees after Enter on the "N passed, M not applicable" row
        table.toggle_fold()
    rows = {str(row.key.value): str(table.get_cell_at((i, 0)))
            for i, row in enumerate(table.ordered_rows)}
    badges = {k: v for k, v in rows.items() if k != FOLD_KEY}
    # The folded row's counts are the rows it opens into.
    if folded is not None:
        counts = {w: n for n, w in re.findall(r"(\d+) (passed|not applicable)", folded)}
        assert int(counts.get("passed", 0)) == sum(b == "[ok]" for b in badges.values()), folded
        assert int(counts.get("not applicable", 0)) == sum(b == "[--]" for b in badges.values())
    return Shown(screen, str(findings.border_title), prompts, str(table.border_title), badges)


def _fold_words(table: OutcomesTable) -> str | None:
    """The folded row's "N passed, M not applicable", None when the table has none."""
    keys = [str(r.key.value) for r in table.ordered_rows]
    return str(table.get_cell_at((keys.index(FOLD_KEY), 1))) if FOLD_KEY in keys else None


def title_counts(title: str) -> tuple[int, int, dict[str, int]]:
    """'Checks: 3 of 9 passed, 2 failed, 4 do not apply here' -> (3, 9, {failed: 2, ...})."""
    m = re.fullmatch(r"Checks: (\d+) of (\d+) passed((?:, \d+ [a-z ]+)*)", title)
    assert m, title
    rest = {label: int(n) for n, label in re.findall(r", (\d+) ([a-z ]+)", m[3])}
    assert set(rest) <= set(LABELS), rest
    return int(m[1]), int(m[2]), rest


def assert_consistent(shown: Shown, report: Report) -> None:
    """Every count and state shown agrees with every other place that shows it."""
    verdict = shown.screen.splitlines()[0]
    # The checks title adds up to the rows, and each count to the rows with its badge.
    passed, total, rest = title_counts(shown.checks_title)
    assert total == len(shown.badges) == passed + sum(rest.values()), shown.checks_title
    assert passed == sum(b == "[ok]" for b in shown.badges.values()), shown.checks_title
    for badge in set(LABELS.values()):
        rows = sum(b == badge for b in shown.badges.values())
        assert rows == sum(n for label, n in rest.items() if LABELS[label] == badge), (
            badge, shown.checks_title)
    # The verdict's "N check(s) could not check or did not run" is the title's two counts.
    said = re.search(r"(\d+) check\(s\) could not check or did not run", verdict)
    unjudged = rest.get("could not check", 0) + rest.get("did not run", 0)
    if said:
        assert int(said[1]) == unjudged, (verdict, shown.checks_title)
    # "every check passed" only above rows that all passed (or do not apply), under "healthy".
    if any("every check" in p and "passed" in p for p in shown.findings):
        assert set(shown.badges.values()) <= {"[ok]", "[--]"}, shown.badges
        assert "Verdict: healthy" in verdict
    if unjudged or rest.get("crashed"):
        assert "Verdict: healthy" not in verdict
        assert not any("every check" in p for p in shown.findings), shown.findings
    # The findings title counts what the pane lists (a "+N alike" line stands for N+1).
    m = re.fullmatch(r"Findings: (\d+) error, (\d+) warning, (\d+) info", shown.findings_title)
    assert m, shown.findings_title
    listed = {"error": 0, "warning": 0, "info": 0}
    for prompt in shown.findings:
        sev = prompt.split(" ", 1)[0]
        if sev in listed:
            alike = re.search(r"\+(\d+) alike", prompt.splitlines()[0])
            listed[sev] += 1 + (int(alike[1]) if alike else 0)
    assert (int(m[1]), int(m[2]), int(m[3])) == tuple(listed.values()), (m[0], shown.findings)
    # At most one root cause, and it is the one the verdict names.
    roots = [p.split()[1] for p in shown.findings if "root cause" in p.splitlines()[0]]
    named = re.search(r"root cause: ([\w-]+)", verdict)
    assert roots == ([named[1]] if named else []), (roots, verdict)
    # GPU counts: a check never passes on GPUs nobody saw; NCCL's note matches the GPUs.
    gpus = re.search(r"\| (\d+) GPU\(s\)", shown.screen)
    smoke = report.facts.smoke
    tf_gpus = sum(d.device_type == "GPU" for d in smoke.devices) if smoke else 0
    if smoke is not None and tf_gpus == 0:
        assert shown.badges.get("smoke-gpus") != "[ok]", shown.badges
        assert shown.badges.get("smoke-tensor-cores") != "[ok]", shown.badges
    if gpus and int(gpus[1]) >= 2:
        assert not any("fewer than two GPUs" in p for p in shown.findings), shown.findings
    assert_reports_agree(report)


def assert_reports_agree(report: Report) -> None:
    """The text report and the support report's smoke section say what the smoke facts say."""
    text = render_text(report, verbose=True)
    smoke = report.facts.smoke
    if smoke is None:
        return
    markdown = "\n".join(smoke_section(report.facts))
    imported = smoke.recipe("import")
    if imported is not None and imported.status == "error":
        assert "completed" not in text.split("Smoke work", 1)[1].splitlines()[0]
        assert "Smoke run: `completed`" not in markdown
    for r in smoke.recipes:
        if r.name == "tensor-cores" and r.device and not r.device.startswith("GPU"):
            assert not re.search(r"\[ok\] tensor-cores ", text), text
            assert f"| `tensor-cores` | `{r.device}` | passed" not in markdown
    shown_status = {o.check: o.status for o in report.outcomes}
    if smoke and not any(d.device_type == "GPU" for d in smoke.devices):
        assert shown_status.get("smoke-gpus") is not CheckStatus.PASSED


def assert_facts_tree(tree: Tree[str], report: Report) -> int:
    """"(not collected)" exactly where the facts say a value was not collected; how many leaves."""
    leaves = 0
    for node in _walk(tree.root):
        if node.children or not node.data:
            continue
        leaves += 1
        label = str(node.label)
        if label.endswith("(not collected)"):
            assert not report.facts.known(node.data), label
        elif label.endswith(": (none)"):
            assert report.facts.known(node.data), label
    return leaves


def _walk(node):  # type: ignore[no-untyped-def]
    yield node
    for child in node.children:
        yield from _walk(child)
