"""`tfdoctor fix`: show the fix plan (dry run), apply it with confirmation, or undo the last apply.

Module scope imports only click and the standard library, so `tfdoctor --help` stays light.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tfdoctor.cmdkit import TARGET_DEFAULT

if TYPE_CHECKING:
    from tfdoctor.findings import Finding
    from tfdoctor.fixing.model import FixPlan, FixStep
    from tfdoctor.report import Report


@click.command()
@click.option("--python", "python", metavar="PATH",
              help=f"Interpreter whose environment to fix ({TARGET_DEFAULT}).")
@click.option("--apply", "do_apply", is_flag=True, help="Apply the plan (asks before each step).")
@click.option("--yes", "-y", is_flag=True, help="Answer yes for every step that needs no root.")
@click.option("--allow-root", is_flag=True,
              help="Also offer to run root commands; each one is shown and must be confirmed.")
@click.option("--undo", is_flag=True, help="Revert the last apply in this environment.")
@click.option("--recover", is_flag=True,
              help="Restore the backup of an apply that never finished (tfdoctor was killed).")
@click.option("--plan-out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Save the plan as JSON to review and apply later on this machine.")
@click.option("--plan", "plan_file", type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE", help="Use a plan saved with --plan-out instead of diagnosing.")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document to stdout.")
@click.pass_context
def fix(ctx: click.Context, python: str | None, do_apply: bool, yes: bool, allow_root: bool,
        undo: bool, recover: bool, plan_out: Path | None, plan_file: Path | None,
        as_json: bool) -> None:
    """Fix what the diagnosis found: a dry run by default; --apply changes things, --undo reverts.

    Journal and backups: $XDG_STATE_HOME/tfdoctor (default ~/.local/state/tfdoctor).
    """
    from tfdoctor.cmdkit import resolve_python
    from tfdoctor.errors import FixError

    if do_apply and not yes and not _can_ask():
        raise FixError("--apply asks before each step and there is no terminal to ask on: "
                       "add --yes to apply every step that needs no root")
    if undo and (do_apply or plan_file):
        raise FixError("--undo cannot be combined with --apply or --plan")
    if recover and (do_apply or plan_file or undo):
        raise FixError("--recover cannot be combined with --apply, --undo or --plan")
    if recover:
        ctx.exit(_recover(resolve_python(python), as_json))
        return
    if plan_file is not None:
        from tfdoctor.fixing.planfile import load_plan

        plan, before = load_plan(plan_file), None
        if python is not None and resolve_python(python) != plan.python:
            raise FixError(f"{plan_file} is a plan for {plan.python}, not {python}")
        if os.path.realpath(_prefix_of(plan.python)) != os.path.realpath(plan.prefix or "/"):
            raise FixError(f"{plan_file} says {plan.python}'s environment is {plan.prefix}, "
                           "but it is not: make the plan again")
    elif undo:
        ctx.exit(_undo(resolve_python(python), as_json))
        return
    else:
        before = _diagnose(resolve_python(python), None)
        from tfdoctor.fixing.planner import plan_fixes

        plan = plan_fixes(before)
    if plan_out is not None:
        from tfdoctor.fixing.model import save_plan

        save_plan(plan, plan_out)
    ctx.exit(_run(plan, before, do_apply=do_apply, yes=yes, allow_root=allow_root, as_json=as_json))


def _can_ask() -> bool:
    """Whether a person can answer the questions of --apply (stdin is a terminal)."""
    import sys

    return sys.stdin is not None and sys.stdin.isatty()


def _diagnose(python: str, env: dict[str, str] | None) -> Report:
    from tfdoctor.diagnose import diagnose
    from tfdoctor.host import Host

    host = Host(python=python) if env is None else Host(python=python, env=env)
    return diagnose(host)  # static checks only (no smoke): fast, and never imports TF here


def _previews(plan: FixPlan) -> dict[int, Any]:
    from tfdoctor.fixing.preview import preview_files

    return {i: preview_files(s) for i, s in enumerate(plan.steps) if s.files}


def _run(plan: FixPlan, before: Report | None, *, do_apply: bool, yes: bool, allow_root: bool,
         as_json: bool) -> int:
    from tfdoctor.console import note
    from tfdoctor.exit_codes import ExitCode
    from tfdoctor.fixing.render import render_plan

    if do_apply:
        from tfdoctor.fixing.apply import require_idle

        require_idle(plan.prefix)  # one line before anything else: busy, unfinished, read-only
    else:
        _say_unfinished(plan.prefix)
    previews = _previews(plan)
    if not do_apply:
        if as_json:
            click.echo(json.dumps(_plan_json(plan, previews), indent=2))
        else:
            click.echo(render_plan(plan, previews, dry_run=True), nl=False)
        return ExitCode.OK
    from tfdoctor.console import error
    from tfdoctor.fixing.apply import FixInterrupted, apply_plan
    from tfdoctor.fixing.proc import CancelToken, interruptible
    from tfdoctor.fixing.render import outcome, render_apply, render_step, undo_command

    if not as_json:
        note(render_plan(plan, previews, dry_run=False))

    cancel = CancelToken()

    def ask(question: str) -> bool:
        cancel.at_prompt = True  # Ctrl+C at a prompt stops the apply (and rolls back) at once
        try:
            return click.confirm(question, default=False, err=True)
        finally:
            cancel.at_prompt = False

    def confirm(step: FixStep) -> bool:
        if yes:
            return True
        note(render_step(plan.steps.index(step) + 1, step, previews.get(plan.steps.index(step))))
        return ask(f"Apply {step.fix_id}?")

    def confirm_root(step: FixStep) -> bool:
        note("As root, tfdoctor would run:\n" + "\n".join(f"  $ {c}" for c in step.commands))
        return ask(f"Run {step.fix_id} as root?")

    if before is None:  # a saved plan: judge the apply against the environment as it is now
        before = _diagnose(plan.python, None)
    reports: dict[str, Report] = {}

    def judge(result: Any) -> tuple[Finding, ...]:
        """The diagnosis after the apply; a problem not there before rolls the apply back."""
        reports["after"] = diagnose_after(plan, result)
        return reports["after"].findings

    try:
        with interruptible(cancel, note):
            result = apply_plan(plan, confirm, confirm_root, allow_root=allow_root, judge=judge,
                                cancel=cancel, baseline=before.findings)
    except FixInterrupted as exc:
        error(str(exc))
        return ExitCode.INTERRUPTED if exc.signal_name == "SIGINT" else ExitCode.TERMINATED
    after = reports.get("after") or diagnose_after(plan, result)
    if as_json:
        fixed, left, new = outcome(before.findings, after.findings)
        click.echo(json.dumps({**_plan_json(plan, previews), "applied": [
            {"fix_id": r.fix_id, "status": r.status, "detail": r.detail} for r in result.steps],
            "journal": str(result.journal) if result.journal else None,
            "undo": undo_command(plan.python) if result.journal else None,
            "before": [f.id for f in before.findings], "after": [f.id for f in after.findings],
            "fixed": fixed, "still_there": left, "new": new}, indent=2))
    else:
        click.echo(render_apply(result, before.findings, after.findings, plan.python), nl=False)
    return ExitCode.PROBLEMS if after.verdict == "problems" else ExitCode.OK


def diagnose_after(plan: FixPlan, result: Any) -> Report:
    """The static diagnosis after an apply, in the launch mode the fix must hold in: the bare
    interpreter for the start-up preload, activation's environment where a shell hook was
    written (fixing/launch.py; the CLI's and the TUI's judge of "no new finding")."""
    if not _hook_done(plan, result):
        return _diagnose(plan.python, None)
    from tfdoctor.fixing.launch import judge_env

    return _diagnose(plan.python, judge_env(plan))


def _hook_done(plan: FixPlan, result: Any) -> bool:
    return any(r.fix_id == s.fix_id and s.kind == "hook" and r.status in ("done", "unchanged")
               for r in result.steps for s in plan.steps)


def _say_unfinished(prefix: str) -> None:
    """Before anything else: an apply running now, or one that never finished (kill -9)."""
    from tfdoctor.console import note
    from tfdoctor.fixing.apply import unfinished_words
    from tfdoctor.fixing.journal import Journal
    from tfdoctor.fixing.lock import holder

    running = holder(prefix)
    if running is not None:
        note(f"A fix is running in {prefix} now: {running}.")
        return
    stale = Journal.unfinished(prefix)
    if stale is not None:
        note(unfinished_words(stale)[0].upper() + unfinished_words(stale)[1:] + ".")


def _prefix_of(python: str) -> str:
    from tfdoctor.errors import FixError
    from tfdoctor.host import run_command

    result = run_command([python, "-I", "-c", "import sys; print(sys.prefix)"], timeout=60)
    if not result.ok:
        raise FixError(f"cannot run {python}: {result.describe_failure()}")
    return result.stdout.strip()


def _recover(python: str, as_json: bool) -> int:
    from tfdoctor.console import note
    from tfdoctor.exit_codes import ExitCode
    from tfdoctor.fixing.apply import recover
    from tfdoctor.fixing.proc import CancelToken, interruptible

    prefix = _prefix_of(python)
    with interruptible(CancelToken(), note):  # a signal waits for the restore to finish
        journal = recover(prefix)
    if as_json:
        click.echo(json.dumps({"recovered": str(journal) if journal else None}, indent=2))
    elif journal is None:
        click.echo(f"Nothing to recover: every fix in {python}'s environment finished.")
    else:
        click.echo(f"Recovered: the unfinished apply recorded in {journal} is rolled back; the "
                   "environment is byte for byte as it was before it.")
    return ExitCode.OK


def _undo(python: str, as_json: bool) -> int:
    from tfdoctor.console import note
    from tfdoctor.exit_codes import ExitCode
    from tfdoctor.fixing.apply import undo_last
    from tfdoctor.fixing.proc import CancelToken, interruptible

    prefix = _prefix_of(python)
    with interruptible(CancelToken(), note):  # a signal waits for the undo to finish
        journal = undo_last(prefix)
    if as_json:
        click.echo(json.dumps({"undone": str(journal)}, indent=2))
    else:
        click.echo(f"Undone: the apply recorded in {journal} is reverted; packages and files "
                   "are byte for byte as they were before it.\n", nl=False)
    return ExitCode.OK


def _plan_json(plan: FixPlan, previews: dict[int, Any]) -> dict[str, Any]:
    return {"plan": plan.to_dict(), "diffs": {
        plan.steps[i].fix_id: [{"path": c.path, "diff": c.diff()} for c in changes if c.changed]
        for i, changes in previews.items()}}
