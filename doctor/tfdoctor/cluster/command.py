"""`tfdoctor cluster`: registered on the main group with `cli.add_command(cluster)`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from tfdoctor.cmdkit import FAIL_ON, resolve_python
from tfdoctor.completion import complete_from

PUBLIC_LAUNCHERS = ("local", "tf-config", "slurm")
LAUNCHERS = (*PUBLIC_LAUNCHERS, "slurm-task")
"""slurm-task is internal: what `--launcher slurm` runs on each node through srun. It is accepted,
but neither --help nor shell completion offers it."""


def _worker_python(values: tuple[str, ...]) -> dict[int, str]:
    out = {}
    for value in values:
        index, sep, path = value.partition("=")
        if not sep or not index.isdigit():
            raise click.BadParameter(f"{value!r}: expected INDEX=PATH", param_hint="--worker-python")
        out[int(index)] = resolve_python(path)
    return out


@click.command("cluster")
@click.option(
    "--launcher",
    type=click.Choice(LAUNCHERS),
    metavar=f"[{'|'.join(PUBLIC_LAUNCHERS)}]",
    shell_complete=complete_from(PUBLIC_LAUNCHERS),
    default="local",
    show_default=True,
    help="local: N processes here; tf-config: this process is one worker of TF_CONFIG; "
    "slurm: srun one task per node of this allocation.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=64),
    default=2,
    show_default=True,
    help="Number of workers (local launcher).",
)
@click.option("--nodes", type=click.IntRange(min=1), help="Nodes to use (slurm; default: all).")
@click.option("--python", "python", metavar="PATH", help="Interpreter whose TensorFlow runs the job.")
@click.option(
    "--worker-python",
    multiple=True,
    metavar="INDEX=PATH",
    help="Another interpreter for one local worker (repeatable).",
)
@click.option("--ports", metavar="P,P,...", help="Ports of the local workers (default: free ones).")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=23456,
    show_default=True,
    help="Slurm: task i listens on PORT + i.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=120.0,
    show_default=True,
    metavar="SECONDS",
    help="Deadline of every worker: past it, every process is killed.",
)
@click.option(
    "--steps",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Training steps of the small model.",
)
@click.option(
    "--replay",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="Show a saved cluster document (judged again with today's rules) instead of running a job.",
)
@click.option("--json", "as_json", is_flag=True, help="Write the cluster document to stdout.")
@click.option("--no-tui", is_flag=True, help="Plain text even on a terminal.")
@click.option("--fail-on", type=FAIL_ON, default="error", show_default=True)
@click.option("-v", "--verbose", is_flag=True, help="Also show info findings.")
@click.pass_context
def cluster(
    ctx: click.Context,
    launcher: str,
    workers: int,
    nodes: int | None,
    python: str | None,
    worker_python: tuple[str, ...],
    ports: str | None,
    port: int,
    timeout: float,
    steps: int,
    replay: Path | None,
    as_json: bool,
    no_tui: bool,
    fail_on: str,
    verbose: bool,
) -> None:
    """Run TensorFlow's MultiWorkerMirroredStrategy across workers: all-reduce checked and
    timed, a few training steps, each node diagnosed and the nodes compared (docs/cluster.md).

    Exit codes as for `tfdoctor`: 0 healthy, 1 problems, 2 usage error, 3 could not check.
    """
    from tfdoctor.cluster import run
    from tfdoctor.console import error, note

    tui = not (as_json or no_tui) and sys.stdout.isatty() and sys.stdin.isatty()
    if replay is not None:
        from tfdoctor.cluster.replay import load_document

        saved = load_document(replay)  # a bad file is a one-line error (exit 2) before any screen
        if tui:
            _tui(ctx, lambda: saved, f"replaying {replay}", fail_on)
        _emit(ctx, saved, as_json, verbose, fail_on)
    given = tuple(int(p) for p in ports.split(",")) if ports else ()
    if given and len(given) != workers:
        raise click.BadParameter(f"{len(given)} port(s) for {workers} worker(s)", param_hint="--ports")
    opts = run.Options(
        python=resolve_python(python),
        workers=workers,
        worker_python=_worker_python(worker_python),
        ports=given,
        timeout=timeout,
        steps=steps,
    )
    if tui and launcher in ("local", "slurm"):
        _tui(ctx, lambda: _run_chief(opts, launcher, nodes, port),
             f"{workers if launcher == 'local' else nodes or 'every'} {launcher} worker(s) of "
             f"{opts.python}", fail_on)
    if launcher == "local":
        doc: dict | None = run.run_local(opts)
        mine = 0
    elif launcher == "slurm":
        doc, err = run.run_slurm(opts, nodes, port)
        if doc is None:
            error(f"cluster: no report from the chief task; srun said:\n{err[-3000:]}")
            ctx.exit(3)
        mine = 0
    else:
        config = run.slurm_tf_config(port) if launcher == "slurm-task" else None
        doc, mine = run.run_tf_config(opts, "slurm" if config else "tf-config", config)
    if doc is None:
        note(
            f"cluster: worker done ({'completed' if mine == 0 else 'failed'}); "
            "the chief (worker 0) writes the cluster report"
        )
        ctx.exit(mine)
    _emit(ctx, doc, as_json, verbose, fail_on)


def _emit(ctx: click.Context, doc: dict[str, Any], as_json: bool, verbose: bool, fail_on: str) -> None:
    """Write the document (JSON or text) and exit with its code."""
    from tfdoctor.cluster.document import exit_code, render_text

    code = exit_code(doc, fail_on)
    doc["verdict"]["exit_code"] = int(code)
    if as_json:
        click.echo(json.dumps(doc, indent=2))
    else:
        from tfdoctor.pictures.text import unicode_ok

        click.echo(render_text(doc, verbose, unicode_ok(sys.stdout)), nl=False)
    sys.stdout.flush()
    ctx.exit(code)


def _run_chief(opts: Any, launcher: str, nodes: int | None, port: int) -> dict[str, Any]:
    """The document of a local or slurm run, for the TUI's loader (it raises what it cannot say)."""
    from tfdoctor.cluster import run
    from tfdoctor.errors import TfdoctorError

    if launcher == "local":
        return run.run_local(opts)
    doc, err = run.run_slurm(opts, nodes, port)
    if doc is None:
        raise TfdoctorError(f"no report from the chief task; srun said: {err[-300:]}")
    return doc


def _tui(ctx: click.Context, load: Callable[[], dict[str, Any]], doing: str, fail_on: str) -> None:
    """The cluster TUI over `load`; Quit during a run kills every worker's process group."""
    from tfdoctor.host import kill_all_children
    from tfdoctor.tui import run_cluster_tui

    code, _ = run_cluster_tui(load, doing, fail_on, stop=kill_all_children)
    ctx.exit(code)
