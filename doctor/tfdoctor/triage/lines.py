"""A ticket's text as the recognisers' lines: long runs of blank lines shortened, numbers kept.

Eight million empty lines are as much a ticket as eight: every recogniser walks every line, so
a run of blank lines longer than KEEP is cut to its first KEEP lines before they read it, and
`original` gives each line number back its place in the ticket as pasted (issue 21).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

KEEP = 100
"""Blank lines kept of a run: more than any recogniser looks ahead (build_info reads up to 40
lines after a key, kernel_log joins 6), so no recogniser can tell the shortened run apart."""

# str.splitlines' line boundaries; "\r\n" is one, and a lone "\r" only when no "\n" follows, so a
# run of breaks splits one way only and a failed match cannot backtrack exponentially.
_BREAK_CHARS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_UNIT = r"[ \t]*(?:\r\n|\r(?!\n)|[\n\v\f\x1c\x1d\x1e\x85\u2028\u2029])"
# A run starts at the text's start or at the end of a line with something on it, never inside
# another run, so finding them costs time linear in the text. The bounded repeat finds a run long
# enough to cut; a character class (which re repeats without keeping state per character) then
# finds its end, so a run of eight million lines costs no memory.
_RUN = re.compile(rf"(?:\A|(?<=[^ \t{_BREAK_CHARS}]){_UNIT})(?P<run>(?:{_UNIT}){{{KEEP + 1}}})")
_BLANKS = re.compile(rf"[ \t{_BREAK_CHARS}]*")
_KEPT = re.compile(rf"(?:{_UNIT}){{{KEEP}}}")


@dataclass(frozen=True, slots=True)
class TicketLines:
    """The lines the recognisers read, and where each one was in the ticket."""

    lines: list[str]
    points: tuple[int, ...] = ()
    """1-based line numbers (of `lines`) after which lines were cut out, ascending."""
    removed: tuple[int, ...] = ()
    """Lines cut out before each point, cumulative."""

    def original(self, number: int) -> int:
        """The ticket's 1-based line number of line `number` of `lines`."""
        i = bisect_right(self.points, number)
        return number + self.removed[i - 1] if i else number


def ticket_lines(texts: Sequence[str]) -> TicketLines:
    """Every input's lines, one after another (as str.splitlines splits them), blank runs cut."""
    lines: list[str] = []
    points: list[int] = []
    removed: list[int] = []
    cut = 0  # lines cut out so far, over all inputs
    for text in texts:
        base, cut_here, pieces, pos, before = len(lines), 0, [], 0, 0  # before: breaks in text[:pos]
        m = _RUN.search(text)
        while m is not None:
            start = m.start("run")
            blanks = _BLANKS.match(text, start)
            assert blanks is not None  # it matches the empty string at worst
            # the run ends at its last line break: the blanks after it indent the next line
            end = max(text.rfind(ch, start, blanks.end()) for ch in _BREAK_CHARS) + 1
            before += _breaks(text, pos, start)
            kept = _KEPT.match(text, start)
            assert kept is not None  # the run has more than KEEP blank lines
            pieces.append(text[pos : kept.end()])
            run = _breaks(text, start, end)
            gone = run - KEEP
            first = base + before - cut_here + 1  # the run's first line, numbered as kept
            cut_here += gone
            cut += gone
            points.append(first + KEEP)
            removed.append(cut)
            before += run
            pos = end
            m = _RUN.search(text, pos)
        if pieces:
            pieces.append(text[pos:])
            text = "".join(pieces)
        lines.extend(text.splitlines())
    return TicketLines(lines, tuple(points), tuple(removed))


def _breaks(text: str, start: int, end: int) -> int:
    """Line boundaries in text[start:end], counted as str.splitlines counts them."""
    n = sum(text.count(ch, start, end) for ch in _BREAK_CHARS)
    return n - text.count("\r\n", start, end)
