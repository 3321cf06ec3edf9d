"""`tfdoctor kernels` (every kernelspec with a one-line verdict) and the `--kernel NAME` target.

Module scope imports only click and the standard library, so `tfdoctor --help` stays light.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from tfdoctor.host import Host
    from tfdoctor.kernels.specs import KernelSpec
    from tfdoctor.report import Report


def installed_specs(env: dict[str, str]) -> tuple[KernelSpec, ...]:
    """`jupyter kernelspec list --json` when Jupyter is on PATH (its own answer, with its own
    paths), else the standard search path read directly."""
    from tfdoctor.kernels.specs import default_prefixes, find_specs, read_spec, search_path

    jupyter = shutil.which("jupyter", path=env.get("PATH"))
    if jupyter:
        from tfdoctor.host import run_command

        done = run_command([jupyter, "kernelspec", "list", "--json"], timeout=30, env=env)
        try:
            listed = json.loads(done.stdout)["kernelspecs"] if done.ok else None
        except (ValueError, KeyError, TypeError):
            listed = None
        if isinstance(listed, dict):
            return tuple(read_spec(name, str(entry["resource_dir"]))
                         for name, entry in sorted(listed.items())
                         if isinstance(entry, dict) and "resource_dir" in entry)
    return find_specs(search_path(env, default_prefixes(env)))


def spec_named(name: str, env: dict[str, str]) -> KernelSpec:
    """The kernelspec `name`; a usage error naming the installed ones when there is none."""
    from tfdoctor.errors import InterpreterError

    specs = installed_specs(env)
    for spec in specs:
        if spec.name == name.lower():
            if spec.error:
                raise InterpreterError(f"--kernel {name}: {spec.error}")
            return spec
    known = ", ".join(s.name for s in specs) or "none installed"
    raise InterpreterError(f"--kernel {name}: no such kernelspec (installed: {known})")


def kernel_host(name: str) -> Host:
    """The host as kernel `name` starts: its interpreter and its environment (this process's,
    as the Jupyter server's stand-in, with kernel.json's env block laid over it). Says on
    stderr how that differs from this shell."""
    from tfdoctor.cmdkit import target_python
    from tfdoctor.console import note
    from tfdoctor.errors import InterpreterError
    from tfdoctor.host import host_from_environment
    from tfdoctor.kernels.specs import describe, differences, interpreter, kernel_env

    shell = dict(os.environ)
    spec = spec_named(name, shell)
    env = kernel_env(spec, shell)
    python = interpreter(spec, env)
    if python is None:
        raise InterpreterError(f"--kernel {name}: its interpreter {spec.argv[0]!r} is not found "
                               f"or not executable ({spec.kernel_json})")
    diffs = differences(spec, shell, target_python(None, shell)[0])
    note(f"tfdoctor: kernel {spec.name} ({spec.display_name}): {spec.kernel_json}")
    for d in diffs:
        note(f"  differs from this shell: {describe(d)}")
    host = host_from_environment(python, f"Jupyter kernel {spec.name} ({spec.kernel_json})")
    return type(host)(env=env, root=host.root, python=python, python_why=host.python_why)


def verdict_line(report: Report) -> str:
    """One line: healthy, or how many problems and the root cause."""
    root = report.root_cause
    errors = report.counts().get("error", 0)
    if report.verdict == "healthy":
        return "healthy"
    if report.verdict == "incomplete":
        return "incomplete: some checks could not run"
    return f"{errors} problem(s)" + (f"; root cause: {root.id}" if root else "")


def judge_spec(spec: KernelSpec, shell: dict[str, str], shell_python: str) -> dict[str, Any]:
    """A kernelspec's row: its interpreter, env block, differences and quick verdict."""
    from tfdoctor.diagnose import diagnose
    from tfdoctor.host import host_from_environment
    from tfdoctor.kernels.specs import differences, interpreter, kernel_env

    row: dict[str, Any] = {"name": spec.name, "display_name": spec.display_name,
                           "kernel_json": spec.kernel_json, "argv": list(spec.argv),
                           "env": dict(spec.env), "python": None, "differences": [],
                           "verdict": None, "problems": False, "findings": [],
                           "error": spec.error}
    if spec.error:
        row["verdict"] = "broken kernelspec"
        return row
    env = kernel_env(spec, shell)
    python = interpreter(spec, env)
    row["python"] = python
    row["differences"] = [{"name": d.name, "shell": d.shell, "kernel": d.kernel,
                           "source": d.source}
                          for d in differences(spec, shell, shell_python)]
    if python is None:
        row["verdict"] = f"interpreter {spec.argv[0]!r} not found"
        return row
    if spec.language and spec.language.lower() != "python":
        row["verdict"] = f"not a Python kernel ({spec.language})"
        return row
    host = host_from_environment(python)
    report = diagnose(type(host)(env=env, root=host.root, python=python))
    row["verdict"] = verdict_line(report)
    row["problems"] = report.verdict == "problems"
    row["findings"] = [f.id for f in report.findings]
    return row


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
@click.option("--fix", "fix_name", metavar="NAME",
              help="Show the fix of kernel NAME's kernel.json env block (a diff; a dry run).")
