"""What the command modules share: option decorators, the target interpreter, output and exit.

Every command module (cli.py's own commands, fixing/commands.py, share/commands.py,
triage/command.py) imports from here; none imports tfdoctor.cli, which only assembles the group.
Module scope imports click and the stdlib only (`tfdoctor --help` stays light).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tfdoctor.exit_codes import ExitCode

if TYPE_CHECKING:
    from tfdoctor.report import Report

FAIL_ON = click.Choice(["error", "warning", "info"])


def judge_options(func: Any) -> Any:
    """Options shared by the live run and replay: how the verdict is judged and printed."""
    func = click.option("--json", "as_json", is_flag=True,
                        help="Write one JSON document (docs/json-report.md) to stdout.")(func)
    func = click.option("--fail-on", type=FAIL_ON, default="error", show_default=True,
                        help="Lowest severity that makes the exit code 1.")(func)
    func = click.option("--expect-gpus", type=click.IntRange(min=0), default=None,
                        help="Fail when TensorFlow can use fewer GPUs than this.")(func)
    func = click.option("-v", "--verbose", is_flag=True,
                        help="Also show info findings and passing checks.")(func)
    return click.option(
        "--prometheus-textfile", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
        help="Also write node_exporter textfile metrics to PATH (atomically; a *.prom file in "
        "the collector's directory).")(func)


TARGET_DEFAULT = ("default: tfdoctor's own when it has TensorFlow, else the active $VIRTUAL_ENV, "
                  "then $CONDA_PREFIX, else tfdoctor's own")
"""What target_python picks without --python, in the words every command's --python help uses."""


def resolve_python(value: str | None) -> str:
    """The target interpreter's path; a bad one is a usage error, not a finding."""
    return target_python(value)[0]


def target_python(value: str | None, env: dict[str, str] | None = None) -> tuple[str, str]:
    """(the interpreter to diagnose, why it was chosen): --python, else the active environment
    ($VIRTUAL_ENV, then $CONDA_PREFIX) when tfdoctor runs from another one (pipx, uv tool),
    else tfdoctor's own interpreter."""
    from tfdoctor.errors import InterpreterError

    if value is None:
        env = dict(os.environ) if env is None else env
        own = os.path.realpath(sys.prefix)
        if own_has_tensorflow():  # `./install.sh && .venv/bin/tfdoctor` under an active conda base
            return sys.executable, "tfdoctor's own interpreter, which has TensorFlow"
        for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
            prefix = env.get(var)
            candidate = os.path.join(prefix, "bin", "python") if prefix else ""
            if not candidate or not os.access(candidate, os.X_OK):
                continue
            if os.path.realpath(prefix or "") == own:
                return sys.executable, f"tfdoctor's own interpreter, the active ${var}"
            return candidate, f"the active environment ${var}; tfdoctor runs from {sys.executable}"
        return sys.executable, "tfdoctor's own interpreter: no $VIRTUAL_ENV or $CONDA_PREFIX"
    found = value if os.sep in value else shutil.which(value)
    if not found or not Path(found).exists():
        raise InterpreterError(f"--python {value}: no such interpreter")
    if Path(found).is_dir() or not os.access(found, os.X_OK):
        raise InterpreterError(f"--python {value}: not an executable file")
    return os.path.abspath(found), "--python"


def own_has_tensorflow() -> bool:
    """Whether tfdoctor's own environment has TensorFlow (as install.sh makes it; pipx and uv
    tool environments never do). Finds the package without importing it."""
    from importlib.util import find_spec

    return find_spec("tensorflow") is not None


def emit(report: Report, *, as_json: bool, verbose: bool, fail_on: str,
         prometheus_textfile: Path | None = None) -> ExitCode:
    """Write the report to stdout (and metrics) and decide the exit code: the only place."""
    from tfdoctor.console import color_enabled
    from tfdoctor.exit_codes import exit_code_for
    from tfdoctor.render_text import render_text

    code = exit_code_for(report, fail_on)
    if prometheus_textfile is not None:  # before stdout: a write failure must not contradict it
        from tfdoctor.share.prometheus import write_prometheus_textfile

        write_prometheus_textfile(report, prometheus_textfile, exit_code=int(code))
    if as_json:
        click.echo(indented_json(report.to_dict(exit_code=int(code))))
    else:
        from tfdoctor.pictures.text import unicode_ok

        click.echo(render_text(report, verbose=verbose, color=color_enabled(sys.stdout),
                               unicode=unicode_ok(sys.stdout)), nl=False)
    return code


