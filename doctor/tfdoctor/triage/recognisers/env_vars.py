"""Environment variables the ticket shows: `export X=...`, `X=... command`, env dumps, `echo $X`,
and what Python printed of one (`print("label", os.getenv("X"))`, then the output line "label value").

Only variables that change what CUDA or TensorFlow do are read. A value that refers to another
variable ("/usr/local/cuda/lib64:$LD_LIBRARY_PATH") is not the value the process saw, so it is
skipped. PATH is read only from an env dump (a run of NAME=value lines), where it is the real value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk, strip_prompt

NAME = "environment"

NAMES = frozenset(
    {
        "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
        "XLA_FLAGS", "TF_XLA_FLAGS", "TF_FORCE_GPU_ALLOW_GROWTH", "TF_GPU_ALLOCATOR",
        "TF_CPP_MIN_LOG_LEVEL", "TF_USE_LEGACY_KERAS", "TF_ENABLE_ONEDNN_OPTS", "CONDA_PREFIX",
        "VIRTUAL_ENV",
    }
)  # fmt: skip
"""Variables read anywhere; PATH is read from env dumps only."""

_VAR = r"[A-Z_][A-Z0-9_]{0,60}"
_ASSIGN = re.compile(
    rf"(?:export |set |\$env:)?({_VAR})\s?=\s?(\"[^\"]{{0,5000}}\"|'[^']{{0,5000}}'|\S{{0,5000}})(\s.*)?"
)
_SETX = re.compile(r"setx ([A-Z_][A-Z0-9_]{0,60}) (\"[^\"]{0,5000}\"|\S{1,5000})")
_PYTHON = re.compile(r"""os\.environ\[['"]([A-Z_][A-Z0-9_]{0,60})['"]\]\s*=\s*(['"])([^'"]{0,5000})\2""")
_ECHO = re.compile(rf"(?:echo|printenv)\s+(?:\"?\$\{{?({_VAR})\}}?\"?|%({_VAR})%|\$env:({_VAR})|({_VAR}))")
_TRIGGER = Trigger(("=", "VISIBLE_DEVICES", "echo", "printenv", "setx", "os.getenv", "os.environ"))
# print("label", os.getenv("X")) / os.environ.get("X") / os.environ["X"]: Python prints "label value"
# ("label None" when X is unset)
_PRINTED = re.compile(r"""print\(\s*(['"])([^'"\n]{1,200})\1\s*,\s*os\.(?:getenv\(|environ\.get\(|environ\[)\s*"""
                      r"""(['"])([A-Z_][A-Z0-9_]{0,60})\3""")
_PRINT_WINDOW = 200
"""Lines after a print that its output is looked for in (a script, then what it printed)."""
_DUMP_LINE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,60}=.{0,5000}")
# The user's words for an empty visibility variable, which hides every GPU: "CUDA_VISIBLE_DEVICES is
# empty", "... is set to an empty string", "`CUDA_VISIBLE_DEVICES`. On my system it is empty"
# (Gaius-Augustus/Tiberius#105)
_EMPTY = re.compile(r"\b(CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES)\b`?\.?\s*(?:On my (?:system|machine|host),?\s*)?"
                    r"(?:it |which )?(?:is|was|gets|got) (?:set to )?(?:an? )?(?:explicit(?:ly)? )?empty\b")

# ... and the value stated inside a sentence or a command: "I set CUDA_VISIBLE_DEVICES=1 before",
# "CUDA_VISIBLE_DEVICES=0,1 python train.py", "When using the TF_GPU_ALLOCATOR=cuda_malloc_async, ..."
# (a fact the user gives, judged by the checks; only variables whose values are plain words)
_STATED = re.compile(r"(?<![\w$])(CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES|TF_GPU_ALLOCATOR|TF_FORCE_GPU_ALLOW_GROWTH)"
                     r"=(\"[^\"]{0,200}\"|'[^']{0,200}'|[\w,-]{1,200})")


def _obs(name: str, value: str, line: int) -> Observation:
    return Observation("env", (name, value), line, NAME)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _refers(value: str) -> bool:
    return "$" in value or "%" in value and re.search(r"%\w+%", value) is not None


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """An env observation per variable assignment, dump line or echoed value in the ticket."""
    echo: tuple[int, str] | None = None
    printed: dict[str, str] = {}  # label -> variable, of the prints seen so far
    read_until = 0  # a print's output is read in the lines that follow it, up to _PRINT_WINDOW
    dump_previous = False
    walk = Walk(lines, _TRIGGER, lambda: echo is not None or walk.number < read_until)
    for number, s in walk:
        t = s.strip()
        if printed and number <= read_until and (value := _printed_value(t, printed)) is not None:
            yield _obs(*value, number)
            continue
        if "print(" in t and "os." in t:
            for call in _PRINTED.finditer(t):
                if call.group(4) in NAMES:
                    printed[call.group(2).rstrip()] = call.group(4)
                    read_until = number + _PRINT_WINDOW
        if walk.gap:  # the line before, unread, has no "=": no dump line
            dump_previous = False
        dump = "=" in t and bool(_DUMP_LINE.fullmatch(t)) and " " not in t.split("=", 1)[0]
        if echo is not None:
            if number == echo[0] + 1 and t and not t.startswith(("$", "#", ">", "%")):
                if t != f"%{echo[1]}%" and not t.startswith(("echo ", "printenv ")):
                    yield _obs(echo[1], t, number)
            echo = None
        if "VISIBLE_DEVICES" in t and (empty := _EMPTY.search(t)):
            yield _obs(empty.group(1), "", number)
        elif ("VISIBLE_DEVICES=" in t or "TF_" in t) and not _ASSIGN.fullmatch(strip_prompt(t)) \
                and (stated := _STATED.search(t)):
            # (a sentence's comma after the value is not part of it: "...=cuda_malloc_async, TF throws")
            yield _obs(stated.group(1), _unquote(stated.group(2)).rstrip(","), number)
        if "=" in t:
            yield from _assignment(t, number, dump_previous or _next_is_dump(lines, number))
        elif "echo" in t or "printenv" in t or "setx" in t:
            command = strip_prompt(t)
            if command.startswith(("echo ", "printenv ")):
                m = _ECHO.fullmatch(command)
                name = next((g for g in m.groups() if g), None) if m else None
                if name in NAMES:
                    echo = (number, name)
            elif command.startswith("setx "):
                m = _SETX.fullmatch(command)
                if m and m.group(1) in NAMES:
                    yield _obs(m.group(1), _unquote(m.group(2)), number)
        dump_previous = dump


def _printed_value(t: str, printed: dict[str, str]) -> tuple[str, str] | None:
    """(variable, value) of an output line "label value" of one of the prints; an unset variable
    ("label None") is no value."""
    for label, name in printed.items():
        if t.startswith(label + " "):
            value = t[len(label) + 1:].strip()
            if value and value != "None" and " " not in value:
                return name, value
    return None


def _next_is_dump(lines: Sequence[str], number: int) -> bool:
    if number >= len(lines) or len(lines[number]) > 5000:
        return False
    following = lines[number].strip()
    return bool(_DUMP_LINE.fullmatch(following)) and " " not in following.split("=", 1)[0]


def _assignment(t: str, number: int, in_dump: bool) -> Iterator[Observation]:
    if "os.environ" in t:
        m = _PYTHON.search(t)
        if m and m.group(1) in NAMES:
            yield _obs(m.group(1), m.group(3), number)
        return
    m = _ASSIGN.fullmatch(strip_prompt(t))
    if m is None:
        return
    name, value, rest = m.group(1), _unquote(m.group(2)), m.group(3)
    if _refers(value):
        return
    if name in NAMES:
        yield _obs(name, value, number)
    elif name == "PATH" and in_dump and not rest and not t.startswith(("export", "set")):
        yield _obs(name, value, number)
