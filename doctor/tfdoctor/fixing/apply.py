"""Apply a fix plan step by step with backups and a journal; roll back on failure; undo the last.

Safety rules (issue 5): only the target environment's files and packages change; every edited
file is copied before its first write and every distribution pip removes or replaces is zipped
first, so nothing is lost; root commands run only with --allow-root after a confirmation that
shows them (never answered by --yes); a failing step rolls back the whole apply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tfdoctor.errors import FixError, OutputFileError
from tfdoctor.fixing import pipstate
from tfdoctor.fixing.journal import Journal, require_latest, restore_files, state_root
from tfdoctor.fixing.model import FixPlan, FixStep
from tfdoctor.fixing.planner import pip_commands
from tfdoctor.fixing.preview import preview_files, script_argv
from tfdoctor.host import CommandResult, run_command

Confirm = Callable[[FixStep], bool]
"""Asked before each step; for root steps it must show the commands and ask a person."""

ROOT_TIMEOUT = 600.0


@dataclass(frozen=True, slots=True)
class StepResult:
    """What happened to one step: done, unchanged, declined, printed (manual), skipped."""

    fix_id: str
    status: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """An apply: its journal directory (None when nothing changed) and each step's result."""

    journal: Path | None
    steps: tuple[StepResult, ...]

    @property
    def changed(self) -> bool:
        return any(s.status == "done" for s in self.steps)


def apply_plan(plan: FixPlan, confirm: Confirm, confirm_root: Confirm, *,
               allow_root: bool = False) -> ApplyResult:
    """Run every step that may run; FixError (after rolling back) when one fails."""
    if not plan.steps:
        return ApplyResult(None, ())
    journal = Journal.create(plan.python, plan.prefix, plan.to_dict())
    try:
        return _apply_steps(plan, journal, confirm, confirm_root, allow_root)
    except OutputFileError as exc:
        raise _state_failed(journal, plan, exc) from None


def _state_failed(journal: Journal, plan: FixPlan, exc: OutputFileError) -> OutputFileError:
    """The state directory failed mid-apply (read-only, full): undo what was changed from the
    journal in memory, remove the apply's directory, and say so in one line (exit code 2)."""
    problems = rollback(journal, plan.python)
    if problems:
        try:
            journal.set(status="failed-rollback")
        except OutputFileError:
            pass
        return OutputFileError(exc.path, f"{exc.reason}; ROLLBACK INCOMPLETE: {'; '.join(problems)}")
    journal.discard()
    return OutputFileError(exc.path, f"{exc.reason}; nothing was changed (state directory "
                                     f"{state_root()})")


def _apply_steps(plan: FixPlan, journal: Journal, confirm: Confirm, confirm_root: Confirm,
                 allow_root: bool) -> ApplyResult:
    if any(s.kind == "pip" for s in plan.steps):
        journal.set(pip_before=pipstate.installed(plan.python),
                    freeze_before=pipstate.freeze(plan.python))
    results = []
    for index, step in enumerate(plan.steps):
        try:
            result = _apply_step(plan, step, index, journal, confirm, confirm_root, allow_root)
        except FixError as exc:
            journal.step(step.fix_id, "failed", str(exc))
            problems = rollback(journal, plan.python)
            journal.set(status="rolled-back" if not problems else "failed-rollback")
            tail = ("; rolled back" if not problems
                    else "; ROLLBACK INCOMPLETE: " + "; ".join(problems))
            raise FixError(f"step {index + 1} ({step.fix_id}) failed: {exc}{tail} "
                           f"(journal: {journal.dir})") from None
        journal.step(step.fix_id, result.status, result.detail or None)
        results.append(result)
    done = any(r.status == "done" for r in results)
    journal.set(status="applied" if done else "no-change")
    return ApplyResult(journal.dir if done else None, tuple(results))


def _apply_step(plan: FixPlan, step: FixStep, index: int, journal: Journal, confirm: Confirm,
                confirm_root: Confirm, allow_root: bool) -> StepResult:
    if step.kind == "manual":
        if not (allow_root and step.runnable and step.needs_root):
            return StepResult(step.fix_id, "printed", "for a person to run")
        if not confirm_root(step):
            return StepResult(step.fix_id, "declined")
        for command in step.commands:
            _check(run_command(["sh", "-c", command], timeout=ROOT_TIMEOUT), journal, index, step)
        return StepResult(step.fix_id, "done", "ran as root (not reversible)")
    if step.kind == "hook":
        changes = [c for c in preview_files(step) if c.changed]
        if not changes:
            return StepResult(step.fix_id, "unchanged", "already in place")
        if not confirm(step):
            return StepResult(step.fix_id, "declined")
        for change in changes:
            journal.backup_file(change.path)
        _check(run_command(script_argv(step, plan.python), timeout=60), journal, index, step)
        return StepResult(step.fix_id, "done", ", ".join(c.path for c in changes))
    return _apply_pip(plan, step, index, journal, confirm)


def _apply_pip(plan: FixPlan, step: FixStep, index: int, journal: Journal,
               confirm: Confirm) -> StepResult:
    python = plan.python
    have = pipstate.installed(python)
    removes = [pipstate.canonical(n) for n in step.removes if pipstate.canonical(n) in have]
    install = tuple(a for i, a in enumerate(step.args)
                    if a != "--remove" and (i == 0 or step.args[i - 1] != "--remove"))
    replaced = pipstate.will_replace(python, install)
    if replaced is not None and not removes and not replaced:
        return StepResult(step.fix_id, "unchanged", "already satisfied")
    if not confirm(step):
        return StepResult(step.fix_id, "declined")
    names = removes + [n for n in (replaced or ()) if n in have]
    dists = journal.data["dists"]
    new = [n for n in dict.fromkeys(names) if n not in dists]
    dists.update(pipstate.backup_dists(python, new, journal.dir / "dists"))
    journal.save()
    argv = script_argv(step, python)
    _check(run_command(argv, timeout=pipstate.PIP_TIMEOUT), journal, index, step)
    return StepResult(step.fix_id, "done", "; ".join(pip_commands(python, step.args)))


def _check(result: CommandResult, journal: Journal, index: int, step: FixStep) -> None:
    """Keep the output in the journal; a failure is a FixError with the last line of output."""
    log = journal.log_path(index, step.fix_id)
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(result.argv)}\n{result.stdout}{result.stderr}\n")
    if not result.ok:
        lines = [ln for ln in (result.stderr + result.stdout).splitlines() if ln.strip()]
        reason = lines[-1].strip() if lines else ""
        raise FixError(f"{result.describe_failure()}{': ' + reason if reason else ''}")


def rollback(journal: Journal, python: str) -> list[str]:
    """Undo everything this journal recorded; returns what could not be restored."""
    problems = restore_files(journal)
    before = journal.data.get("pip_before")
    if before is not None:
        problems += pipstate.restore(python, before, journal.data.get("dists", {}))
        freeze = journal.data.get("freeze_before")
        if freeze is not None and not problems and pipstate.freeze(python) != freeze:
            problems.append("pip freeze differs from the snapshot taken before the apply")
    return problems


def undo_last(prefix: str) -> Path:
    """Revert the newest apply of the environment at `prefix`; returns its journal directory."""
    journal = require_latest(prefix)
    problems = rollback(journal, journal.data["python"])
    journal.set(status="undone" if not problems else "failed-rollback")
    if problems:
        raise FixError(f"undo incomplete: {'; '.join(problems)} (journal: {journal.dir})")
    return journal.dir
