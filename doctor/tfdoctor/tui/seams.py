"""The TUI's seams to the library: how a report is made, exported, and what is said on exit.

No textual here. The app receives these as plain callables, so tests inject fakes and the
fix planner (`tfdoctor.fixing`) and the support report (`tfdoctor.share`) plug in unchanged.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tfdoctor.diagnose import SmokeOptions
    from tfdoctor.fixing.model import FixPlan
    from tfdoctor.host import Host
    from tfdoctor.registry import CheckConfig
    from tfdoctor.report import Report

Progress = Callable[..., None]
"""progress(name) when a probe area lands; progress(name, value) for a smoke step."""


class LoadReport(Protocol):
    """Makes one report; blocking, called in a thread worker; stops early when `cancel` is set."""

    def __call__(self, progress: Progress, cancel: threading.Event) -> Report: ...




class Applier(Protocol):
    """Applies steps of a fix plan (PlanApplier; tests inject fakes). Blocking, in a worker."""

    def plan(self, report: Report) -> FixPlan: ...

    def __call__(self, plan: FixPlan, fix_ids: list[str]) -> str: ...

    def stop(self) -> None: ...

    def output(self) -> str:
        """The running apply's latest output (shown live); "" when there is none yet."""
        ...

    def undoable(self, prefix: str) -> bool: ...

    def undo(self, prefix: str) -> str: ...


Exporter = Callable[["Report", Path], Path]
"""exporter(report, path) -> the file written (owner-only permissions); OSError when it cannot."""


def diagnosis_loader(host: Host, config: CheckConfig, smoke: SmokeOptions | None) -> LoadReport:
    """The real loader: `tfdoctor.diagnose.diagnose` on `host`; smoke None means --quick."""
    return DiagnosisLoader(host, config, smoke)


class DiagnosisLoader:
    """A LoadReport that also says, before any report exists, which interpreter it diagnoses."""

    def __init__(self, host: Host, config: CheckConfig, smoke: SmokeOptions | None) -> None:
        self.host, self.config, self.smoke = host, config, smoke
        why = f" ({host.python_why})" if host.python_why else ""
        self.target = f"Diagnosing {host.python}{why}"
        """The report's first line, known from the start (the TUI header shows it while running)."""

    def __call__(self, progress: Progress, cancel: threading.Event) -> Report:
        from tfdoctor.diagnose import diagnose

        return diagnose(self.host, self.config, smoke=self.smoke, progress=progress,
                        smoke_progress=progress, cancel=cancel)


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
    """The real applier: applies exactly the steps of the plan the fix screen showed (the CLI's
    `apply_plan`, with its lock, backups, checks and rollback), then judges the result with a
    fresh static diagnosis: a finding that was not there before rolls the apply back.

    Root steps are never applied here (they stay commands for a person). `stop()` asks a
    running apply to stop: pip is stopped and the backup restored before the call returns.
    """

    def __init__(self, host: Host) -> None:
        self.host = host
        self._cancel: Any = None
        self._prefix: str | None = None
        self._logs: Path | None = None
        self._steps: tuple[str, ...] = ()
        """The fix ids of the apply under way, in the order they run."""

    def plan(self, report: Report) -> FixPlan:
        """The plan the fix screen shows: the same planner as `tfdoctor fix`."""
        from tfdoctor.fixing.planner import plan_fixes

        return plan_fixes(report)

    def __call__(self, plan: FixPlan, fix_ids: list[str]) -> str:
        from dataclasses import replace

        from tfdoctor.fixing.apply import apply_plan, require_idle, undo_command
        from tfdoctor.fixing.commands import diagnose_after
        from tfdoctor.fixing.proc import CancelToken

        require_idle(plan.prefix)
        self._prefix, self._logs = plan.prefix, None
        steps = tuple(s for s in plan.steps if s.fix_id in fix_ids and s.automatic)
        self._steps = tuple(s.fix_id for s in steps)
        if not steps:
            return "Nothing to apply: no step of the plan was selected."
        self._cancel = CancelToken()
        result = apply_plan(replace(plan, steps=steps), confirm=lambda _s: True,
                            confirm_root=lambda _s: False, cancel=self._cancel,
                            what="the tfdoctor TUI's apply",
                            judge=lambda r: diagnose_after(plan, r).findings)
        lines = [f"{r.fix_id}: {r.status}" + (f" ({r.detail})" if r.detail else "")
                 for r in result.steps]
        journal = (f"journal: {result.journal} (undo: u here, or {undo_command(plan.python)})"
                   if result.journal else "nothing changed")
        return "\n".join([*lines, journal])

    def output(self) -> str:
        """Which step of the running apply runs now, then its commands' output so far: its
        journal's step logs (a command's output lands when it ends: fixing.proc.run_guarded
        buffers it in a file)."""
        if self._logs is None:
            from tfdoctor.fixing.journal import Journal

            journal = Journal.unfinished(self._prefix) if self._prefix else None
            if journal is None:
                return ""
            self._logs = journal.dir / "logs"
        try:
            done = len(json.loads((self._logs.parent / "journal.json").read_text(
                encoding="utf-8")).get("steps") or ())
            logs = "".join(p.read_text(encoding="utf-8", errors="replace")
                           for p in sorted(self._logs.glob("*.log")))
        except (OSError, ValueError, AttributeError):
            return ""
        now = (f"running step {done + 1} of {len(self._steps)}: {self._steps[done]}"
               if done < len(self._steps) else "judging the result: a fresh diagnosis")
        return f"{now}\n{logs}"

    def stop(self) -> None:
        """Quit during an apply: stop pip and restore the backup (the apply call then returns)."""
        if self._cancel is not None:
            self._cancel.set("quit")

    def undoable(self, prefix: str) -> bool:
        """Whether an apply in this environment is there to undo."""
        from tfdoctor.fixing.journal import Journal

        return bool(prefix) and Journal.latest(prefix) is not None

    def undo(self, prefix: str) -> str:
        from tfdoctor.fixing.apply import undo_last

        return (f"undone: the environment is byte for byte as before the apply "
                f"(journal: {undo_last(prefix, 'the tfdoctor TUI undo')})")


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