@click.option("--apply", "do_apply", is_flag=True, help="With --fix: apply it (asks first).")
@click.option("--yes", "-y", is_flag=True, help="With --fix --apply: do not ask.")
@click.option("--undo", "undo_name", metavar="NAME",
              help="Put kernel NAME's kernel.json back as it was before the last --fix --apply.")
@click.pass_context
def kernels(ctx: click.Context, as_json: bool, fix_name: str | None, do_apply: bool, yes: bool,
            undo_name: str | None) -> None:
    """List the installed Jupyter kernels with a one-line verdict each (static checks, as the
    kernel starts: its interpreter and its kernel.json env). `tfdoctor --kernel NAME` diagnoses
    one in full; `--fix NAME` corrects what its kernel.json env block breaks.

    Exit codes: 0 every Python kernel healthy, 1 a kernel has problems, 2 usage error.
    """
    if undo_name is not None:
        from tfdoctor.fixing.apply import undo_last

        journal = undo_last(spec_named(undo_name, dict(os.environ)).resource_dir)
        click.echo(f"Undone: {undo_name}'s kernel.json is as it was (journal: {journal}).")
        return
    if fix_name is not None:
        ctx.exit(_fix(fix_name, do_apply, yes, as_json))
    if do_apply or yes:
        raise click.UsageError("--apply and --yes go with --fix NAME")
    from tfdoctor.cmdkit import target_python
    from tfdoctor.exit_codes import ExitCode
    from tfdoctor.kernels.specs import Difference, describe

    shell = dict(os.environ)
    shell_python = target_python(None, shell)[0]
    rows = [judge_spec(s, shell, shell_python) for s in installed_specs(shell)]
    bad = any(r["problems"] for r in rows)
    if as_json:
        click.echo(json.dumps({"shell_python": shell_python, "kernels": rows}, indent=2))
    elif not rows:
        click.echo("No Jupyter kernelspecs found (jupyter kernelspec list).")
    else:
        for r in rows:
            click.echo(f"{r['name']:<20} {r['verdict']}")
            click.echo(f"{'':<20} {r['python'] or ' '.join(r['argv'][:1])}  ({r['kernel_json']})")
            for d in r["differences"]:
                click.echo(f"{'':<20} {describe(Difference(**d))}")
    ctx.exit(ExitCode.PROBLEMS if bad else ExitCode.OK)


def _fix(name: str, do_apply: bool, yes: bool, as_json: bool) -> int:
    """Plan (and with --apply, apply) the kernelspec env fix of kernel `name`."""
    from tfdoctor.diagnose import diagnose
    from tfdoctor.exit_codes import ExitCode
    from tfdoctor.fixing.apply import apply_plan
    from tfdoctor.fixing.preview import preview_files
    from tfdoctor.kernels.fix import plan_kernel_fix

    spec = spec_named(name, dict(os.environ))
    plan = plan_kernel_fix(spec, diagnose(kernel_host(name)))
    diffs = [c.diff() for s in plan.steps for c in preview_files(s) if c.changed]
    applied = False
    if not plan.steps:
        message = f"Nothing to fix in {spec.kernel_json}: its env block breaks nothing found."
    elif not do_apply:
        message = "Dry run: nothing was changed.\n" + "".join(diffs)
    else:
        def confirm(step: object) -> bool:
            if yes:
                return True
            click.echo("".join(diffs), err=True)
            return click.confirm(f"Apply this to {spec.kernel_json}?", default=False, err=True)

        def no_root(step: object) -> bool:
            return False

        result = apply_plan(plan, confirm, no_root, what=f"tfdoctor kernels --fix {name}")
        applied = result.changed
        message = (f"Applied to {spec.kernel_json} (undo: tfdoctor kernels --undo {name})"
                   if result.changed else "Nothing applied.")
    if as_json:
        click.echo(json.dumps({"plan": plan.to_dict(), "diffs": diffs,
                               "applied": applied}, indent=2))
    else:
        click.echo(message)
    return ExitCode.OK
