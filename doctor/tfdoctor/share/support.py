"""The support report: redacted facts judged again, as Markdown and as the replayable JSON."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from html import unescape
from pathlib import Path

from tfdoctor.docload import printable
from tfdoctor.errors import TfdoctorError
from tfdoctor.exit_codes import exit_code_for
from tfdoctor.facts import Facts
from tfdoctor.registry import CheckConfig
from tfdoctor.report import Report, build_report
from tfdoctor.share.markdown import render_markdown
from tfdoctor.share.redact import Identity, Policy, Redactor


@dataclass(frozen=True, slots=True)
class SupportReport:
    """The two documents that leave the machine, and the verdict they carry."""

    markdown: str
    json: str
    exit_code: int
    verdict: str
    html: str | None = None
    """The self-contained HTML page (`report --html`) of the same redacted report, when asked."""


def make_support_report(
    facts: Facts, config: CheckConfig, redactor: Redactor | None, html: bool = False
) -> SupportReport:
    """Redact the facts, judge the redacted facts, render both documents, check for leftovers.

    The findings are computed from the redacted facts, so the report shows exactly what
    `tfdoctor replay` of its JSON shows; if redaction changed the diagnosis, the Markdown says so.
    """
    shared = redactor.facts(facts) if redactor else facts
    report = build_report(shared, config)
    code = int(exit_code_for(report))
    notes: tuple[str, ...] = ()
    if redactor:
        before = [f.id for f in build_report(facts, config).findings]
        after = [f.id for f in report.findings]
        if sorted(before) != sorted(after):
            notes = (
                "Redaction changed the diagnosis (unredacted findings: "
                f"{', '.join(before) or 'none'}); share with --no-redact if it matters.",
            )
    from tfdoctor.compat import tables_checked

    # Every field is escaped where it is written; this pass is the guarantee: no control
    # character from the facts reaches a terminal that shows the file (docload.printable).
    markdown = printable(
        render_markdown(report, code, redaction_line(redactor), tables_checked(), notes),
        keep_newlines=True,
    )
    document = json.dumps(report.to_dict(exit_code=code), indent=2) + "\n"
    page = None
    if html:
        from tfdoctor.share.html_report import render_html

        page = render_html(report, code, redaction_line(redactor), markdown)
    if redactor:
        left = redactor.leftovers(markdown) + redactor.leftovers(document) + (
            # Escaping could hide a name from the guard: it reads the page as a browser shows it.
            redactor.leftovers(unescape(page)) if page else [])
        if left:
            raise TfdoctorError(
                "refusing to write the report: redaction missed " + ", ".join(sorted(set(left)))
            )
    return SupportReport(markdown, document, code, report.verdict, page)


def redacted_report(facts: Facts, config: CheckConfig, identity: Identity,
                    names_guard: bool = False) -> Report:
    """The report of `facts` redacted as the support report redacts them (allowlisted variables,
    secrets removed, user, host and home names and device ids pseudonymised with a random salt),
    judged again on the redacted facts. For documents that leave the machine other than the
    support report: `--json --redact`, `triage --json` and `--save`.

    Raises when the JSON still holds a secret value; with names_guard, also a user or host name
    (as the support report does). Without it, a name that is also a word of tfdoctor's own text
    (a user "user", a node "gpu") would stop an unattended --redact run on every round."""
    redactor = Redactor(Policy.make(), identity)
    report = build_report(redactor.facts(facts), config)
    document = json.dumps(report.to_dict(exit_code=int(exit_code_for(report))))
    left = [x for x in redactor.leftovers(document) if names_guard or x.startswith("secret value")]
    if left:
        raise TfdoctorError("refusing to write the document: redaction missed "
                            + ", ".join(sorted(set(left))))
    return report


def redaction_line(redactor: Redactor | None) -> str:
    """One sentence for the report: what was replaced, and whether pseudonyms match across nodes."""
    if redactor is None:
        return "none (--no-redact): user and host names, paths and device ids are as collected"
    keep = redactor.policy.keep
    hidden = [
        label
        for cat, label in (
            ("user", "user names and home paths"),
            ("host", "host names"),
            ("gpu-ids", "GPU UUIDs and serials"),
            ("pci-ids", "PCI bus ids"),
        )
        if cat not in keep
    ]
    salt = (
        "a fleet salt (the same on every node)"
        if redactor.policy.fleet_salt
        else "a random salt for this report"
    )
    kept = f"; kept: {', '.join(sorted(keep))}" if keep else ""
    return (
        f"allowlisted environment variables only, secret-looking values removed; "
        f"{', '.join(hidden) or 'nothing else'} replaced by pseudonyms made with {salt}{kept}"
    )


def output_paths(output: str | None, collected_at: str) -> tuple[Path, Path]:
    """(Markdown, JSON) paths: in a directory, beside a named file, or in the current directory.

    The default name carries the collection time, never the host name (it would leak).
    """
    stem = "tfdoctor-report-" + re.sub(r"[^0-9A-Za-z]", "", collected_at.split("+")[0])[:15]
    if output is None:
        return Path(f"{stem}.md"), Path(f"{stem}.json")
    path = Path(output)
    if output.endswith("/") or path.is_dir():
        return path / f"{stem}.md", path / f"{stem}.json"
    if path.suffix == ".json":
        return path.with_suffix(".md"), path
    if path.suffix == ".md":
        return path, path.with_suffix(".json")
    return Path(f"{output}.md"), Path(f"{output}.json")
