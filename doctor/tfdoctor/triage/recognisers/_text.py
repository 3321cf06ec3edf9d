"""Shared line handling for the recognisers: what a pasted line looks like once the paste is undone.

Tickets arrive with Windows line endings, Markdown quote markers, dmesg / syslog / ISO timestamps
and shell prompts in front of the text a tool printed. `clean` removes what can never be part of
the output; `strip_prompt` removes a prompt so a command can be compared with what was typed.
Every pattern here is anchored and bounded, so a line costs time linear in its length.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, islice, repeat
from operator import contains

from tfdoctor.textgate import key_lines

MAX_LINE = 20_000
"""Lines longer than this are no tool's output (a minified blob, a base64 paste): skipped unread."""

# "2023-06-30 11:07:05.123 ", "2024-01-01T00:00:00.0000000Z " (CI logs), "[ 7386.259769] " (dmesg),
# "[Mon Jun 30 11:07:05 2023] " (dmesg -T), "Jun 30 11:07:05 gpu-0 " (syslog / journalctl; the
# "kernel:" that follows is kept: kernel_log reads it).
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?:?\s+")
_DMESG = re.compile(r"\[\s*\d{1,10}\.\d{1,9}\]\s?|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d [\d:]{8} \d{4}\]\s?")
_SYSLOG = re.compile(r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} [\w.-]{1,100} ")
_MONTHS = frozenset("JFMASOND")

_PROMPT = re.compile(
    r"\s*(?:\([^()\s]{1,80}\)\s*)?"  # (venv) / (base)
    r"(?:[\w.-]{1,64}@[\w.-]{1,64}(?::[^\s$#>]{0,300})?\s?[$#%>]"  # user@host:~/dir$
    r"|PS [^>]{0,300}>"  # PowerShell
    r"|[A-Za-z]:\\[^>]{0,300}>"  # cmd.exe
    r"|>>>|In \[\d{1,6}\]:"  # Python REPL, IPython
    r"|[$#%>❯➜])\s+"
)


def clean(line: str) -> str:
    """The line as the tool printed it: no line ending, quote marker or leading timestamp."""
    s = line.rstrip()
    if not s:
        return s
    while s[0] == ">" and s[:2] in ("> ", ">") and not s.startswith(">>>"):
        s = s[1:].lstrip(" ")
        if not s:
            return s
    c = s[0]
    if c.isdigit():
        m = _ISO.match(s)
        if m:
            s = s[m.end() :]
    elif c == "[":
        m = _DMESG.match(s)
        if m:
            s = s[m.end() :]
    elif c in _MONTHS and len(s) > 16 and s[3] == " ":
        m = _SYSLOG.match(s)
        if m:
            s = s[m.end() :]
    return s


def strip_prompt(s: str) -> str:
    """The text after a shell / REPL prompt ("$ ", "(venv) user@host:~$ ", "PS C:\\> ", ">>> ")."""
    m = _PROMPT.match(s)
    return s[m.end() :].strip() if m else s.strip()


def has_prompt(s: str) -> bool:
    """Whether the line starts with a shell / REPL prompt."""
    return _PROMPT.match(s) is not None


# Every recogniser reads the same ticket: its lines joined once (and lowercased once), for the
# whole-text searches that find the few lines each recogniser must read. The entry holds the
# sequence itself, so its id cannot be reused.
_last: tuple[Sequence[str] | None, int, str, list[int], list[str], dict[str, str]] = (None, 0, "", [], [], {})
_MEMO = 100_000
"""Distinct lines whose cleaned text is kept while a ticket is read (every recogniser cleans the
lines it reads; a log repeats its lines)."""


def _ticket(lines: Sequence[str]) -> tuple[str, list[int], list[str], dict[str, str]]:
    """The joined text, the indexes of the lines over MAX_LINE, a slot for the text folded
    (textgate.folded), made when first asked for, and the cleaned text of the distinct lines
    read so far."""
    global _last
    seen, length, text, long, low, memo = _last
    if seen is lines and length == len(lines):
        return text, long, low, memo
    text = "\n".join(lines)
    long = _long_lines(lines, text)
    if long:  # no search needs to read megabytes no recogniser reads
        readable = list(lines)
        for i in long:
            readable[i] = ""
        text = "\n".join(readable)
    _last = (lines, len(lines), text, long, [], {})
    return text, long, _last[4], _last[5]


