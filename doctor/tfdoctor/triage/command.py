"""`tfdoctor triage [FILE ...|-]`: the click command (thin: reading, then triage, then emit)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click


@click.command()
@click.argument("files", nargs=-1, metavar="[FILE ...|-]")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document (docs/json-report.md).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="error",
              show_default=True, help="Lowest severity that makes the exit code 1.")
@click.option("-v", "--verbose", is_flag=True, help="Also show info findings and passing checks.")
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Also save the partial facts (replay them with `tfdoctor replay`).")
@click.option("--no-redact", is_flag=True,
              help="Keep the ticket's secrets, user, host and home names as pasted (they are "
                   "replaced in the report and the saved facts by default).")
@click.pass_context
def triage(ctx: click.Context, files: tuple[str, ...], as_json: bool, fail_on: str, verbose: bool,
           save: Path | None, no_redact: bool) -> None:
    """Diagnose pasted ticket text: TensorFlow logs and tracebacks, nvidia-smi, pip list / freeze /
    conda list, build info, ldconfig -p, dmesg, lsmod, nvcc --version, uname -a, os-release,
    PyTorch's collect_env and tf_env_collect.sh output, in any mix.

    Facts the text does not show stay unknown (never absent); the report ends with what to ask
    the user for. Reads standard input when FILE is - or absent.
    """
    from tfdoctor.cmdkit import check_writable

    if not files and sys.stdin.isatty():
        raise click.UsageError("give the ticket's text files, or - to read standard input")
    check_writable(save)
    with _few_collections():
        _triage(ctx, files, as_json, fail_on, verbose, save, no_redact)


@contextmanager
def _few_collections() -> Iterator[None]:
    """The cyclic garbage collector run every 100,000 allocations instead of 700 while a ticket
    is read: triage keeps hundreds of thousands of small objects (observations, a pip list's
    packages), and each full collection walked all of them again, eight times for a pasted pip
    list (0.3 s of its 3, issue 21). Cycles are still collected; the peak is the same."""
    before = gc.get_threshold()
    gc.set_threshold(100_000, before[1], before[2])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _triage(ctx: click.Context, files: tuple[str, ...], as_json: bool, fail_on: str, verbose: bool,
            save: Path | None, no_redact: bool) -> None:
    from tfdoctor.cmdkit import emit, save_facts
    from tfdoctor.console import note
    from tfdoctor.registry import CheckConfig
    from tfdoctor.report import build_report
    from tfdoctor.triage import triage_facts
    from tfdoctor.triage.read import read_inputs

    texts = read_inputs(list(files), sys.stdin.buffer)
    facts, observations = triage_facts(texts)
    # (written before the text report only: a pasted pip list is 232,000 observations to sort)
    summary, recognised = ("" if as_json else read_summary(observations)), bool(observations)
    identity = None
    if not no_redact:  # what the ticket shows of its machine stays out of what triage writes
        from tfdoctor.share.redact import Identity
        from tfdoctor.triage.identity import ticket_identity

        identity = Identity.of_document(facts) | ticket_identity(texts)
    del observations, texts  # tens of MB for a large ticket, which the report does not need
    if identity is None:
        report = build_report(facts)
    else:
        from tfdoctor.share.support import redacted_report

        report = redacted_report(facts, CheckConfig(), identity)
    if not recognised:
        note("tfdoctor triage: nothing in this text is output triage recognises (a TensorFlow log, "
             "nvidia-smi, pip list, ...): every check could not check")
    if save:
        save_facts(save, report)
    if not as_json:
        click.echo(summary, nl=False)
    ctx.exit(emit(report, as_json=as_json, verbose=verbose, fail_on=fail_on))


def read_summary(observations: list) -> str:
    """Which recognisers read what, and from which lines: "nvidia-smi (lines 3-21)"."""
    spans: dict[str, list[int]] = {}
    for ob in observations:
        spans.setdefault(ob.source, []).append(ob.line)
    if not spans:
        return "Read from the ticket: nothing recognised\n\n"
    parts = [f"{src} (line{'s' if len(set(ls)) > 1 else ''} {_span(ls)})" for src, ls in spans.items()]
    return "Read from the ticket: " + "; ".join(parts) + "\n\n"


def _span(lines: list[int]) -> str:
    low, high = min(lines), max(lines)
    return str(low) if low == high else f"{low}-{high}"



