"""The command line: the one place that assembles the command group.

Commands live in their own modules (fixing/commands.py, share/commands.py, triage/command.py,
and replay / checks / explain here) and share helpers through tfdoctor.cmdkit; none of them
imports this module back. Module scope imports click, the stdlib and those light modules;
everything heavy is imported inside command bodies (a test pins that importing this module
loads no tensorflow, textual or pynvml).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import click

from tfdoctor import __version__
from tfdoctor.cluster.command import cluster
from tfdoctor.cmdkit import (
    TARGET_DEFAULT,
    ToolFailure,
    check_writable,
    diagnose_with_progress,
    emit,
    judge_options,
    parse_only,
    save_facts,
    target_python,
)
from tfdoctor.completion import complete_ids, complete_recipes
from tfdoctor.exit_codes import ExitCode
from tfdoctor.fixing.commands import fix
from tfdoctor.host import arm_exit_watchdog, kill_all_children, start_exit_watchdog
from tfdoctor.integrations_cmd import integrations
from tfdoctor.kernels.command import kernels
from tfdoctor.share.commands import fleet, report
from tfdoctor.triage.command import triage


class DoctorGroup(click.Group):
    """Translates tool errors to one-line ClickExceptions for every command."""

    def invoke(self, ctx: click.Context) -> Any:
        from tfdoctor.errors import TfdoctorError

        try:
            return super().invoke(ctx)
        except TfdoctorError as exc:
            raise ToolFailure(str(exc)) from None


@click.group(cls=DoctorGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tfdoctor")
@click.option("--quick", is_flag=True, help="Static checks only: never import TensorFlow.")
@click.option("--no-smoke", is_flag=True, help="Same as --quick.")
@click.option("--only", metavar="RECIPE,...", shell_complete=complete_recipes,
              help="Run only these smoke recipes (see docs/smoke.md).")
@click.option("--budget", type=click.FloatRange(min=1), default=300.0, show_default=True,
              metavar="SECONDS", help="Time limit for all smoke work together.")
@click.option("--kernel", metavar="NAME",
              help="Diagnose Jupyter kernel NAME as it starts: its argv's Python, its env block.")
@click.option("--python", "python", metavar="PATH",
              help=f"Interpreter whose TensorFlow to diagnose ({TARGET_DEFAULT}).")
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Also save the collected facts to FILE (replay it with `tfdoctor replay`).")
@click.option("--no-tui", is_flag=True, help="Plain text even on a terminal.")
@click.option("--redact", is_flag=True,
              help="Redact what this run writes (--json, --save, text) as `tfdoctor report` does: "
                   "allowlisted variables, no secrets, pseudonyms for user, host, home and device ids.")
@judge_options
@click.pass_context
def cli(ctx: click.Context, quick: bool, no_smoke: bool, only: str | None, budget: float,
        kernel: str | None, python: str | None, save: Path | None, no_tui: bool, redact: bool, as_json: bool,
        fail_on: str, expect_gpus: int | None, verbose: bool, prometheus_textfile: Path | None) -> None:
    """Diagnose TensorFlow on NVIDIA GPUs: driver, CUDA, cuDNN, versions, devices, libraries,
    then real work (matmul, conv, mixed precision, XLA, multi-GPU) in the target interpreter.

    Exit codes: 0 healthy, 1 problems found, 2 usage error, 3 could not check.
    """
    if ctx.invoked_subcommand is not None:
        _forward_options(ctx, ctx.invoked_subcommand)
        return
    from tfdoctor.diagnose import SmokeOptions
    from tfdoctor.host import host_from_environment
    from tfdoctor.registry import CheckConfig

    if kernel is not None and python is not None:
        raise click.UsageError("--kernel and --python name two targets: give one")
    if kernel is not None:
        from tfdoctor.kernels.command import kernel_host

        host = kernel_host(kernel)
    else:
        host = host_from_environment(*target_python(python))
    for out in (save, prometheus_textfile):
        check_writable(out)  # before minutes of diagnosis, not after
    smoke = None if (quick or no_smoke) else SmokeOptions(parse_only(only), budget)
    config = CheckConfig(expect_gpus=expect_gpus)
    plain = as_json or no_tui or redact or prometheus_textfile is not None
    if not plain and sys.stdout.isatty() and sys.stdin.isatty():
        from tfdoctor.tui import run_tui

        ctx.exit(run_tui(host, config, smoke, fail_on=fail_on,
                         keep=(lambda r: save_facts(save, r)) if save else None))
    report = diagnose_with_progress(host, config, smoke)
    if redact:  # judged again on the redacted facts, as the support report is (docs/json-report.md)
        from tfdoctor.share.redact import Identity
        from tfdoctor.share.support import redacted_report

        identity = Identity.of_this_process() | Identity.of_this_process(host.env)
        report = redacted_report(report.facts, config, identity)
    if save:
        save_facts(save, report)
    ctx.exit(emit(report, as_json=as_json, verbose=verbose, fail_on=fail_on,
                  prometheus_textfile=prometheus_textfile))


def _forward_options(ctx: click.Context, name: str) -> None:
    """`tfdoctor --python P fix` means `tfdoctor fix --python P`: options given before a command
    become its defaults (given after it, they win); one it does not take is a usage error."""
    assert isinstance(ctx.command, click.Group)
    sub = ctx.command.get_command(ctx, name)
    takes = {p.name for p in sub.params} if sub else set()
    given = {p.name: p for p in ctx.command.params if p.name and ctx.get_parameter_source(p.name)
             is click.core.ParameterSource.COMMANDLINE}
    refused = [p.opts[0] for n, p in given.items() if n not in takes]
    if refused:
        raise click.UsageError(f"{', '.join(refused)} does not apply to `tfdoctor {name}`")
    ctx.default_map = {**(ctx.default_map or {}),
                       name: {n: ctx.params[n] for n in given}}


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--redact", is_flag=True,
              help="Redact the output as `tfdoctor report` does, hiding the names the facts were "
                   "collected under (and this machine's).")
@judge_options
@click.pass_context
def replay(ctx: click.Context, file: Path, redact: bool, as_json: bool, fail_on: str, expect_gpus: int | None,
           verbose: bool, prometheus_textfile: Path | None) -> None:
    """Re-diagnose saved facts (or a --json report) with today's tables, rules and log map."""
    from tfdoctor.registry import CheckConfig
    from tfdoctor.report import build_report, load_facts_file

    facts, config = load_facts_file(file)
    if expect_gpus is not None:
        config = CheckConfig(expect_gpus=expect_gpus)
    if redact:
        from tfdoctor.share.redact import Identity
        from tfdoctor.share.support import redacted_report

        report = redacted_report(facts, config, Identity.of_document(facts) | Identity.of_this_process())
    else:
        report = build_report(facts, config)
    ctx.exit(emit(report, as_json=as_json, verbose=verbose, fail_on=fail_on,
                  prometheus_textfile=prometheus_textfile))