def _long_lines(lines: Sequence[str], text: str) -> list[int]:
    """The indexes of the lines over MAX_LINE (text: the lines joined by "\\n"). A line over
    MAX_LINE holds a whole block of MAX_LINE // 2 characters of text (blocks from the start), so
    where no line holds a line break and each block does, there is none: a find per block, where
    the length of each of four million lines cost 0.3 s (issue 21)."""
    block = MAX_LINE // 2
    if text.count("\n") == len(lines) - 1 and all(
            text.find("\n", at, at + block) >= 0 for at in range(0, len(text) - block + 1, block)):
        return []
    # in C: a regex for a long line would scan each line once per position
    return list(compress(range(len(lines)), map(MAX_LINE.__lt__, map(len, lines))))


def ticket_text(lines: Sequence[str]) -> str:
    """The ticket's lines joined by "\\n" (those over MAX_LINE blank), made once per ticket."""
    return _ticket(lines)[0]


def gated_lines(lines: Sequence[str], find: Callable[[str], set[int] | None]) -> set[int] | None:
    """The indexes of the lines a whole-text gate keeps (find: joined lines -> their indexes, or
    None for all), the gate running over each distinct line once: a log repeats its lines, and the
    trie searches of a gate cost tens of nanoseconds a character."""
    text = _ticket(lines)[0]
    if len(text) < 40 * len(lines):  # short lines: finding the distinct ones costs what it saves
        return find(text)
    readable = text.split("\n") if _ticket(lines)[1] else lines
    distinct = list(dict.fromkeys(readable))
    if len(distinct) * 2 > len(lines):
        return find(text)
    found = find("\n".join(distinct))
    if found is None:
        return None
    keep = {distinct[i] for i in found}
    return set(compress(range(len(lines)), map(keep.__contains__, readable)))


def forget() -> None:
    """Drop the last ticket's joined text (kept for the next recogniser while a ticket is read)."""
    global _last, _last_distinct
    _last = (None, 0, "", [], [], {})
    _last_distinct = (None, 0, None)


@dataclass(frozen=True, slots=True)
class _Distinct:
    """A ticket's distinct lines (those over MAX_LINE blank), for the triggers to search."""

    lines: list[str]
    text: str
    """lines joined by "\\n"."""
    readable: Sequence[str]
    """The ticket's lines, those over MAX_LINE blank."""
    low: list[str]
    """text folded (textgate.folded), made when first asked for."""


_last_distinct: tuple[Sequence[str] | None, int, _Distinct | None] = (None, 0, None)


def _distinct(lines: Sequence[str]) -> _Distinct | None:
    """The ticket's distinct lines, where searching them instead of the whole text saves much:
    lines long enough that a search's time per character outweighs the look-up per line that
    maps the lines found back, and repeated (a log's blocks, a ticket pasted twice). Made once
    per ticket; None otherwise."""
    global _last_distinct
    seen, length, found = _last_distinct
    if seen is lines and length == len(lines):
        return found
    text, long, _low, _memo = _ticket(lines)
    found = None
    if len(text) >= 40 * len(lines):
        readable: Sequence[str] = lines
        if long:
            readable = list(lines)
            for i in long:
                readable[i] = ""
        distinct = list(dict.fromkeys(readable))
        if len(distinct) * 2 <= len(lines):
            found = _Distinct(distinct, "\n".join(distinct), readable, [])
    _last_distinct = (lines, len(lines), found)
    return found


def regex_lines(text: str, regex: re.Pattern[str], out: set[int], lines: Sequence[str] | None = None) -> None:
    """Add the indexes of the lines of text where regex finds a match (its leftmost match from a
    line's start starts in that line whenever the line holds one). Given the lines text joins, for
    a regex that finds in a line alone what it finds from the line's start in the text (no match
    across a line break, no anchor or look-around that reads one differently): once it is on most
    lines so far, the rest are searched one by one in C (textgate.key_lines)."""
    key_lines(regex, text, out, line_local=lines is not None)


