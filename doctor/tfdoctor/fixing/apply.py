"""Apply a fix plan step by step with backups and a journal; roll back on failure; undo the last.

Safety rules (issues 5 and 12): only the target environment's files and packages change; every
edited file is copied before its first write and every distribution pip removes or replaces is
zipped first, so nothing is lost; root commands run only with --allow-root after a confirmation
that shows them (never answered by --yes); a failing step rolls back the whole apply.

An apply is a transaction: one at a time per environment (lock.py); pip's plan is checked first
and a step that would make things worse is refused (guard.py); Ctrl+C / SIGTERM stop pip and
restore the backup before tfdoctor exits (proc.py); a journal left "applying" by kill -9 is found
by the next `tfdoctor fix` and restored by `fix --recover`; every rollback and undo is verified
byte for byte against the backup (manifest.py); a new finding after the apply rolls it back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from tfdoctor.errors import FixError, OutputFileError
from tfdoctor.findings import Finding
from tfdoctor.fixing import guard, manifest, pipstate
from tfdoctor.fixing.journal import Journal, require_latest, restore_files, state_root
from tfdoctor.fixing.lock import env_lock
from tfdoctor.fixing.model import FixPlan, FixStep
from tfdoctor.fixing.planner import pip_commands
from tfdoctor.fixing.preview import preview_files, script_argv
from tfdoctor.fixing.proc import Cancelled, CancelToken, run_guarded
from tfdoctor.fixing.render import problem_counts, undo_command
from tfdoctor.host import CommandResult

Confirm = Callable[[FixStep], bool]
"""Asked before each step; for root steps it must show the commands and ask a person."""
Judge = Callable[["ApplyResult"], tuple[Finding, ...]]
"""After an apply that changed something: the findings of a fresh diagnosis."""

ROOT_TIMEOUT = 600.0


@dataclass(frozen=True, slots=True)
class StepResult:
    """What happened to one step: done, unchanged, declined, refused, printed (manual), skipped."""

    fix_id: str
    status: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """An apply: its journal directory (None when nothing changed) and each step's result."""

    journal: Path | None
    steps: tuple[StepResult, ...]
    after: tuple[str, ...] | None = None
    """Finding ids after the apply, when a judge ran."""

    @property
    def changed(self) -> bool:
        return any(s.status == "done" for s in self.steps)


class FixInterrupted(FixError):
    """Ctrl+C, SIGTERM or the TUI's quit stopped an apply; says what state the environment is in."""

    reference = "fix-interrupted"

    def __init__(self, message: str, signal_name: str, state: str) -> None:
        super().__init__(message)
        self.signal_name = signal_name
        self.state = state
        """restored (as before the apply), applied (the steps had finished), or incomplete."""


def apply_plan(plan: FixPlan, confirm: Confirm, confirm_root: Confirm, *,
               allow_root: bool = False, judge: Judge | None = None,
               cancel: CancelToken | None = None, what: str = "tfdoctor fix --apply",
               baseline: tuple[Finding, ...] | None = None) -> ApplyResult:
    """Run every step that may run, holding the environment's lock.

    FixError (after rolling back) when a step fails or the result is worse than before;
    FixInterrupted when `cancel` is set; Busy when another fix runs in the environment.
    `baseline`: the findings before; the judge's problems (warnings, errors) must be no more, id by
    id, than its problems, or the apply is rolled back (without it: the plan's finding ids, a saved
    plan's only record of them). An info finding after, new or not, is no reason to roll back.
    """
    require_finished(plan.prefix)  # even with nothing to do: the environment may be half-done
    if not plan.steps:
        return ApplyResult(None, ())
    cancel = cancel or CancelToken()
    with env_lock(plan.prefix, what):
        require_finished(plan.prefix)
        journal = Journal.create(plan.python, plan.prefix, plan.to_dict())
        try:
            result = _apply_steps(plan, journal, confirm, confirm_root, allow_root, cancel)
        except OutputFileError as exc:
            raise _state_failed(journal, plan, exc) from None
        except Cancelled as exc:
            raise _interrupted(journal, plan, exc) from None
        if judge is not None and result.changed:
            after = judge(result)
            was = Counter(plan.findings) if baseline is None else problem_counts(baseline)
            now = problem_counts(after)
            new = [i for i in now if now[i] > was[i]]
            if new:
                reason = f"new finding(s) after the fix: {', '.join(new)}"
                problems = _roll_back(journal, plan.python, reason)
                raise FixError(f"the fix made things worse ({reason}); "
                               + _rollback_words(problems) + f" (journal: {journal.dir})")
            result = replace(result, after=tuple(f.id for f in after))
        if cancel.is_set() and result.changed:
            raise FixInterrupted(
                f"stopped by {cancel.reason} after the fix had finished: recorded as applied "
                f"(journal: {journal.dir}; undo: {undo_command(plan.python)})", cancel.reason, "applied")
        return result


