"""The TUI's seams to the library: how a report is made, exported, and what is said on exit.

No textual here. The app receives these as plain callables, so tests inject fakes and the
fix planner (`tfdoctor.fixing`) and the support report (`tfdoctor.share`) plug in unchanged.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tfdoctor.diagnose import SmokeOptions
    from tfdoctor.host import Host
    from tfdoctor.registry import CheckConfig
    from tfdoctor.report import Report

Progress = Callable[..., None]
"""progress(name) when a probe area lands; progress(name, value) for a smoke step."""


class LoadReport(Protocol):
    """Makes one report; blocking, called in a thread worker; stops early when `cancel` is set."""

    def __call__(self, progress: Progress, cancel: threading.Event) -> Report: ...


Applier = Callable[[list[str]], str]
"""applier(fix_ids) -> a before/after summary; may also have `.undo() -> str`."""
Exporter = Callable[["Report", Path], Path]
"""exporter(report, path) -> the file written (owner-only permissions); OSError when it cannot."""


def diagnosis_loader(host: Host, config: CheckConfig, smoke: SmokeOptions | None) -> LoadReport:
    """The real loader: `tfdoctor.diagnose.diagnose` on `host`; smoke None means --quick."""

    def load(progress: Progress, cancel: threading.Event) -> Report:
        from tfdoctor.diagnose import diagnose

        return diagnose(host, config, smoke=smoke, progress=progress, smoke_progress=progress,
                        cancel=cancel)

    return load


def export_json(report: Report, path: Path) -> Path:
    """Write the report's JSON document, readable by its owner only (it names paths and GPUs)."""
    write_export(path, json.dumps(report.to_dict(), indent=2) + "\n")
    return path


def write_export(path: Path, text: str) -> None:
    """write_atomic (owner-only), failing as the OSError the export screen reports with its reason."""
    from tfdoctor.errors import OutputFileError
    from tfdoctor.files import write_atomic

    try:
        write_atomic(path, text)
    except OutputFileError as exc:
        raise OSError(exc.reason) from None


def final_words(report: Report | None, outcome: str, error: str | None,
                fail_on: str = "error") -> tuple[int, str, str | None]:
    """After the TUI closes: the exit code, the text left on stdout (the partial report when
    the run was interrupted, so nothing the doctor learned is lost), and an error line."""
    from tfdoctor.exit_codes import ExitCode, exit_code_for
    from tfdoctor.render_text import render_text

    if outcome == "interrupted":
        return ExitCode.INTERRUPTED, render_text(report) if report else "", None
    if report is None:
        return ExitCode.INTERNAL, "", f"the diagnosis failed: {error}"
    return exit_code_for(report, fail_on), summary_after_tui(report), None


def summary_after_tui(report: Report) -> str:
    """What stays in the terminal after the TUI closes: target, verdict, root cause and its fix."""
    from tfdoctor.render_text import headline, render_finding, summary_line, target_line

    lines = [target_line(report), headline(report), summary_line(report)]
    if report.root_cause is not None:
        lines += ["", *render_finding(report.root_cause, color=False)]
    return "\n".join(lines) + "\n(tfdoctor --no-tui prints the whole report)\n"


class PlanApplier:
    """The real applier: plans from a fresh static diagnosis, applies the chosen automatic steps.

    The TUI has already shown the commands and asked; root steps are never offered here (they
    stay commands for a person). `undo()` reverts the last apply in the target environment.
    """

    def __init__(self, host: Host) -> None:
        self.host = host
        self.prefix: str | None = None

    def __call__(self, fix_ids: list[str]) -> str:
        from dataclasses import replace

        from tfdoctor.diagnose import diagnose
        from tfdoctor.fixing.apply import apply_plan
        from tfdoctor.fixing.planner import plan_fixes

        plan = plan_fixes(diagnose(self.host))
        steps = tuple(s for s in plan.steps if s.fix_id in fix_ids and s.automatic)
        if not steps:
            return "Nothing to apply: the selected fixes are no longer needed."
        result = apply_plan(replace(plan, steps=steps), confirm=lambda _s: True,
                            confirm_root=lambda _s: False)
        self.prefix = plan.prefix
        lines = [f"{r.fix_id}: {r.status}" + (f" ({r.detail})" if r.detail else "")
                 for r in result.steps]
        journal = f"journal: {result.journal}" if result.journal else "nothing changed"
        return "\n".join([*lines, journal])

    def undo(self) -> str:
        from tfdoctor.fixing.apply import undo_last

        if self.prefix is None:
            raise RuntimeError("nothing applied in this session; use `tfdoctor fix --undo`")
        return f"undone (journal: {undo_last(self.prefix)})"


def export_support_report(report: Report, path: Path) -> Path:
    """The support report (`tfdoctor report`): redacted Markdown at `path`, its JSON beside it."""
    from tfdoctor.share.redact import Identity, Policy, Redactor
    from tfdoctor.share.support import make_support_report

    redactor = Redactor(Policy.make(None, ()), Identity.of_this_process())
    support = make_support_report(report.facts, report.config, redactor)
    markdown = path if path.suffix == ".md" else path.with_suffix(".md")
    write_export(markdown, support.markdown)
    write_export(markdown.with_suffix(".json"), support.json)
    return markdown
