"""`tfdoctor integrations`: where the shipped recipes and the JSON Schema are, and the helper
the recipes call when a run fails (docs/integrations.md).

Registered on the main group with `cli.add_command(integrations)`.
"""

from __future__ import annotations

from pathlib import Path

import click

from tfdoctor.resources import data_dir

SCHEMAS = {"schema": "report.schema.json", "cluster-schema": "cluster.schema.json"}
"""`integrations path` names of the JSON Schemas: `tfdoctor --json` (and triage, fleet's inputs)
and `tfdoctor cluster --json`."""


def integrations_dir() -> Path:
    """integrations/ inside the wheel, or at the top of a source checkout."""
    return data_dir("integrations")


def schema_path(name: str = "schema") -> Path:
    """A JSON Schema (SCHEMAS) as the wheel ships it, else docs/ of a source checkout."""
    file = SCHEMAS[name]
    packaged = Path(__file__).resolve().parent / "schema" / file
    return packaged if packaged.is_file() else Path(__file__).resolve().parents[2] / "docs" / file


def names() -> list[str]:
    """What `tfdoctor integrations path NAME` knows: each recipe directory, then the schemas."""
    return sorted(p.name for p in integrations_dir().iterdir() if p.is_dir()) + list(SCHEMAS)


def _complete_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    return [n for n in names() if n.startswith(incomplete)]


@click.group("integrations")
def integrations() -> None:
    """The shipped Slurm, Kubernetes, Prometheus and provisioning recipes."""


@integrations.command("path")
@click.argument("name", required=False, shell_complete=_complete_names)
def path(name: str | None) -> None:
    """Print where the recipes are installed (NAME: one recipe directory, "schema" for the JSON
    Schema of --json, "cluster-schema" for that of `cluster --json`).

    \b
    cp "$(tfdoctor integrations path slurm)/tfdoctor-slurm.sh" /usr/local/sbin/
    check-jsonschema --schemafile "$(tfdoctor integrations path schema)" report.json
    check-jsonschema --schemafile "$(tfdoctor integrations path cluster-schema)" cluster.json
    """
    from tfdoctor.errors import TfdoctorError

    if name is None:
        click.echo(integrations_dir())
        return
    if name in SCHEMAS:
        click.echo(schema_path(name))
        return
    target = integrations_dir() / name
    if name not in names() or not target.is_dir():
        raise TfdoctorError(f"no integration named {name!r}; known: {', '.join(names())}")
    click.echo(target)


@integrations.command("mark-failed")
@click.argument("textfile", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--exit-code", type=int, required=True, help="The failed run's exit status.")
@click.option("--environment", metavar="NAME", help="The environment label (default: file stem).")
def mark_failed(textfile: Path, exit_code: int, environment: str | None) -> None:
    """Mark node_exporter metrics stale after a run that reached no verdict: the old verdict is
    removed, tfdoctor_run_failed is 1, the last success time stays (for the staleness alert)."""
    from tfdoctor.share.prometheus import mark_run_failed

    mark_run_failed(textfile, exit_code, environment)
