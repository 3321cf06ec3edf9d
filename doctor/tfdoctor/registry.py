"""The ordered check registry and the runner that contains crashes.

Registration order is display order and also root-cause order: areas are imported from the
bottom of the stack up (driver, then CUDA, then TensorFlow, then Python packages), so the
first error that nothing explains is the root cause.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tfdoctor.findings import CheckOutcome, CheckStatus, Finding, Severity

if TYPE_CHECKING:
    from tfdoctor.facts import Facts

CheckFunc = Callable[["Facts", "CheckConfig"], Iterable[Finding]]


class NotApplicable(Exception):  # noqa: N818  (a signal, not an error)
    """Raised by a check's guard clause: nothing here to judge (shown as [--], not [ok]); an
    optional reason says why (e.g. what this user may not read)."""

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason or "")
        self.reason = reason


class CouldNotCheck(Exception):  # noqa: N818  (a signal, not an error)
    """Raised by a check whose facts were not collected: shown as could-not-check, never passed."""

    def __init__(self, *missing: str, reason: str | None = None) -> None:
        super().__init__(reason or "not collected: " + ", ".join(missing))
        self.missing = missing
        self.reason = reason or "not collected: " + ", ".join(missing)


class NotRun(Exception):  # noqa: N818  (a signal, not an error)
    """Raised by a check whose input was never produced (smoke work stopped, cancelled, cut short,
    or impossible without a GPU): shown as not-run with the reason, never passed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class CheckConfig:
    """What the user asked for that the facts cannot know (recorded in the report for replay)."""

    expect_gpus: int | None = None


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A registered check."""

    id: str
    title: str
    area: str
    func: CheckFunc
    finding_ids: tuple[str, ...]
    """Every finding id this check can emit (documented in docs/checks.md)."""
    needs: str | None
    """Fact section that must be present for the check to apply ("tensorflow", "smoke")."""
    reads: tuple[str, ...] = ()
    """Fact paths (facts.UNKNOWABLE keys) it cannot judge without: any of them unknown makes the
    outcome could-not-check, with those paths as what to collect."""

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip()


_REGISTRY: dict[str, CheckSpec] = {}


def check(
    id: str,
    title: str,
    area: str,
    emits: tuple[str, ...],
    needs: str | None = None,
    reads: tuple[str, ...] = (),
) -> Callable[[CheckFunc], CheckFunc]:
    """Register a check function under a stable kebab-case id."""

    def register(func: CheckFunc) -> CheckFunc:
        if id in _REGISTRY:
            raise RuntimeError(f"duplicate check id {id}")
        _REGISTRY[id] = CheckSpec(id, title, area, func, emits, needs, reads)
        return func

    return register


def registered() -> tuple[CheckSpec, ...]:
    """The checks registered so far, in registration order (tfdoctor.checks.all_checks imports them
    all first)."""
    return tuple(_REGISTRY.values())


def run_check(spec: CheckSpec, facts: Facts, config: CheckConfig) -> CheckOutcome:
    """Run one check; an exception becomes a CRASHED outcome with its own finding."""
    missing = facts.unknown_of(*spec.reads)
    if missing:
        return _could_not_check(spec, CouldNotCheck(*missing))
    if spec.needs and getattr(facts, spec.needs) is None:
        return CheckOutcome(spec.id, spec.area, spec.title, CheckStatus.NOT_APPLICABLE)
    try:
        findings = tuple(f.with_check(spec.id) for f in spec.func(facts, config))
    except NotApplicable as exc:
        return CheckOutcome(spec.id, spec.area, spec.title, CheckStatus.NOT_APPLICABLE, reason=exc.reason)
    except CouldNotCheck as exc:
        return _could_not_check(spec, exc)
    except NotRun as exc:
        return CheckOutcome(spec.id, spec.area, spec.title, CheckStatus.NOT_RUN, reason=exc.reason)
    except Exception as exc:  # noqa: BLE001  (a broken rule must not hide the others)
        where = traceback.extract_tb(exc.__traceback__)[-1]
        crash = Finding(
            id="check-crashed",
            severity=Severity.WARNING,
            message=f"The check {spec.id} crashed, so its area was not judged.",
            evidence={"exception": f"{type(exc).__name__}: {exc}", "at": f"{where.filename}:{where.lineno}"},
            hint="Please report this with the saved facts (tfdoctor --save facts.json).",
            check=spec.id,
        )
        return CheckOutcome(spec.id, spec.area, spec.title, CheckStatus.CRASHED, (crash,))
    return CheckOutcome(spec.id, spec.area, spec.title, _status(findings), findings)


def _could_not_check(spec: CheckSpec, exc: CouldNotCheck) -> CheckOutcome:
    return CheckOutcome(spec.id, spec.area, spec.title, CheckStatus.COULD_NOT_CHECK,
                        reason=exc.reason, missing=tuple(exc.missing))


def _status(findings: tuple[Finding, ...]) -> CheckStatus:
    worst = max((f.severity.rank for f in findings), default=-1)
    if worst >= Severity.ERROR.rank:
        return CheckStatus.FAILED
    if worst >= Severity.WARNING.rank:
        return CheckStatus.WARNED
    return CheckStatus.PASSED


def iter_findings(outcomes: Iterable[CheckOutcome]) -> Iterator[Finding]:
    for outcome in outcomes:
        yield from outcome.findings
