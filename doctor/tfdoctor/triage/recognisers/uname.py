"""`uname -a` (and `uname -r` after its command): system, kernel release, machine, WSL.

WSL 2 kernels are named "...-microsoft-standard-WSL2" (older builds "...-microsoft-standard"),
WSL 1 reports the Windows build as "4.4.0-19041-Microsoft" (microsoft/WSL#423).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk, strip_prompt

NAME = "uname"

_RELEASE = re.compile(r"\d+\.\d+(?:\.\d+)?[\w.+~-]{0,100}")
_TRIGGER = Trigger(("Linux ", "Darwin ", "uname -r"))
_MACHINES = ("x86_64", "aarch64", "arm64", "ppc64le", "s390x", "armv7l", "i686", "riscv64")


def wsl_observations(release: str, number: int, source: str) -> Iterator[Observation]:
    """platform.is_wsl / wsl_version for a kernel release naming Microsoft; nothing for any other.

    The first WSL 1 builds reported a plain "3.4.0+" (microsoft/WSL#1090), so no release proves
    the absence of WSL.
    """
    if "microsoft" not in release.lower():
        return
    yield Observation("platform.is_wsl", True, number, source)
    version = 1 if release.endswith("-Microsoft") else 2
    yield Observation("platform.wsl_version", version, number, source)


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """Platform observations from each `uname -a` line (and `uname -r` output)."""
    after_r = 0
    walk = Walk(lines, _TRIGGER, lambda: after_r == walk.number)  # the line after `uname -r`
    for number, s in walk:
        t = s.strip()
        if after_r and number == after_r + 1 and _RELEASE.fullmatch(t):
            yield Observation("platform.release", t, number, NAME)
            yield from wsl_observations(t, number, NAME)
            continue
        if t.startswith(("Linux ", "Darwin ")):
            yield from _uname_a(t, number)
        elif "uname -r" in t and strip_prompt(t) == "uname -r":
            after_r = number


def _uname_a(t: str, number: int) -> Iterator[Observation]:
    tokens = t.split()
    if len(tokens) < 5 or not _RELEASE.fullmatch(tokens[2]):
        return
    if tokens[0] == "Linux" and not tokens[3].startswith("#"):
        return
    if tokens[0] == "Darwin" and tokens[3:5] != ["Darwin", "Kernel"]:
        return
    yield Observation("platform.system", tokens[0], number, NAME)
    yield Observation("platform.release", tokens[2], number, NAME)
    machine = next((tok for tok in reversed(tokens) if tok in _MACHINES), None)
    if machine:
        yield Observation("platform.machine", machine, number, NAME)
    if tokens[0] == "Linux":
        yield from wsl_observations(tokens[2], number, NAME)