@cli.command(name="checks")
@click.option("--json", "as_json", is_flag=True, help="As a JSON list.")
def list_checks(as_json: bool) -> None:
    """List every check: id, area, title and the finding ids it can report (the checks of one
    machine, then the cluster's, which only `tfdoctor cluster` runs)."""
    from tfdoctor.checks import all_checks
    from tfdoctor.cluster.catalogue import CLUSTER_CHECKS, ClusterCheckSpec
    from tfdoctor.registry import CheckSpec

    specs: tuple[CheckSpec | ClusterCheckSpec, ...] = (*all_checks(), *CLUSTER_CHECKS)
    if as_json:
        click.echo(json.dumps([{"id": s.id, "area": s.area, "title": s.title,
                                "findings": list(s.finding_ids)} for s in specs], indent=2))
        return
    for s in specs:
        click.echo(f"{s.id:<26} {s.area:<12} {s.title}")


@cli.command()
@click.argument("id", shell_complete=complete_ids)
@click.option("--tf", "tf_version", metavar="VERSION",
              help="Give the fix for this TensorFlow release (e.g. 2.11); without it, the rule.")
@click.option("--windows", is_flag=True, help="... on native Windows.")
def explain(id: str, tf_version: str | None, windows: bool) -> None:
    """Explain a finding id (the cause: what it means, how it is seen, what to do) or a check."""
    from tfdoctor.checks import all_checks
    from tfdoctor.cluster.catalogue import explain_text
    from tfdoctor.errors import TfdoctorError
    from tfdoctor.knowledge.explain import explain_finding

    text = explain_finding(id, tf_version, windows)
    if text is not None:
        click.echo(text, nl=False)
        return
    for s in all_checks():
        if id == s.id:
            click.echo(f"{s.id} ({s.area}): {s.title}\n")
            click.echo(s.doc)
            click.echo(f"\nFindings: {', '.join(s.finding_ids)}")
            return
    text = explain_text(id)
    if text is not None:
        click.echo(text, nl=False)
        return
    raise TfdoctorError(f"no check or finding named {id!r} (see `tfdoctor checks`)")


cli.add_command(fix)
cli.add_command(report)
cli.add_command(fleet)
cli.add_command(triage)
cli.add_command(integrations)
cli.add_command(kernels)
cli.add_command(cluster)


def _stop(signum: int, _frame: object) -> None:
    """SIGINT / SIGTERM: kill every child group first (they run in their own sessions and would
    outlive us), then unwind; Ctrl+C exits 130, SIGTERM 143 (128 + the signal number). If
    unwinding is stuck (a probe thread the interpreter would join), a watchdog exits anyway."""
    # The watchdog first: whatever the kill meets, tfdoctor still exits within a second.
    arm_exit_watchdog(ExitCode.INTERRUPTED if signum == signal.SIGINT else ExitCode.TERMINATED)
    kill_all_children()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(ExitCode.TERMINATED)


def install_signal_handlers() -> None:
    """The exit watchdog's thread first (a signal handler must not start threads), then _stop."""
    start_exit_watchdog()
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)


def main() -> None:
    """Entry point: errors become one line; Ctrl+C exits 130; a bug exits 70 without a traceback."""
    install_signal_handlers()
    try:
        code = cli.main(prog_name="tfdoctor", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as exc:  # noqa: BLE001  (a doctor must not die with a traceback)
        if os.environ.get("TFDOCTOR_DEBUG"):
            raise
        from tfdoctor.console import error

        error(f"internal error: {type(exc).__name__}: {exc} (TFDOCTOR_DEBUG=1 shows the traceback)")
        sys.exit(ExitCode.INTERNAL)
    sys.exit(code if isinstance(code, int) else 0)