def literal_lines(text: str, literal: str, out: set[int], lines: Sequence[str] | None = None) -> None:
    """Add the indexes of the lines of text holding literal (str.find: many times a regex's speed).
    With the lines text joins: once the literal is on one line in 32 so far, the rest are tested
    one by one in C (map, compress: 30 ns a line) instead of a find and a count per line holding
    it in Python (1.5 us a line: more than the test of the lines between). A literal with a
    character the text does not hold is not looked for: a find costs 3 ms an 8 MiB ticket, each
    test for one character (memchr) a twentieth of that, and a ticket of one kind (a pip list, a
    log) lacks most of the triggers' capitals and signs (issue 21)."""
    if len(literal) > 1 and not all(map(text.__contains__, set(literal))):
        return
    line = last = hits = 0
    at = text.find(literal)
    while at >= 0:
        line += text.count("\n", last, at)
        last = at
        out.add(line)
        hits += 1
        if hits >= 64 and hits * 32 > line and lines is not None:
            rest = range(line + 1, len(lines))
            out.update(compress(rest, map(contains, islice(lines, line + 1, None), repeat(literal))))
            return
        after = text.find("\n", at)
        at = text.find(literal, after + 1) if after >= 0 else -1


@dataclass(frozen=True, slots=True)
class Trigger:
    """What a line must hold for an idle recogniser to read it: one of `literals`, one of
    `folded` (lowercase, looked for in the text as textgate.folded lowers it), or a match of
    `regex`. Looked for in the raw lines: cleaning only takes text off a line, so what the cleaned
    line holds the raw one holds too."""

    literals: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()
    regex: re.Pattern[str] | None = None
    line_local: bool = False
    """The regex finds in a line alone what it finds from the line's start in the joined text
    (regex_lines may then search the lines one by one)."""

    def lines(self, lines: Sequence[str]) -> list[int]:
        """Ascending 0-based indexes of the lines that hold what the trigger looks for: those of
        the ticket's distinct lines where it repeats its lines (_distinct), each line's answer
        being its own (literals hold no line break; the regex is line-local)."""
        distinct = _distinct(lines) if self.regex is None or self.line_local else None
        if distinct is not None and not any("\n" in literal for literal in (*self.literals, *self.folded)):
            if self.folded and not distinct.low:
                from tfdoctor.textgate import folded

                distinct.low.append(folded(distinct.text))
            hits = self._search(distinct.text, distinct.low[0] if self.folded else "", distinct.lines,
                                distinct.lines)
            if not hits:
                return []
            keep = set(map(distinct.lines.__getitem__, hits))
            return list(compress(range(len(lines)), map(keep.__contains__, distinct.readable)))
        text, long, low, _memo = _ticket(lines)
        if self.folded and not low:
            from tfdoctor.textgate import folded

            low.append(folded(text))
        # (the regex not over the lines where some are over MAX_LINE: the text holds them blank)
        return sorted(self._search(text, low[0] if self.folded else "", lines, None if long else lines))

    def _search(self, text: str, low: str, lines: Sequence[str], regex_each: Sequence[str] | None) -> set[int]:
        """The indexes of the lines of text (low: text folded) that hold what the trigger looks
        for; lines: the lines text joins (for the searches line by line), regex_lines_ those
        lines where the regex may search them (see regex_lines)."""
        out: set[int] = set()
        for literal in self.literals:
            literal_lines(text, literal, out, lines)
        for literal in self.folded:
            literal_lines(low, literal, out)
        if self.regex is not None:
            regex_lines(text, self.regex, out, regex_each if self.line_local else None)
        return out

    def lines_between(self, lines: Sequence[str], start: int, end: int) -> list[int]:
        """What lines() finds among lines[start:end] (for a trigger without a regex, or with a
        line-local one: what it finds in a line does not depend on the others); the lines over
        MAX_LINE, which a walk skips, are not among them."""
        long = _ticket(lines)[1]
        part = list(lines[start:end])
        for i in long[bisect_left(long, start) : bisect_left(long, end)]:
            part[i - start] = ""
        text = "\n".join(part)
        out: set[int] = set()
        for literal in self.literals:
            literal_lines(text, literal, out, part)
        if self.folded:
            from tfdoctor.textgate import folded

            low = folded(text)
            for literal in self.folded:
                literal_lines(low, literal, out)
        if self.regex is not None:
            regex_lines(text, self.regex, out, part if self.line_local else None)
        return sorted(i + start for i in out)


EVERY_LINE = Trigger(regex=re.compile(""), line_local=True)
_WINDOW, _WINDOW_MAX = 4096, 1 << 18
"""Lines a lazy walk's trigger looks through at a time: few at first, more later."""


