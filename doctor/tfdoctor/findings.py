"""What checks produce: findings, their severities, and the per-check outcome."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum


class Severity(str, Enum):
    """How bad a finding is. ERROR: TensorFlow will not use the GPU or will fail."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class CheckStatus(str, Enum):
    """One row per check: what happened when it ran."""

    PASSED = "passed"
    WARNED = "warned"
    FAILED = "failed"
    NOT_APPLICABLE = "not-applicable"
    COULD_NOT_CHECK = "could-not-check"
    """The facts it reads were not collected (a probe failed, a ticket was silent): never passed."""
    NOT_RUN = "not-run"
    """Its input was never produced (smoke work stopped, cancelled or cut short): never passed."""
    CRASHED = "crashed"


class Command(str):
    """A command as the user sees it (one line, quoted for a POSIX shell) that keeps the argv it was
    made from: the fix planner runs `argv`, never a parse of the shown string."""

    argv: tuple[str, ...]

    def __new__(cls, argv: Sequence[str]) -> Command:
        made = super().__new__(cls, shlex.join(argv))
        made.argv = tuple(argv)
        return made


@dataclass(frozen=True, slots=True)
class Remediation:
    """A machine-usable fix: the fix id (a script in fixes/ or a manual recipe) and exact commands
    (a `Command` where a program runs, so its argv travels with it)."""

    fix_id: str
    commands: tuple[str, ...] = ()
    needs_root: bool = False


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: message says what is wrong, hint what to do, evidence why we think so."""

    id: str
    severity: Severity
    message: str
    evidence: dict[str, str] = field(default_factory=dict)
    hint: str | None = None
    remediation: Remediation | None = None
    links: tuple[str, ...] = ()
    check: str = ""
    """Id of the check that produced it (set by the runner)."""
    caused_by: str | None = None
    """Id of the root-cause finding this one follows from (set when the report is built)."""

    def with_check(self, check_id: str) -> Finding:
        return replace(self, check=check_id)


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """The result of running one check."""

    check: str
    area: str
    title: str
    status: CheckStatus
    findings: tuple[Finding, ...] = ()
    reason: str | None = None
    """Why it could not check or did not run (could-not-check, not-run)."""
    missing: tuple[str, ...] = ()
    """Fact paths (UNKNOWABLE keys) it needed and did not have (could-not-check)."""
