"""TensorFlow's `tools/tf_env_collect.sh` report (tf_env.txt): the facts only it prints.

Its sections embed other tools' output; where that output is recognisable anywhere (the
nvidia-smi table, `pip show tensorflow`, "tf.version.VERSION = 2.15.0", "python version: 3.11.7")
its own recogniser reads it, and this one does not read it twice. What is left: the filtered
`pip list` rows, the platform lines, the docker check, the env lines (printed as "NAME value", or
"NAME is unset", which says nothing about the user's own shell), the CUDA library files found
under /usr/local, and the sys.version_info tuple.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from tfdoctor.triage.observe import Observation

from . import env_vars, pip_list, uname
from ._text import Trigger, Walk, is_fence

NAME = "tf_env_collect"

_SECTION = re.compile(r"== (.{1,60}?)\s*=+")
_TRIGGER = Trigger(("== ",))
_ENV = re.compile(r"([A-Z_][A-Z0-9_]{0,60})[ =](\S.{0,5000})")
_VERSION_INFO = re.compile(r"\((\d), (\d{1,2}), (\d{1,3}), '\w{1,10}', \d{1,3}\)")
_DISTRIBUTION = re.compile(r"\('(\w[^']{0,40})', '([\d.]{1,20})', '[^']{0,40}'\)")


def _obs(path: str, value: Any, line: int) -> Observation:
    return Observation(path, value, line, NAME)


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """Observations from each tf_env_collect.sh section that no other recogniser reads."""
    section = ""
    walk = Walk(lines, _TRIGGER, lambda: section)
    for number, s in walk:
        t = s.strip()
        if t.startswith("== "):
            m = _SECTION.fullmatch(t)
            if m:
                section = m.group(1).strip()
                continue
        if not section:
            continue
        if is_fence(t):
            section = ""
            continue
        if section == "check pips":
            row = pip_list.parse_row(t, "pip")
            if row:
                yield from pip_list.package(row[0], row[1], number, NAME)
        elif section == "check os platform":
            yield from _platform(t, number)
        elif section == "are we in docker" and t == "Yes":
            yield _obs("platform.in_container", True, number)
        elif section == "env":
            m = _ENV.fullmatch(t)
            if m and m.group(1) in env_vars.NAMES and not m.group(2).startswith("is unset"):
                yield Observation("env", (m.group(1), m.group(2).strip()), number, NAME)
        elif section == "cuda libs":
            if t.startswith("/") and "/libcud" in t:
                yield _obs("library.file", t, number)
            elif not t:
                section = ""
        elif section == "python version":
            m = _VERSION_INFO.fullmatch(t)
            if m:
                yield _obs("python.version", ".".join(m.groups()), number)


def _platform(t: str, number: int) -> Iterator[Observation]:
    key, _, value = t.partition(": ")
    value = value.strip()
    if not value:
        return
    if key == "os" and value in ("Linux", "Windows", "Darwin"):
        yield _obs("platform.system", value, number)
    elif key == "os release version":
        yield _obs("platform.release", value, number)
        yield from uname.wsl_observations(value, number, NAME)
    elif key == "machine":
        yield _obs("platform.machine", value, number)
    elif key == "linux distribution":
        m = _DISTRIBUTION.fullmatch(value)
        if m:
            yield _obs("platform.distro", f"{m.group(1)} {m.group(2)}", number)
