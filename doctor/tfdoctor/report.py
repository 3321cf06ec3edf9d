"""The report: facts, every check's outcome, the findings with their root cause, and the verdict."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfdoctor.asks import AskFor, ask_for
from tfdoctor.checks import run_checks
from tfdoctor.errors import InputFileError
from tfdoctor.facts import READABLE_SCHEMAS, SCHEMA_VERSION, Facts
from tfdoctor.facts_smoke import LogCause
from tfdoctor.findings import CheckOutcome, CheckStatus, Finding, Severity
from tfdoctor.knowledge import catalogue
from tfdoctor.registry import CheckConfig, iter_findings
from tfdoctor.stack import Fit, evaluate

UNJUDGED = frozenset({CheckStatus.CRASHED, CheckStatus.COULD_NOT_CHECK, CheckStatus.NOT_RUN})
"""Outcomes that leave an area unjudged: the verdict is incomplete unless a problem was found."""

GENERIC = frozenset(c.id for c in catalogue().causes.values() if c.generic)
"""Findings that say something failed without saying why: ranked after any specific cause."""


@dataclass(frozen=True, slots=True)
class Report:
    """Everything a renderer needs; built only by `build_report`."""

    facts: Facts
    config: CheckConfig
    outcomes: tuple[CheckOutcome, ...]
    findings: tuple[Finding, ...]
    """Root cause first, then by severity, then in check order."""

    @property
    def root_cause(self) -> Finding | None:
        """The first finding, only on a verdict with problems (an error that nothing explains)."""
        first = self.findings[0] if self.findings else None
        if first is None or first.severity is not Severity.ERROR or first.caused_by:
            return None
        return first

    @property
    def incomplete(self) -> bool:
        """A probe did not finish, a check crashed, could not check or did not run, or smoke work
        was stopped: partial verdict."""
        stopped = self.facts.smoke is not None and self.facts.smoke.outcome == "cancelled"
        return stopped or bool(self.facts.probe_issues) or any(
            o.status in UNJUDGED for o in self.outcomes
        )

    @property
    def ask_for(self) -> tuple[AskFor, ...]:
        """What to collect to judge the checks that could not check, most useful first."""
        return ask_for(self)

    @property
    def compatibility(self) -> tuple[Fit, ...]:
        """What this TensorFlow needs against what the machine has, one element each (stack.py)."""
        return evaluate(self.facts)

    @property
    def verdict(self) -> str:
        """healthy, problems or incomplete (errors only count as problems)."""
        if any(f.severity is Severity.ERROR for f in self.findings):
            return "problems"
        return "incomplete" if self.incomplete else "healthy"

    def counts(self) -> dict[str, int]:
        return {s.value: sum(f.severity is s for f in self.findings) for s in Severity}

    def to_dict(self, exit_code: int | None = None) -> dict[str, Any]:
        """The --json document (docs/json-report.md, docs/report.schema.json)."""
        root = self.root_cause
        return {
            "schema_version": SCHEMA_VERSION,
            "tool_version": self.facts.tool_version,
            "verdict": {
                "status": self.verdict,
                "root_cause": root.id if root else None,
                "counts": self.counts(),
                "exit_code": exit_code,
            },
            "config": {"expect_gpus": self.config.expect_gpus},
            "findings": [_finding_dict(f) for f in self.findings],
            "outcomes": [
                {"check": o.check, "area": o.area, "title": o.title, "status": o.status.value,
                 "findings": [f.id for f in o.findings], "reason": o.reason, "missing": list(o.missing)}
                for o in self.outcomes
            ],
            "ask_for": [{"fact": a.fact, "command": a.command, "decides": list(a.decides)}
                        for a in self.ask_for],
            "compatibility": [{"element": c.element, "need": c.need, "need_from": c.need_from,
                               "have": c.have, "have_from": c.have_from, "fits": c.fits}
                              for c in self.compatibility],
            "facts": self.facts.to_dict(),
        }


def _finding_dict(f: Finding) -> dict[str, Any]:
    rem = f.remediation
    return {
        "id": f.id,
        "severity": f.severity.value,
        "check": f.check,
        "message": f.message,
        "evidence": dict(f.evidence),
        "hint": f.hint,
        "remediation": None if rem is None else
        {"fix_id": rem.fix_id, "commands": list(rem.commands), "needs_root": rem.needs_root},
        "links": list(f.links),
        "caused_by": f.caused_by,
    }


def build_report(facts: Facts, config: CheckConfig = CheckConfig(),
                 only: list[str] | None = None) -> Report:
    """Judge the facts: run the checks, link consequences to root causes, order the findings."""
    outcomes = run_checks(facts, config, only)
    return Report(facts, config, outcomes, rank_findings(list(iter_findings(outcomes))))


def rank_findings(raw: list[Finding]) -> tuple[Finding, ...]:
    """Link each finding to the cause that explains it, then order: root cause first.

    A finding is explained by the present finding it names (`caused_by`, set by its check) or by
    a present one whose catalogue record explains it (its id, or every finding of its check);
    among several, the one that is not itself explained wins. The root cause is the unexplained
    error that explains the most others; generic findings (no GPUs, TensorFlow missing, a smoke
    crash) never outrank a specific one; ties keep check order (bottom of the stack first).
    """
    present = list(dict.fromkeys(f.id for f in raw if f.severity is not Severity.INFO))

    def causes_of(f: Finding) -> list[str]:
        explainers = catalogue().explainers(f.id, f.check)
        return [c for c in present if c in explainers]

    # A check may name the cause itself (one log line explained by another): that link comes first.
    direct = {f.id: [c for c in (f.caused_by,) if c in present] + causes_of(f) for f in raw}
    linked: list[Finding] = []
    for f in raw:
        causes = direct[f.id]
        # Prefer a cause that nothing else explains, so chains end at their root.
        cause = next((c for c in causes if not direct.get(c)), causes[0] if causes else None)
        linked.append(f if cause is None else _with_cause(f, cause))
    explains: dict[str, int] = {}
    for f in linked:
        if f.caused_by:
            explains[f.caused_by] = explains.get(f.caused_by, 0) + 1
    order = {id(f): i for i, f in enumerate(linked)}
    linked.sort(key=lambda f: (f.caused_by is not None and f.severity is not Severity.INFO,
                               -f.severity.rank, f.id in GENERIC, -explains.get(f.id, 0),
                               # among candidate roots, the failure the log shows first
                               f.caused_by is None and f.check != "smoke-log", order[id(f)]))
    return tuple(linked)


def _with_cause(f: Finding, cause: str) -> Finding:
    from dataclasses import replace

    return replace(f, caused_by=cause)


def load_facts_file(path: Path) -> tuple[Facts, CheckConfig]:
    """Read a saved facts file or a --json report; one-line InputFileError on anything wrong."""
    from tfdoctor.docload import DocumentError, read_tfdoctor_document

    try:
        data = read_tfdoctor_document(path)  # strict and bounded: docs/exit-codes.md, code 2
    except OSError as exc:
        raise InputFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    except DocumentError as exc:
        raise InputFileError(f"{path} is not a JSON document tfdoctor can read: {exc}") from None
    if not isinstance(data, dict):
        raise InputFileError(f"{path} is not a tfdoctor facts or report file")
    if data.get("kind") == "cluster":
        raise InputFileError(f"{path} is a cluster document: replay it with `tfdoctor cluster --replay`")
    config = CheckConfig()
    if isinstance(data.get("facts"), dict):
        cfg = data.get("config") or {}
        if isinstance(cfg, dict) and isinstance(cfg.get("expect_gpus"), int):
            config = CheckConfig(expect_gpus=cfg["expect_gpus"])
        data = data["facts"]
    version = data.get("schema_version")
    if version is None or "python" not in data:
        raise InputFileError(f"{path} is not a tfdoctor facts or report file (no schema_version)")
    if str(version) not in READABLE_SCHEMAS:
        newer = str(version).isdigit() and int(version) > int(SCHEMA_VERSION)
        raise InputFileError(
            f"{path} has schema version {version}; this tfdoctor reads versions "
            f"{', '.join(READABLE_SCHEMAS)}" + (" (upgrade tfdoctor to read it)" if newer else "")
        )
    try:
        # Version 1 has no `unknown` list: its failed probes still imply unknowns (implied_unknown).
        facts = Facts.from_dict({**data, "schema_version": SCHEMA_VERSION})
    except (ValueError, TypeError) as exc:
        raise InputFileError(f"{path} is damaged: {exc}") from None
    return reread_logs(facts), config


def reread_logs(facts: Facts) -> Facts:
    """The saved TensorFlow log read again with today's log map: a cause whose line maps
    elsewhere today follows today's map, and lines of the saved log tails and recipe errors that
    an older tfdoctor (or whoever wrote the document) did not recognise become causes. Causes
    whose line today's map does not know are kept as they were."""
    from dataclasses import replace

    from tfdoctor.smoke import logmap

    smoke = facts.smoke
    if smoke is None:
        return facts

    def merged(*groups: Iterable[LogCause]) -> tuple[LogCause, ...]:
        """Each cause once per (id, subject), in order; saved lines mapped by today's log map."""
        out: dict[tuple[str, str | None], LogCause] = {}
        for cause in (c for group in groups for c in group):
            hit = logmap.recognise(cause.line[:2000])
            if hit is not None:
                cause = replace(cause, id=hit[0], subject=hit[1])
            out.setdefault((cause.id, cause.subject), cause)
        return tuple(out.values())

    def read(tail: tuple[str, ...], recipe: str | None) -> tuple[LogCause, ...]:
        return logmap.scan((line[:2000] for line in tail), recipe)

    recipes = tuple(replace(r, causes=merged(r.causes, read(r.log_tail + tuple((r.detail or "").splitlines()),
                                                               r.name)))
                    for r in smoke.recipes)
    # The run's list holds every recipe's causes too, as the smoke child's does.
    causes = merged(smoke.causes, read(smoke.log_tail, None), *(r.causes for r in recipes))
    return replace(facts, smoke=replace(smoke, recipes=recipes, causes=causes))