def require_idle(prefix: str) -> None:
    """Before showing a plan to apply: Busy when a fix runs in this environment now, FixError when
    one never finished, OutputFileError when the state directory cannot be written."""
    from tfdoctor.files import make_private_dir
    from tfdoctor.fixing.journal import env_dir
    from tfdoctor.fixing.lock import Busy, holder

    running = holder(prefix)
    if running is not None:
        raise Busy(f"another fix is running in {prefix}: {running}; wait for it to finish")
    require_finished(prefix)
    try:
        make_private_dir(env_dir(prefix))
    except OSError as exc:
        raise OutputFileError(state_root(), exc.strerror or str(exc)) from None


def require_finished(prefix: str) -> None:
    """FixError when an earlier apply in this environment never finished (kill -9, power loss)."""
    stale = Journal.unfinished(prefix)
    if stale is not None:
        raise FixError(unfinished_words(stale))


def unfinished_words(journal: Journal) -> str:
    """One line: an earlier apply did not finish, and the command that restores its backup."""
    return (f"an earlier fix in {journal.data.get('prefix')} did not finish (status "
            f"{journal.data.get('status')}, started {journal.data.get('started')} by pid "
            f"{journal.data.get('pid', '?')}; journal: {journal.dir}): restore it first with "
            f"`tfdoctor fix --recover --python {journal.data.get('python')}`")


def _rollback_words(problems: list[str]) -> str:
    if not problems:
        return "rolled back: the environment is byte for byte as it was before the apply"
    return "ROLLBACK INCOMPLETE, these differ from the backup: " + listed(problems)


def listed(problems: list[str], shown: int = 4) -> str:
    """The first few differences, and how many more (all of them are in journal.json)."""
    more = len(problems) - shown
    return "; ".join(problems[:shown]) + (f"; and {more} more (all in journal.json)"
                                          if more > 0 else "")


def _roll_back(journal: Journal, python: str, reason: str) -> list[str]:
    """Restore from the backup and record the outcome; the problems (empty: verified identical)."""
    try:
        journal.set(status="rolling-back", reason=reason)
    except OutputFileError:
        pass  # the state directory failed: roll back from the journal in memory anyway
    problems = rollback(journal, python)
    try:
        journal.set(status="rolled-back" if not problems else "failed-rollback",
                    problems=problems)
    except OutputFileError:
        pass
    return problems


def _interrupted(journal: Journal, plan: FixPlan, exc: Cancelled) -> FixInterrupted:
    """Stopped while a step ran: pip is already stopped; restore everything, then say so."""
    problems = _roll_back(journal, plan.python, f"stopped by {exc.signal_name}")
    state = "incomplete" if problems else "restored"
    return FixInterrupted(f"stopped by {exc.signal_name}: pip was stopped and the environment "
                          + ("restored; " if not problems else "NOT fully restored; ")
                          + _rollback_words(problems) + f" (journal: {journal.dir})",
                          exc.signal_name, state)


def _state_failed(journal: Journal, plan: FixPlan, exc: OutputFileError) -> OutputFileError:
    """The state directory failed mid-apply (read-only, full): undo what was changed from the
    journal in memory, remove the apply's directory, and say so in one line (exit code 2)."""
    problems = rollback(journal, plan.python)
    if problems:
        try:
            journal.set(status="failed-rollback")
        except OutputFileError:
            pass
        return OutputFileError(exc.path, f"{exc.reason}; ROLLBACK INCOMPLETE: {listed(problems)}")
    journal.discard()
    return OutputFileError(exc.path, f"{exc.reason}; nothing was changed (state directory "
                                     f"{state_root()})")


def _apply_steps(plan: FixPlan, journal: Journal, confirm: Confirm, confirm_root: Confirm,
                 allow_root: bool, cancel: CancelToken) -> ApplyResult:
    if any(s.kind == "pip" for s in plan.steps):
        try:
            have = pipstate.installed(plan.python, cancel, whole=True)
        except FixError:
            journal.discard()  # nothing was changed: no journal left behind either
            raise
        journal.set(pip_before=have, freeze_before=pipstate.freeze(plan.python, cancel))
        manifest.save(journal, manifest.package_dirs(
            plan.python, lambda argv: run_guarded(argv, timeout=60, cancel=cancel)))
    results: list[StepResult] = []
    for index, step in enumerate(plan.steps):
        if cancel.is_set() and any(r.status == "done" for r in results):
            break  # stopped between steps: what finished stays applied (said by apply_plan)
        cancel.check()
        try:
            result = _apply_step(plan, step, index, journal, confirm, confirm_root, allow_root,
                                 cancel)
        except FixError as exc:
            journal.step(step.fix_id, "failed", str(exc))
            problems = _roll_back(journal, plan.python, f"step {step.fix_id} failed")
            raise FixError(f"step {index + 1} ({step.fix_id}) failed: {exc}; "
                           + _rollback_words(problems) + f" (journal: {journal.dir})") from None
        journal.step(step.fix_id, result.status, result.detail or None)
        results.append(result)
    done = any(r.status == "done" for r in results)
    journal.set(status="applied" if done else "no-change")
    return ApplyResult(journal.dir if done else None, tuple(results))


