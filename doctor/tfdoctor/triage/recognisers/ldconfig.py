"""`ldconfig -p` entries: which sonames the dynamic loader's cache maps to which files.

A line is `<tab>libcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8`; the
parenthesised ABI (glibc elf/cache.c print_entry) always starts "libc" or "ELF", which keeps
arrows in prose and logs out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "ldconfig -p"

_TRIGGER = Trigger(("=>",))
_ENTRY = re.compile(r"\s*(\S{1,300})\s+\((?:libc|ELF)[^()]{0,200}\)\s+=>\s+(\S.{0,2000}?)\s*")


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """A library.ldconfig observation per cache entry in the ticket."""
    for number, s in Walk(lines, _TRIGGER):
        if "=>" not in s:
            continue
        m = _ENTRY.fullmatch(s)
        if m:
            yield Observation("library.ldconfig", (m.group(1), m.group(2)), number, NAME)
