"""The cause catalogue: every finding id tfdoctor can emit, as data (docs/knowledge.md).

One record per id in `causes/<area>.toml`: how bad it is, what it means and what to do (for the
causes a log line shows), which other findings it explains, what to ask for when it cannot be
decided, and the program output that shows it (patterns with their source and real samples).
`benign.toml` holds the lines TensorFlow prints on healthy machines. The checks, the log map,
the ranking and the asks are views of this one catalogue; nothing here touches the machine.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tfdoctor.findings import Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
LOG_PREFIX = "tf-log-"
"""A cause a log line shows is the finding "tf-log-<log cause id>"."""
AREAS = ("driver", "cuda", "gpu", "xla", "tensorflow", "python", "platform", "environment", "host",
         "smoke", "tfdoctor")
"""The catalogue's files, bottom of the stack first: the order of recognition among patterns that
no `outranks` link orders."""
FIELDS = frozenset({"severity", "message", "hint", "link", "explains_no_gpu", "min_tf", "generic", "asks",
                    "explains", "explains_checks", "outranks", "patterns", "recognised_by", "samples"})


@dataclass(frozen=True, slots=True)
class Pattern:
    """A regular expression for a program's own message, with where the message comes from and real
    lines that show it. Named group "s" (or "t") is the subject: a library, an error name, a version."""

    regex: re.Pattern[str]
    source: str
    samples: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Cause:
    """One catalogue record: a finding id and what tfdoctor knows about it."""

    id: str
    area: str
    severity: Severity | None = None
    """For log causes; a static check decides its own finding's severity from the facts."""
    message: str | None = None
    hint: str | None = None
    link: str | None = None
    explains_no_gpu: bool = False
    """A reason TensorFlow registers no GPU at all (named by smoke-no-gpu as its cause)."""
    min_tf: str | None = None
    """Only a cause from this TensorFlow release on: the line alone says nothing for older ones."""
    generic: bool = False
    """Says something failed without saying why: ranked after any specific cause."""
    asks: tuple[str, ...] = ()
    """Fact paths whose output would confirm or refute this cause (asked first, when unknown)."""
    explains: tuple[str, ...] = ()
    """Findings this one is the reason for, when both are present."""
    explains_checks: tuple[str, ...] = ()
    """Checks every finding of which this one is the reason for, when both are present."""
    outranks: tuple[str, ...] = ()
    """Causes whose patterns also match a line that shows this one: this one is the reading."""
    patterns: tuple[Pattern, ...] = ()
    recognised_by: str | None = None
    """A log cause read by a recogniser's own parsing rather than by patterns (pip's resolver
    messages, whose versions it reads): the module, and `samples` it must recognise."""
    samples: tuple[str, ...] = ()

    @property
    def log_id(self) -> str | None:
        """The log cause id (LogCause.id) of a cause a log line shows, else None."""
        return self.id[len(LOG_PREFIX):] if self.id.startswith(LOG_PREFIX) else None


@dataclass(frozen=True, slots=True)
class Benign:
    """A line TensorFlow prints on healthy machines, and why it is harmless."""

    regex: re.Pattern[str]
    reason: str
    samples: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Catalogue:
    causes: dict[str, Cause]
    """Every record by finding id, in file order (AREAS), then in the order of each file."""
    benign: tuple[Benign, ...]

    def explainers(self, finding_id: str, check_id: str) -> tuple[str, ...]:
        """The causes that explain a finding of this id emitted by this check, in catalogue order."""
        return tuple(c.id for c in self.causes.values() if c.id != finding_id
                     and (finding_id in c.explains or check_id in c.explains_checks))

    def log_causes(self) -> tuple[Cause, ...]:
        """The causes a log line shows, in recognition order: a cause before every cause it
        outranks, otherwise in catalogue order."""
        return _recognition_order(tuple(c for c in self.causes.values() if c.log_id))


def _record(cid: str, area: str, raw: dict[str, Any]) -> Cause:
    unknown = set(raw) - FIELDS
    if unknown:
        raise ValueError(f"knowledge/causes/{area}.toml: {cid} has unknown fields {sorted(unknown)}")
    patterns = tuple(Pattern(re.compile(p["rx"]), p.get("source", ""), tuple(p.get("samples", ())))
                     for p in raw.get("patterns", ()))
    return Cause(
        id=cid, area=area,
        severity=Severity(raw["severity"]) if "severity" in raw else None,
        message=raw.get("message"), hint=raw.get("hint"), link=raw.get("link"),
        explains_no_gpu=bool(raw.get("explains_no_gpu", False)), min_tf=raw.get("min_tf"),
        generic=bool(raw.get("generic", False)), asks=tuple(raw.get("asks", ())),
        explains=tuple(raw.get("explains", ())), explains_checks=tuple(raw.get("explains_checks", ())),
        outranks=tuple(raw.get("outranks", ())), patterns=patterns,
        recognised_by=raw.get("recognised_by"), samples=tuple(raw.get("samples", ())),
    )


def _recognition_order(causes: tuple[Cause, ...]) -> tuple[Cause, ...]:
    """Stable topological order: each cause before the ones it outranks."""
    by_id = {c.id: c for c in causes}
    beaten: dict[str, set[str]] = {c.id: set() for c in causes}
    for c in causes:
        for loser in c.outranks:
            if loser in beaten:
                beaten[loser].add(c.id)
    out: list[Cause] = []
    placed: set[str] = set()
    while len(out) < len(causes):
        ready = next((c for c in causes if c.id not in placed and beaten[c.id] <= placed), None)
        if ready is None:
            cycle = sorted(set(by_id) - placed)
            raise ValueError(f"knowledge: 'outranks' links form a cycle among {cycle}")
        out.append(ready)
        placed.add(ready.id)
    return tuple(out)


@cache
def catalogue() -> Catalogue:
    """The catalogue, loaded once."""
    causes: dict[str, Cause] = {}
    for area in AREAS:
        with (HERE / "causes" / f"{area}.toml").open("rb") as handle:
            table = tomllib.load(handle)
        for cid, raw in table.items():
            if cid in causes:
                raise ValueError(f"knowledge: {cid} is in both {causes[cid].area}.toml and {area}.toml")
            causes[cid] = _record(cid, area, raw)
    with (HERE / "benign.toml").open("rb") as handle:
        benign = tuple(Benign(re.compile(b["rx"]), b["reason"], tuple(b.get("samples", ())))
                       for b in tomllib.load(handle)["benign"])
    return Catalogue(causes, benign)


def cause(finding_id: str) -> Cause | None:
    """The record of a finding id, None for an id the catalogue does not know."""
    return catalogue().causes.get(finding_id)


def log_cause(log_id: str) -> Cause | None:
    """The record of a log cause id ("cudnn-version-mismatch")."""
    return catalogue().causes.get(LOG_PREFIX + log_id)
