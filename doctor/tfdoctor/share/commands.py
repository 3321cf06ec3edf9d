"""Commands `tfdoctor report` and `tfdoctor fleet`, and the --prometheus-textfile option.

Thin click commands over tfdoctor.share; registered on the main group by
tfdoctor.cli (which they never import).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tfdoctor.cmdkit import TARGET_DEFAULT
from tfdoctor.share import CATEGORIES


@click.command("report")
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    metavar="DIR|FILE",
    help="Where to write: a directory (end it with / to create it), or a file name "
    "(the .md and .json go side by side). Default: the current directory.",
)
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Also write a self-contained HTML page to FILE: the verdict, GPU charts (inline SVG), "
    "findings and checks, redacted as the Markdown is.",
)
@click.option(
    "--preview", is_flag=True, help="Print exactly what would leave the machine, and write nothing."
)
@click.option(
    "--no-redact",
    is_flag=True,
    help="Do not redact: user and host names, home paths and device ids stay as they are.",
)
@click.option(
    "--salt",
    envvar="TFDOCTOR_REDACT_SALT",
    metavar="S",
    help="Pseudonym salt shared by a fleet: the same user, host or GPU gets the same "
    "pseudonym on every node (default: random per report). Env: TFDOCTOR_REDACT_SALT.",
)
@click.option(
    "--keep",
    type=click.Choice(CATEGORIES),
    multiple=True,
    help="Let one category through unredacted (repeatable).",
)
@click.option(
    "--python",
    "python",
    metavar="PATH",
    help=f"Interpreter whose TensorFlow to diagnose ({TARGET_DEFAULT}).",
)
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Report on saved facts or a --json report; do not probe.",
)
@click.option("--quick", is_flag=True, help="Static checks only: never import TensorFlow.")
@click.option(
    "--expect-gpus",
    type=click.IntRange(min=0),
    default=None,
    help="Fail when TensorFlow can use fewer GPUs than this.",
)
def report(
    output: str | None,
    html_file: Path | None,
    preview: bool,
    no_redact: bool,
    salt: str | None,
    keep: tuple[str, ...],
    python: str | None,
    from_file: Path | None,
    quick: bool,
    expect_gpus: int | None,
) -> None:
    """Write a support report: Markdown for the ticket and the replayable JSON, redacted;
    with --html, also a self-contained HTML page of the same report with GPU charts.

    Files are owner-only (0600). Exit code 0 when written (the verdict is inside), 2 on bad
    input. docs/report-and-fleet.md says what is redacted and how.
    """
    from tfdoctor.console import note
    from tfdoctor.errors import TfdoctorError
    from tfdoctor.files import write_atomic
    from tfdoctor.share.redact import Identity, Policy, Redactor
    from tfdoctor.share.support import make_support_report, output_paths

    if no_redact and (salt or keep):
        raise TfdoctorError("--no-redact cannot be combined with --salt or --keep")
    if from_file and python:
        raise TfdoctorError("--from reports on saved facts; --python has nothing to probe")
    facts, config = _facts(from_file, python, quick, expect_gpus)
    # Saved facts name the machine that collected them, not this one: hide the document's names.
    identity = Identity.of_document(facts) if from_file else Identity.of_this_process()
    redactor = None if no_redact else Redactor(Policy.make(salt, keep), identity)
    support = make_support_report(facts, config, redactor, html=html_file is not None)
    md_path, json_path = output_paths(output, facts.collected_at)
    if preview:
        click.echo(
            f"==> {md_path} <==\n{support.markdown}\n==> {json_path} <==\n{support.json}", nl=False
        )
        if support.html is not None:
            click.echo(f"==> {html_file} <==\n{support.html}", nl=False)
        note(
            "tfdoctor: preview only, nothing written"
            + ("" if salt or no_redact else " (pseudonyms change on every run without --salt)")
        )
        return
    if output is not None and output.endswith("/"):
        Path(output).mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomic(md_path, support.markdown, 0o600)
    write_atomic(json_path, support.json, 0o600)
    if html_file is not None and support.html is not None:
        write_atomic(html_file, support.html, 0o600)
    written = f"{md_path}, {json_path} and {html_file}" if html_file else f"{md_path} and {json_path}"
    note(
        f"tfdoctor: wrote {written} (owner-only; verdict: {support.verdict}"
        + (", NOT redacted)" if no_redact else ", redacted)")
    )


def _facts(
    from_file: Path | None, python: str | None, quick: bool, expect_gpus: int | None
) -> tuple[Any, Any]:
    from tfdoctor.registry import CheckConfig

    if from_file is not None:
        from tfdoctor.report import load_facts_file

        facts, config = load_facts_file(from_file)
        return facts, config if expect_gpus is None else CheckConfig(expect_gpus=expect_gpus)
    from tfdoctor.cmdkit import diagnose_with_progress, target_python
    from tfdoctor.diagnose import SmokeOptions
    from tfdoctor.host import host_from_environment

    config = CheckConfig(expect_gpus=expect_gpus)
    host = host_from_environment(*target_python(python))
    judged = diagnose_with_progress(host, config, None if quick else SmokeOptions())
    return judged.facts, config


@click.command("fleet")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document to stdout.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Rows per list in the text view (--json lists all).",
)
@click.pass_context
def fleet(ctx: click.Context, paths: tuple[Path, ...], as_json: bool, limit: int) -> None:
    """Compare many nodes' reports (files or directories of *.json): stacks, odd ones, slow ones.

    Exit code: 0 all healthy, 1 a node has problems or is slow, 3 a node could not be checked
    or a file could not be read (unreadable files are listed, never fatal), 2 no file at all.
    """
    from tfdoctor.errors import TfdoctorError
    from tfdoctor.share.fleet import load_node, report_files, summarise
    from tfdoctor.share.fleet_text import render_fleet_text

    loaded = [load_node(p) if isinstance(p, Path) else p for p in report_files(paths)]
    if not loaded:
        raise TfdoctorError("no report files (*.json) in " + ", ".join(map(str, paths)))
    summary = summarise(loaded)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(render_fleet_text(summary, limit), nl=False)
    ctx.exit(summary["exit_code"])
