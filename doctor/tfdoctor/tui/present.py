"""How report data looks on screen: badges, severities and one-line texts, as Textual Content.

Presentation only: every judgement (status, severity, root cause, verdict) comes from the report.
Styles are theme variables, so themes and NO_COLOR apply; badges carry text, not colour alone.
"""

from __future__ import annotations

from textual.content import Content

from tfdoctor.findings import CheckStatus, Finding, Severity
from tfdoctor.render_text import BADGE
from tfdoctor.report import UNJUDGED, Report

STATUS_STYLE = {
    CheckStatus.PASSED: "$text-success", CheckStatus.WARNED: "$text-warning",
    CheckStatus.FAILED: "bold $text-error", CheckStatus.NOT_APPLICABLE: "$foreground",
    CheckStatus.CRASHED: "bold $text-accent", CheckStatus.COULD_NOT_CHECK: "bold $text-accent",
    CheckStatus.NOT_RUN: "$foreground",
}
"""Not-applicable and not-run badges are body text, not muted: their glyph ([--], [..]) says
what they are, and muted grey on the table's stripes fell to a 1.2 contrast (1.0 at 16 colours:
black on black). tests/tui/test_colour.py renders every colour system and theme."""
SEVERITY_STYLE = {
    Severity.ERROR: "bold $text-error", Severity.WARNING: "$text-warning",
    Severity.INFO: "$text-primary",
}
PENDING = Content.styled("[..]", "$text-muted")

AREA_SECTIONS = {
    "driver": ("driver",), "gpu": ("driver",), "cuda": ("cuda_driver", "libraries", "xla"),
    "tensorflow": ("tensorflow",), "platform": ("platform",), "python": ("python",),
    "environment": ("env",), "tfdoctor": ("probe_issues",), "smoke": ("smoke",),
}
"""The fact sections a check area reads: shown as "the facts behind" a finding."""


def status_badge(status: CheckStatus) -> Content:
    return Content.styled(BADGE[status][0], STATUS_STYLE[status])


def severity_tag(severity: Severity) -> Content:
    return Content.styled(f"{severity.value:<7}", SEVERITY_STYLE[severity])


def finding_line(finding: Finding, report: Report, alike: int = 0) -> Content:
    """Two lines for the findings list: tag, id and its place in the causal chain (and how many
    more alike it stands for); the message."""
    if finding is report.root_cause:
        place = Content.styled("  root cause", "bold $text-error")
    elif finding.caused_by:
        place = Content.styled(f"  because of {finding.caused_by}", "$text-muted")
    else:
        place = Content("")
    more = Content.styled(f"  +{alike} alike", "$text-muted") if alike else Content("")
    return Content.assemble(severity_tag(finding.severity), " ", (finding.id, "bold"), place,
                            more, "\n", finding.message)


CHECK_TALLY = (
    (CheckStatus.FAILED, "failed"), (CheckStatus.WARNED, "warned"),
    (CheckStatus.CRASHED, "crashed"), (CheckStatus.COULD_NOT_CHECK, "could not check"),
    (CheckStatus.NOT_RUN, "did not run"), (CheckStatus.NOT_APPLICABLE, "do not apply here"),
)
"""The statuses the Checks title counts after "N of M passed", in that order."""


def checks_title(report: Report) -> str:
    """The Checks pane's title: every outcome counted once, so its numbers add up to the rows and
    to the verdict's "N check(s) could not check or did not run"."""
    outcomes = report.outcomes
    passed = sum(o.status is CheckStatus.PASSED for o in outcomes)
    rest = [f"{n} {label}" for status, label in CHECK_TALLY
            if (n := sum(o.status is status for o in outcomes))]
    return ", ".join([f"Checks: {passed} of {len(outcomes)} passed", *rest])


def findings_title(report: Report) -> str:
    """The Findings pane's title: the report's counts by severity."""
    counts = report.counts()
    return f"Findings: {counts['error']} error, {counts['warning']} warning, {counts['info']} info"


def no_findings_text(report: Report) -> str:
    """What the findings pane says when there are none: "every check passed" only when it is so
    (a stopped or partial run found nothing in what it checked, which is not the same)."""
    unjudged = [o for o in report.outcomes if o.status in UNJUDGED]
    if unjudged or report.incomplete:
        what = (f"{len(unjudged)} check(s) could not check, crashed or did not run"
                if unjudged else "a probe did not finish")
        return f"No findings in what was checked, but {what}: the verdict is incomplete."
    if any(o.status is CheckStatus.NOT_APPLICABLE for o in report.outcomes):
        return "No findings: every check that applies here passed."
    return "No findings: every check passed."


def verdict_style(report: Report | None, running: bool, failed: bool) -> str:
    """The CSS class of the verdict bar."""
    if failed:
        return "-failed"
    if running or report is None:
        return "-running"
    return f"-{report.verdict}"


def describe_value(value: object, known: bool = True) -> str:
    """A fact value on one line. "(not collected)" only where the facts say so (`known` false:
    Facts.unknown, facts.py), for a None, false or empty value; a collected None is "(none)" (a
    library that did not load, a field this driver does not report), never "not collected"."""
    empty = value is None or value is False or value == "" or value == [] or value == {}
    if not known and empty:
        return "(not collected)"
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value == "" or value == [] or value == {}:
        return "(none)"
    return str(value)