class Walk:
    """The (1-based number, cleaned line) pairs one recogniser reads, lines over MAX_LINE skipped:
    while `busy()` every line, otherwise only the lines its trigger finds (and `extra`).

    A recogniser is idle when a line its trigger does not find can neither change its state nor
    yield anything; `busy` says, after each line, whether the next one must be read whatever it
    holds (inside a table, say). The jump over the other lines happens in C (a search over the
    whole text), so a ticket of millions of short lines costs a recogniser only the lines that
    concern it (issue 21)."""

    def __init__(self, lines: Sequence[str], trigger: Trigger, busy: Callable[[], object] | None = None,
                 extra: Iterable[int] = (), lazy: bool = False) -> None:
        self.lines = lines
        self.lazy = lazy
        """Whether the trigger looks only through the lines after the last one read, a window at a
        time when idle (for a walk whose caller reads long runs of lines itself, skip_to): a
        pasted pip list's every row holds a version the trigger finds, which nothing reads."""
        self.trigger = trigger
        self.busy = busy
        self.extra = extra
        self.number = 0
        """The number of the line last yielded."""
        self.gap = False
        """Whether a readable line was skipped just before the line last yielded (a recogniser
        that remembers the previous line forgets it)."""
        self._resume = 0
        """The index to go on from (skip_to), where a caller read lines itself."""

    def __iter__(self) -> Iterator[tuple[int, str]]:
        lines = self.lines
        text, long, _low, memo = _ticket(lines)
        busy, trigger = self.busy, self.trigger
        order: Iterator[int]
        if (self.lazy and busy is not None and not self.extra and (trigger.regex is None or trigger.line_local)
                and text.count("\n") + 1 == len(lines)):  # (no line holds a line break)
            order = self._windows(busy)
        else:
            hits = trigger.lines(lines)
            if self.extra:
                hits = sorted(set(hits).union(self.extra))
            order = iter(hits) if busy is None else self._indexes(hits, busy)
        previous = -1  # the index last yielded
        for i in order:
            raw = lines[i]
            if len(raw) > MAX_LINE:
                continue
            # skipped readable lines: more lines between than long ones
            self.gap = i != previous + 1 and (
                not long or i - previous - 1 > bisect_left(long, i) - bisect_right(long, previous))
            previous = i
            self.number = i + 1
            s = memo.get(raw)
            if s is None:
                s = clean(raw)
                if len(memo) < _MEMO:
                    memo[raw] = s
            yield i + 1, s

    def skip_to(self, index: int) -> None:
        """Go on from line index `index` (0-based): the caller read the lines up to it itself,
        while busy (a busy walk's next line is the next one whatever it holds)."""
        self._resume = index
        self.number = index

    def _windows(self, busy: Callable[[], object]) -> Iterator[int]:
        """_indexes with the trigger's hits found a window of lines at a time, from the next line
        to read when idle: the lines a caller read itself (skip_to) are never looked through."""
        lines, trigger = self.lines, self.trigger
        n, i, end, size, k = len(lines), 0, 0, _WINDOW, 0
        hits: list[int] = []
        while i < n:
            if not self.number or not busy():  # nothing read yet: not busy
                while True:
                    if i >= end:
                        end = min(n, i + size)
                        size = min(size * 4, _WINDOW_MAX)
                        hits, k = trigger.lines_between(lines, i, end), 0
                    k = bisect_left(hits, i, k)
                    if k < len(hits):
                        i = hits[k]
                        break
                    i = end
                    if i >= n:
                        return
            yield i
            i += 1
            if self._resume > i:
                i = self._resume

    def _indexes(self, hits: list[int], busy: Callable[[], object]) -> Iterator[int]:
        """The indexes to read: the next line while busy() (asked after a line), else the next hit."""
        n, k, i = len(self.lines), 0, 0
        while i < n:
            if not self.number or not busy():  # nothing read yet: not busy
                k = bisect_left(hits, i, k)
                if k == len(hits):
                    return
                i = hits[k]
            yield i
            i += 1
            if self._resume > i:
                i = self._resume


def is_fence(s: str) -> bool:
    """A Markdown code fence ("```", "```shell", "~~~")."""
    t = s.lstrip()
    return t.startswith("```") or t.startswith("~~~")


_SEPARATORS = re.compile(r"[-_.]+")


def normalise(name: str) -> str:
    """PEP 503 normalised distribution name."""
    if "_" not in name and "." not in name and "--" not in name:  # most names: a pip list has many
        return name.lower()
    return _SEPARATORS.sub("-", name).lower()
