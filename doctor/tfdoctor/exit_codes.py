"""The process exit codes, and the one function that decides them."""

from __future__ import annotations

from enum import IntEnum, unique
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfdoctor.report import Report


INCOMPLETENESS = frozenset({"probe-failed", "check-crashed", "smoke-budget-exhausted"})
"""Findings that say a check could not be made: they make exit code 3, never 1, even with
--fail-on warning (provisioning must tell "broken" from "could not check")."""


@unique
class ExitCode(IntEnum):
    """What a provisioning script can act on; documented in docs/exit-codes.md."""

    OK = 0
    """Healthy: no finding at or above the --fail-on severity."""
    PROBLEMS = 1
    """At least one finding at or above the --fail-on severity (default: error)."""
    USAGE = 2
    """Bad flags or bad input: unknown option value, unreadable facts file, missing interpreter."""
    INCOMPLETE = 3
    """Could not check, and nothing failed: a probe did not finish, a check crashed, or smoke
    work was stopped (Report.incomplete)."""
    INTERNAL = 70
    """A bug in tfdoctor itself (EX_SOFTWARE); the message asks for a report."""
    INTERRUPTED = 130
    """Stopped by Ctrl+C (SIGINT); every child process was killed first."""
    TERMINATED = 143
    """Stopped by SIGTERM (a scheduler's time limit, `timeout`, Kubernetes); children killed first."""


def exit_code_for(report: Report, fail_on: str = "error") -> ExitCode:
    """Problems win over incompleteness: a definite failure is actionable even if a probe hung."""
    from tfdoctor.findings import Severity

    threshold = Severity(fail_on).rank
    if any(f.severity.rank >= threshold for f in report.findings if f.id not in INCOMPLETENESS):
        return ExitCode.PROBLEMS
    if report.incomplete:
        return ExitCode.INCOMPLETE
    return ExitCode.OK
