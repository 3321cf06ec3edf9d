"""The distribution: `/etc/os-release`, `/etc/lsb-release` and `lsb_release -a`.

os-release is read as a run of KEY=value lines holding ID or VERSION_ID (NAME alone is too common);
PRETTY_NAME wins, NAME + VERSION_ID stand in for it. lsb_release's "Description:" counts only next
to its "Distributor ID:" / "Release:" lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "os-release"

_ASSIGNMENT = re.compile(r"([A-Z][A-Z0-9_]{0,40})=(.{0,500})")
_LSB_NEIGHBOURS = ("Distributor ID:", "Release:", "Codename:", "LSB Version:", "No LSB modules")
_TRIGGER = Trigger(("=", "Description:", *_LSB_NEIGHBOURS))


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value.strip()


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """A platform.distro observation per os-release block or lsb_release listing."""
    block: dict[str, tuple[int, str]] = {}
    previous = ""
    pending_description: tuple[int, str] | None = None
    walk = Walk(lines, _TRIGGER, lambda: block or pending_description is not None)
    for number, s in walk:
        t = s.strip()
        if walk.gap:  # the line before, unread, is no lsb_release line
            previous = ""
        m = _ASSIGNMENT.fullmatch(t) if "=" in t else None
        if m:
            block[m.group(1)] = (number, _unquote(m.group(2)))
        else:
            yield from _end_block(block)
            block = {}
        if t.startswith("Description:"):
            description = (number, t[len("Description:") :].strip())
            if previous.startswith(_LSB_NEIGHBOURS):
                yield from _lsb(description)
            else:
                pending_description = description
        elif pending_description is not None:
            if t.startswith(_LSB_NEIGHBOURS):
                yield from _lsb(pending_description)
            pending_description = None
        previous = t
    yield from _end_block(block)


def _lsb(description: tuple[int, str]) -> Iterator[Observation]:
    if description[1] and description[1] != "n/a":
        yield Observation("platform.distro", description[1], description[0], NAME)


def _end_block(block: dict[str, tuple[int, str]]) -> Iterator[Observation]:
    if "DISTRIB_DESCRIPTION" in block:
        number, value = block["DISTRIB_DESCRIPTION"]
        if value:
            yield Observation("platform.distro", value, number, NAME)
        return
    if "ID" not in block and "VERSION_ID" not in block:
        return
    if "PRETTY_NAME" in block and block["PRETTY_NAME"][1]:
        number, value = block["PRETTY_NAME"]
        yield Observation("platform.distro", value, number, NAME)
    elif "NAME" in block:
        number, name = block["NAME"]
        version = block.get("VERSION_ID", (0, ""))[1]
        yield Observation("platform.distro", f"{name} {version}".strip(), number, NAME)
