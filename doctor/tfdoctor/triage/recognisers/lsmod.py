"""`lsmod` (whole, or filtered through grep): which NVIDIA kernel modules, and nouveau, are loaded.

Only a whole table, recognised by its "Module  Size  Used by" header, can show that a module is
missing; `lsmod | grep nvidia` printing nothing may be a typo, a container or another user's shell,
so grep's rows count only as presence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "lsmod"

_HEADER = re.compile(r"Module\s+Size\s+Used by\s*")
# Idle (no table, no grep rows), only a header or an NVIDIA or nouveau row is read
_TRIGGER = Trigger(("Module", "nvidia", "nouveau"))
_ROW = re.compile(r"(\w{1,64})\s+(\d{3,12})\s+(?:\d{1,6}|-)(?:\s+\S{1,2000})?\s*")


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """driver.nvidia_modules / nvidia_module_loaded / nouveau_loaded from each lsmod table or grep."""
    rows: list[str] = []
    first = 0
    whole = False
    walk = Walk(lines, _TRIGGER, lambda: rows or whole)
    for number, s in walk:
        t = s.strip()
        if _HEADER.fullmatch(t):
            yield from _end(rows, first, whole)
            rows, first, whole = [], number, True
            continue
        m = _ROW.fullmatch(t) if t[:1].isalpha() or t[:1] == "_" else None
        if m and (whole or m.group(1).startswith(("nvidia", "nouveau"))):
            if not rows and not whole:
                first = number
            rows.append(m.group(1))
            continue
        if rows or whole:
            yield from _end(rows, first, whole)
        rows, whole = [], False
    yield from _end(rows, first, whole)


def _end(rows: list[str], first: int, whole: bool) -> Iterator[Observation]:
    if not rows and not whole:
        return
    if whole and not rows:
        return  # a header alone is no table
    nvidia = tuple(name for name in rows if name.startswith("nvidia"))
    if nvidia:
        yield Observation("driver.nvidia_modules", nvidia, first, NAME)
    if "nvidia" in rows:
        yield Observation("driver.nvidia_module_loaded", True, first, NAME)
    elif whole:
        yield Observation("driver.nvidia_module_loaded", False, first, NAME)
    if "nouveau" in rows:
        yield Observation("driver.nouveau_loaded", True, first, NAME)
    elif whole:
        yield Observation("driver.nouveau_loaded", False, first, NAME)
