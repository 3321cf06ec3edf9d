"""The report: facts, every check's outcome, the findings with their root cause, and the verdict."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfdoctor.errors import InputFileError
from tfdoctor.facts import SCHEMA_VERSION, Facts
from tfdoctor.findings import CheckOutcome, CheckStatus, Finding, Severity
from tfdoctor.registry import CheckConfig, all_checks, iter_findings, run_checks


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
        first = self.findings[0] if self.findings else None
        if first is None or first.severity is Severity.INFO or first.caused_by:
            return None
        return first

    @property
    def incomplete(self) -> bool:
        """A probe did not finish, a check crashed or smoke work was stopped: partial verdict."""
        stopped = self.facts.smoke is not None and self.facts.smoke.outcome == "cancelled"
        return stopped or bool(self.facts.probe_issues) or any(
            o.status is CheckStatus.CRASHED for o in self.outcomes
        )

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
                 "findings": [f.id for f in o.findings]}
                for o in self.outcomes
            ],
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
    specs = {s.id: s for s in all_checks()}
    raw = list(iter_findings(outcomes))
    present = [f.id for f in raw if f.severity is not Severity.INFO]
    linked: list[Finding] = []
    for f in raw:
        spec = specs.get(f.check)
        causes = spec.consequence_of if spec else ()
        cause = next((c for c in causes if c in present and c != f.id), None)
        linked.append(f if cause is None else _with_cause(f, cause))
    order = {id(f): i for i, f in enumerate(linked)}
    linked.sort(key=lambda f: (f.caused_by is not None and f.severity is not Severity.INFO,
                               -f.severity.rank, order[id(f)]))
    return Report(facts, config, outcomes, tuple(linked))


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
    config = CheckConfig()
    if isinstance(data.get("facts"), dict):
        cfg = data.get("config") or {}
        if isinstance(cfg, dict) and isinstance(cfg.get("expect_gpus"), int):
            config = CheckConfig(expect_gpus=cfg["expect_gpus"])
        data = data["facts"]
    version = data.get("schema_version")
    if version is None or "python" not in data:
        raise InputFileError(f"{path} is not a tfdoctor facts or report file (no schema_version)")
    if str(version) != SCHEMA_VERSION:
        newer = str(version).isdigit() and int(version) > int(SCHEMA_VERSION)
        raise InputFileError(
            f"{path} has schema version {version}; this tfdoctor reads version {SCHEMA_VERSION}"
            + (" (upgrade tfdoctor to read it)" if newer else "")
        )
    try:
        return Facts.from_dict(data), config
    except (ValueError, TypeError) as exc:
        raise InputFileError(f"{path} is damaged: {exc}") from None
