"""`tfdoctor cluster`: registered on the main group with `cli.add_command(cluster)`."""

from __future__ import annotations

import json
import sys

import click

from tfdoctor.cmdkit import FAIL_ON, resolve_python

LAUNCHERS = ("local", "tf-config", "slurm", "slurm-task")


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
@click.option("--json", "as_json", is_flag=True, help="Write the cluster document to stdout.")
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
    as_json: bool,
    fail_on: str,
    verbose: bool,
) -> None:
    """Run TensorFlow's MultiWorkerMirroredStrategy across workers: all-reduce checked and
    timed, a few training steps, each node diagnosed and the nodes compared (docs/cluster.md).

    Exit codes as for `tfdoctor`: 0 healthy, 1 problems, 2 usage error, 3 could not check.
    """
    from tfdoctor.cluster import run
    from tfdoctor.cluster.document import exit_code, render_text
    from tfdoctor.console import error, note

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
    code = exit_code(doc, fail_on)
    doc["verdict"]["exit_code"] = int(code)
    if as_json:
        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo(render_text(doc, verbose), nl=False)
    sys.stdout.flush()
    ctx.exit(code)
