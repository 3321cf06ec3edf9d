"""Everything tfdoctor writes for people on stderr: errors, progress, notes. stdout is data."""

from __future__ import annotations

import os
import sys

import click


def color_enabled(stream: object) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return "NO_COLOR" not in os.environ and bool(getattr(stream, "isatty", lambda: False)())


def error(message: str) -> None:
    """One line, never a traceback; a path or value quoted from a hostile file stays printable."""
    from tfdoctor.docload import one_line

    click.echo(f"tfdoctor: error: {one_line(message, 1000)}", err=True,
               color=color_enabled(sys.stderr))


def note(message: str) -> None:
    click.echo(message, err=True, color=color_enabled(sys.stderr))


def progress(message: str) -> None:
    """Progress for the slow parts, only when a person is watching stderr."""
    if sys.stderr.isatty():
        click.echo(f"\r\033[K{message}", err=True, nl=False)


def progress_done() -> None:
    if sys.stderr.isatty():
        click.echo("\r\033[K", err=True, nl=False)