def indented_json(doc: Any) -> str:
    """json.dumps(doc, indent=2), the same text, faster: json's C encoder runs only without an
    indent, and the pure-Python one took 0.5 s for a triaged 8 MiB pip list (issue 21). Here each
    dict or list of strings (or other scalars) is joined in C; anything but plain JSON types, or
    a key that is not a str, is left to json.dumps."""
    out: list[str] = []
    try:
        _indented(doc, out, "\n")
    except _NotPlain:
        return json.dumps(doc, indent=2)
    return "".join(out)


class _NotPlain(Exception):
    """A value indented_json leaves to json.dumps."""


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


_SCALARS: dict[type, Any] = {
    str: json.encoder.encode_basestring_ascii,
    int: int.__repr__,
    float: _float,
    bool: lambda value: "true" if value else "false",
    type(None): lambda _value: "null",
}


def _scalar(value: Any) -> str:
    encode = _SCALARS.get(type(value))
    if encode is None:
        raise _NotPlain
    return encode(value)


def _indented(value: Any, out: list[str], newline: str) -> None:
    """Append value's text at the indent newline ends with, as json.dumps(indent=2) writes it."""
    kind = type(value)
    if kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        if set(map(type, value)) != {str}:
            raise _NotPlain
        keys = map(_SCALARS[str], value)
        types = set(map(type, value.values()))
        if types <= _SCALARS.keys():
            encode = _SCALARS[str] if types == {str} else _scalar
            items = map("{}: {}".format, keys, map(encode, value.values()))
            out.append("{" + inner + ("," + inner).join(items) + newline + "}")
            return
        out.append("{")
        first = True
        for key, item in zip(keys, value.values(), strict=True):
            out.append(inner + key + ": " if first else "," + inner + key + ": ")
            first = False
            _indented(item, out, inner)
        out.append(newline + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        types = set(map(type, value))
        if types <= _SCALARS.keys():
            encode = _SCALARS[str] if types == {str} else _scalar
            out.append("[" + inner + ("," + inner).join(map(encode, value)) + newline + "]")
            return
        out.append("[")
        first = True
        for item in value:
            out.append(inner if first else "," + inner)
            first = False
            _indented(item, out, inner)
        out.append(newline + "]")
    else:
        out.append(_scalar(value))


class ToolFailure(click.ClickException):
    """A TfdoctorError at the command edge: one line on stderr, exit code 2."""

    exit_code = ExitCode.USAGE

    def show(self, file: Any = None) -> None:
        from tfdoctor.console import error

        error(self.message)


def check_writable(path: Path | None) -> None:
    """A usage error now if an output file could not be written later."""
    from tfdoctor.errors import OutputFileError

    if path is None:
        return
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise OutputFileError(path, f"directory {parent} does not exist or is not writable")


def save_facts(path: Path, report: Report) -> None:
    """--save: the replayable facts, written atomically, readable by the owner only."""
    from tfdoctor.files import write_atomic

    write_atomic(path, json.dumps(report.facts.to_dict(), indent=2) + "\n")


def parse_only(value: str | None) -> tuple[str, ...] | None:
    """--only a,b: known recipe names, or a usage error naming the known ones."""
    if value is None:
        return None
    from tfdoctor.smoke import RECIPES

    names = tuple(n.strip() for n in value.split(",") if n.strip())
    unknown = [n for n in names if n not in RECIPES]
    if unknown or not names:
        raise click.BadParameter(f"unknown recipe {', '.join(unknown) or '(none)'}; "
                                 f"known: {', '.join(RECIPES)}", param_hint="--only")
    return names


def diagnose_with_progress(host: Any, config: Any, smoke: Any) -> Report:
    """The diagnosis, with progress on stderr for the slow parts when stderr is a terminal."""
    from tfdoctor.console import progress, progress_done
    from tfdoctor.diagnose import diagnose

    progress("tfdoctor: probing driver, CUDA, libraries and TensorFlow ...")
    try:
        return diagnose(host, config, smoke=smoke, progress=lambda name: progress(
            f"tfdoctor: {name} probed"), smoke_progress=lambda recipe, elapsed: progress(
            f"tfdoctor: smoke {recipe} ({elapsed:.0f} s)"))
    finally:
        progress_done()
