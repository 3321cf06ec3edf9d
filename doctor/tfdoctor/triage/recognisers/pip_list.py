"""Package listings: `pip list`, `pip freeze`, `conda list` and `pip show`.

A listing is a run of rows under its header ("Package  Version", "# Name  Version  Build  Channel"),
or a headerless run of at least five rows, or rows right after the command that printed them
(`pip list | grep tensorflow`). A lone "name version" line elsewhere is prose, a requirement or a
log line, and says nothing about what is installed. A run holding a requirement specifier
(">=", "~=", "[extra]") is a requirements file, not a freeze.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import compress, count, repeat
from operator import itemgetter, methodcaller, not_
from typing import Any

from tfdoctor.triage.observe import Observation

from ._text import MAX_LINE, Trigger, Walk, clean, is_fence, normalise, strip_prompt, ticket_text

NAME = "pip list"

_NAME = r"[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,200}[A-Za-z0-9])?"
_PIP_HEADER = re.compile(r"Package\s+Version(?:\s+(?:Editable project location|Location|Installer))*\s*")
_DASHES = re.compile(r"-{3,}(?:\s+-{3,})*\s*")
_PIP_ROW = re.compile(rf"({_NAME})\s+(\d[\w.!+-]{{0,100}})(?:\s+(?:[A-Za-z]:\\|/|~)\S.{{0,500}})?")
_LEGACY_ROW = re.compile(rf"({_NAME}) \((\d[\w.!+-]{{0,100}})\)")
_FREEZE_ROW = re.compile(rf"({_NAME})==(\d[\w.!+-]{{0,100}})")
_URL_ROW = re.compile(rf"({_NAME}) @ (\S{{1,2000}})")
_CONDA_ROW = re.compile(rf"({_NAME})\s+(\d[\w.!+-]{{0,100}})\s+(\S{{1,200}})(?:\s+(\S{{1,200}})){{0,2}}")
_CONDA_HEADER = re.compile(r"#?\s*Name\s+Version\s+Build(?:\s+Channel)?\s*")
_WHEEL_VERSION = re.compile(r"/[A-Za-z0-9_.]+-(\d[\w.!+]{0,100})-[^/]*\.whl$")
_REQUIREMENT = re.compile(r"[A-Za-z0-9][\w.-]*\s*(?:\[[^\]]*\])?\s*(?:[<>~!]=?|===?)")
# Outside a listing, only these lines are read: a row (a name, then a version or "==" / " @ "), a
# header, `pip show`, a requirement (<, >, =) and a listing command. A row's version follows a
# space, is not digits only (_kind_of: those are lsmod sizes and counts) and ends the line or
# comes before a space (or legacy `pip list`'s ")"): "run 12," in prose is none. Each part of the
# regex scans a token once, so it stays linear on any line.
_VERSION_TOKEN = r"[^\S\n]\(?\d++(?:[^\W\d]|[.!+-])[\w.!+-]*+(?=[\s)]|\Z)"
# (possessive: a shorter digit run or token is followed by what cannot end it, so backing off never
# finds a match, and took 0.26 s on a ticket of no versions)
_TRIGGER = Trigger(("=", "<", ">", " @ ", "Version:", "Name", "Package", "packages in environment at", "list", "freeze"),
                   regex=re.compile(_VERSION_TOKEN),
                   line_local=True)  # no line break matched; the end of a line is "\n" or \Z alike
# The same lines where a ticket holds "=>", but an "=" or ">" only outside one: no requirement
# operator or freeze row holds it, and ldconfig -p prints it on every line (each read idle, a no-op:
# 59,000 of them in a ticket with a long ldconfig listing). Its regex scans twice as slowly.
_TRIGGER_ARROWS = Trigger(("<", " @ ", "Version:", "Name", "Package", "packages in environment at", "list", "freeze"),
                          regex=re.compile(r"=(?!>)|>(?<!=>)|" + _VERSION_TOKEN), line_local=True)
_LISTING_COMMAND = re.compile(r"(?:^|\s)(?:pip3?|python3?\s+-m\s+pip|uv\s+pip|conda|mamba)\s+(list|freeze)\b")

TF_DISTRIBUTIONS = frozenset(
    {
        "tensorflow",
        "tensorflow-gpu",
        "tensorflow-cpu",
        "tensorflow-intel",
        "tensorflow-macos",
        "tensorflow-cpu-aws",
        "intel-tensorflow",
    }
)
"""Distributions that install the `tensorflow` package itself (tf-nightly* too, by prefix)."""

_MIN_HEADERLESS = 5


def _obs(path: str, value: Any, line: int, source: str = NAME) -> Observation:
    return Observation(path, value, line, source)


def is_tensorflow(name: str) -> bool:
    """Whether a normalised distribution name provides TensorFlow itself."""
    return name in TF_DISTRIBUTIONS or name.startswith("tf-nightly")


def package(name: str, version: str, line: int, source: str = NAME) -> Iterator[Observation]:
    """python.package for one installed distribution, and the TensorFlow facts when it is TensorFlow."""
    norm = normalise(name)
    yield _obs("python.package", (norm, version), line, source)
    if is_tensorflow(norm):
        yield _obs("tensorflow.distribution", (norm, version), line, source)
        if version:
            yield _obs("tensorflow.version", version, line, source)


def parse_row(t: str, kind: str) -> tuple[str, str] | None:
    """(name, version) of one listing row of `kind` ("pip", "freeze", "conda"), or None."""
    if kind == "pip":
        m = _PIP_ROW.fullmatch(t) or _LEGACY_ROW.fullmatch(t)
        return (m.group(1), m.group(2)) if m else None
    if kind == "freeze":
        m = _FREEZE_ROW.fullmatch(t)
        if m:
            return m.group(1), m.group(2)
        m = _URL_ROW.fullmatch(t)
        if m:
            wheel = _WHEEL_VERSION.search(m.group(2))
            return m.group(1), wheel.group(1) if wheel else ""
        return None
    m = _CONDA_ROW.fullmatch(t)
    return (m.group(1), m.group(2)) if m else None


@lru_cache(maxsize=1 << 16)  # a pasted log repeats its lines; three regexes per line
def _kind_of(t: str) -> str | None:
    """The kind of a headerless listing row; versions of digits only are lsmod sizes, counts, prose."""
    if not (t[:1].isalnum() or t[:1] == "_"):
        return None
    if "==" in t or " @ " in t:
        return "freeze" if parse_row(t, "freeze") else None
    row = parse_row(t, "pip")
    if row and len(t.split()) == 2:
        return None if row[1].isdigit() else "pip"
    row = parse_row(t, "conda")
    if row:
        return None if row[1].isdigit() else "conda"
    return None


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """Observations from every package listing and `pip show` block in the ticket."""
    mode: str | None = None  # "pip" / "conda" under a header
    run: list[tuple[int, str, str, str]] = []  # headerless rows: (line, name, version, kind)
    hint = 0  # line of the last `pip list` / `conda list` command; hint_whole: without a filter
    hint_whole = False
    show_name: tuple[int, str] | None = None
    requirement = -1  # line of the last requirement specifier (">=", "~=", "[extra]")
    walk = Walk(lines, _TRIGGER_ARROWS if "=>" in ticket_text(lines) else _TRIGGER, lambda: mode is not None or run,
                lazy=True)
    for number, s in walk:
        t = s.strip()
        if mode is not None:
            if mode == "conda" and t.startswith("#"):
                continue
            row = parse_row(t, mode) or (parse_row(t, "pip") if mode == "conda" else None)
            if row:
                yield from _packages([row], number)
                # the rows after it read in bulk, up to the first line that is not one
                yield from _rows(walk, mode)
                continue
            if mode == "pip" and _DASHES.fullmatch(t):
                continue
            mode = None
        if show_name is not None and number - show_name[0] <= 2 and t.startswith("Version:"):
            version = t[len("Version:") :].strip()
            if version[:1].isdigit():
                yield from package(show_name[1], version, show_name[0])
            show_name = None
            continue
        if t.startswith("Name:"):
            name = t[len("Name:") :].strip()
            show_name = (number, name) if re.fullmatch(_NAME, name) else None
            yield from _end_run(run, hint, hint_whole)
            run = []
            continue
        if t.startswith("Package") and _PIP_HEADER.fullmatch(t):
            yield from _end_run(run, hint, hint_whole)
            run, mode = [], "pip"
            yield _obs("python.package_list", "pip list", number)
            continue
        conda_env = t.startswith(("# packages in environment at", "packages in environment at"))
        if conda_env or ("Name" in t and _CONDA_HEADER.fullmatch(t)):
            yield from _end_run(run, hint, hint_whole)
            run, mode = [], "conda"
            if conda_env:
                yield _obs("python.conda", True, number)
                yield _obs("python.package_list", "conda list", number)
            continue
        kind = _kind_of(t) if t and not is_fence(t) else None
        if kind is not None and (not run or run[-1][3] == kind):
            if not run and number - 1 == requirement:
                requirement = number  # a pin inside a requirements file
                continue
            run.append(_row(number, t, kind))
            continue
        if kind is None and ("=" in t or "<" in t or ">" in t) and _REQUIREMENT.match(t):
            # A requirements file: the pins around a ">=" line are wishes, not installed packages.
            run, hint, requirement = [], 0, number
            continue
        yield from _end_run(run, hint, hint_whole)
        run = []
        if kind is not None:
            run.append(_row(number, t, kind))
            continue
        command = _LISTING_COMMAND.search(strip_prompt(t)) if ("list" in t or "freeze" in t) else None
        if command:
            hint, hint_whole = number, "|" not in t and ">" not in t
    yield from _end_run(run, hint, hint_whole)


_BLOCK = 4096
"""Lines of a listing read at a time by _rows."""
_CLEANED = tuple("0123456789[>JFMASOND")
"""The first characters of a line that clean() may take a prefix off (the rest it only rstrips)."""


def _rows(walk: Walk, mode: str) -> list[Observation]:
    """The rows of the listing (of mode "pip" or "conda") that follow the line walk read last, up
    to the first line its row pattern does not match, read a block of lines at a time in C
    (stripped, matched, their names lowered) and the walk sent on past them: the row-by-row loop
    cost 3.7 us a row, a second for a pasted pip list of 232,000 packages (issue 21). What a
    line that does not match is (the listing's end, a "#" line, a dashes line) is left to the loop."""
    lines = walk.lines
    regex = _PIP_ROW if mode == "pip" else _CONDA_ROW
    i = walk.number  # the index of the line after the one read last
    found: list[Observation] = []
    size = 16  # (most listings are short: the block grows)
    while i < len(lines):
        block = list(lines[i : i + size])
        size = min(size * 4, _BLOCK)
        # (a line over MAX_LINE is the walk's to skip: the block ends before it)
        stop = next(compress(range(len(block)), map(MAX_LINE.__lt__, map(len, block))), len(block))
        texts = list(map(str.strip, block[:stop]))
        for k in compress(range(stop), map(str.startswith, block, repeat(_CLEANED))):
            texts[k] = clean(block[k]).strip()
        matches = list(map(regex.fullmatch, texts))
        stop = next(compress(range(stop), map(not_, matches)), stop)
        if stop:
            found += _packages(list(map(methodcaller("group", 1, 2), matches[:stop])), i + 1)
        i += stop
        if stop < len(block):
            break
    walk.skip_to(i)
    return found


def _packages(rows: list[tuple[str, str]], first: int) -> list[Observation]:
    """package() of each (name, version) row, the first on line `first`, the next on the next."""
    names = list(map(normalise, map(itemgetter(0), rows)))
    if TF_DISTRIBUTIONS.isdisjoint(names) and not any(map(methodcaller("startswith", "tf-nightly"), names)):
        # package() for rows of no TensorFlow: hundreds of thousands in a listing
        values = zip(names, map(itemgetter(1), rows), strict=True)
        return list(map(Observation, repeat("python.package"), values, count(first), repeat(NAME)))
    return [ob for number, (name, version) in enumerate(rows, first) for ob in package(name, version, number)]


def _row(number: int, t: str, kind: str) -> tuple[int, str, str, str]:
    row = parse_row(t, kind) or ("", "")
    return number, row[0], row[1], kind


def _end_run(run: list[tuple[int, str, str, str]], hint: int, hint_whole: bool) -> Iterator[Observation]:
    """The observations of a finished headerless run, if it is a listing."""
    if not run:
        return
    after_command = hint and 0 < run[0][0] - hint <= 2
    if len(run) < _MIN_HEADERLESS and not after_command:
        return
    if len(run) >= _MIN_HEADERLESS or hint_whole:
        yield _obs("python.package_list", "pip freeze" if run[0][3] == "freeze" else "pip list", run[0][0])
    for number, name, version, _kind in run:
        yield from package(name, version, number)
