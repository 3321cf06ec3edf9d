"""How report data looks on screen: badges, severities and one-line texts, as Textual Content.

Presentation only: every judgement (status, severity, root cause, verdict) comes from the report.
Styles are theme variables, so themes and NO_COLOR apply; badges carry text, not colour alone.
"""

from __future__ import annotations

from textual.content import Content

from tfdoctor.findings import CheckStatus, Finding, Severity
from tfdoctor.render_text import BADGE
from tfdoctor.report import Report

STATUS_STYLE = {
    CheckStatus.PASSED: "$text-success", CheckStatus.WARNED: "$text-warning",
    CheckStatus.FAILED: "bold $text-error", CheckStatus.NOT_APPLICABLE: "$text-muted",
    CheckStatus.CRASHED: "bold $text-accent", CheckStatus.COULD_NOT_CHECK: "bold $text-accent",
    CheckStatus.NOT_RUN: "$text-muted",
}
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


def verdict_style(report: Report | None, running: bool, failed: bool) -> str:
    """The CSS class of the verdict bar."""
    if failed:
        return "-failed"
    if running or report is None:
        return "-running"
    return f"-{report.verdict}"


def describe_value(value: object) -> str:
    """A fact value on one line; None is "not collected" (facts.py), never shown as empty."""
    if value is None:
        return "(not collected)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value == "" or value == [] or value == {}:
        return "(none)"
    return str(value)