def _apply_step(plan: FixPlan, step: FixStep, index: int, journal: Journal, confirm: Confirm,
                confirm_root: Confirm, allow_root: bool, cancel: CancelToken) -> StepResult:
    if step.kind == "manual":
        if not (allow_root and step.runnable and step.needs_root):
            return StepResult(step.fix_id, "printed", "for a person to run")
        if not confirm_root(step):
            return StepResult(step.fix_id, "declined")
        for command in step.commands:
            _check(run_guarded(["sh", "-c", command], timeout=ROOT_TIMEOUT, cancel=cancel),
                   journal, index, step)
        return StepResult(step.fix_id, "done", "ran as root (not reversible)")
    if step.kind == "hook":
        changes = [c for c in preview_files(step) if c.changed]
        if not changes:
            return StepResult(step.fix_id, "unchanged", "already in place")
        if not confirm(step):
            return StepResult(step.fix_id, "declined")
        for change in changes:
            journal.backup_file(change.path)
        cancel.check()
        _check(run_guarded(script_argv(step, plan.python), timeout=60, cancel=cancel),
               journal, index, step)
        return StepResult(step.fix_id, "done", ", ".join(c.path for c in changes))
    return _apply_pip(plan, step, index, journal, confirm, cancel)


def _apply_pip(plan: FixPlan, step: FixStep, index: int, journal: Journal,
               confirm: Confirm, cancel: CancelToken) -> StepResult:
    python = plan.python
    have = pipstate.installed(python, cancel)
    removes = [pipstate.canonical(n) for n in step.removes if pipstate.canonical(n) in have]
    install = tuple(a for i, a in enumerate(step.args)
                    if a != "--remove" and (i == 0 or step.args[i - 1] != "--remove"))
    planned = pipstate.dry_run(python, install, cancel)
    replaced = None if planned is None else [name for name, _version in planned]
    if replaced is not None and not removes and not replaced:
        return StepResult(step.fix_id, "unchanged", "already satisfied")
    worse = guard.worse_reason(install, set(removes), planned or [], have)
    if worse is not None:
        return StepResult(step.fix_id, "refused", worse)
    if not confirm(step):
        return StepResult(step.fix_id, "declined")
    names = removes + [n for n in (replaced or ()) if n in have]
    dists = journal.data["dists"]
    new = [n for n in dict.fromkeys(names) if n not in dists]
    size = pipstate.dist_bytes(python, new)
    guard.check_space(size, size, journal.dir,
                      (journal.data.get("manifest_dirs") or [plan.prefix])[0])
    dists.update(pipstate.backup_dists(python, new, journal.dir / "dists", cancel))
    journal.save()
    cancel.check()
    argv = script_argv(step, python)
    _check(run_guarded(argv, timeout=pipstate.PIP_TIMEOUT, cancel=cancel), journal, index, step)
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
    """Undo everything this journal recorded, then compare with the backup byte for byte;
    returns every path or package that differs (empty: verified identical)."""
    problems = restore_files(journal)
    before = journal.data.get("pip_before")
    if before is not None:
        problems += manifest.remove_added(journal)
        try:
            problems += pipstate.restore(python, before, journal.data.get("dists", {}))
        except FixError as exc:  # the target cannot even list its packages: say so, go on
            problems.append(str(exc))
        problems += manifest.verify(journal)
        freeze = journal.data.get("freeze_before")
        if freeze is not None and not problems and pipstate.freeze(python) != freeze:
            problems.append("pip freeze differs from the snapshot taken before the apply")
    return problems


def undo_last(prefix: str, what: str = "tfdoctor fix --undo") -> Path:
    """Revert the newest apply of the environment at `prefix`; returns its journal directory."""
    with env_lock(prefix, what):
        require_finished(prefix)
        journal = require_latest(prefix)
        journal.set(status="undoing")
        problems = rollback(journal, journal.data["python"])
        journal.set(status="undone" if not problems else "failed-rollback", problems=problems)
    if problems:
        raise FixError(f"UNDO INCOMPLETE, these differ from the state before the apply: "
                       f"{listed(problems)} (journal: {journal.dir})")
    return journal.dir


def recover(prefix: str, what: str = "tfdoctor fix --recover") -> Path | None:
    """Restore the backup of an apply that never finished (kill -9, power loss); its journal
    directory, or None when there is nothing to recover."""
    with env_lock(prefix, what):
        journal = Journal.unfinished(prefix)
        if journal is None:
            return None
        was = journal.data.get("status")
        if was == "undoing":  # an undo was cut short: finish it (the apply is being removed)
            problems = rollback(journal, journal.data["python"])
            journal.set(status="undone" if not problems else "failed-rollback",
                        problems=problems)
        else:
            problems = _roll_back(journal, journal.data["python"], f"recovered after {was}")
    if problems:
        raise FixError("RECOVERY INCOMPLETE, these differ from the backup: "
                       f"{listed(problems)} (journal: {journal.dir})")
    return journal.dir
