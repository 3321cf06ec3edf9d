"""A ticket's text as the recognisers' lines: typography undone, long runs of blank lines
shortened, lines a mail client or terminal wrapped joined back, numbers kept.

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
# A run of more than KEEP blank lines is a stretch of more than KEEP blanks and breaks from its
# first break on (more than KEEP breaks, each a character at least): re finds such stretches with
# a repeated character class (skipping other characters at C speed, keeping no state per
# character), then the run's first and last line are read off the stretch. From a break, not from
# any blank: tried at every space between two words, the search cost 0.07 s of an 8 MiB ticket.
_STRETCH = re.compile(rf"[{_BREAK_CHARS}][ \t{_BREAK_CHARS}]{{{KEEP},}}")
_BLANKS = re.compile(r"[ \t]*")
_KEPT = re.compile(rf"(?:{_UNIT}){{{KEEP}}}")

# What a ticket picks up between the terminal and tfdoctor, none of it a program's: the no-break
# and other Unicode spaces, zero-width characters and typographic quotes a browser, a word
# processor, a chat or mail client puts in, and the HTML entities of a text taken from a web
# page's source or an export. The programs print ASCII spaces and quotes; every recogniser reads
# them so.
_TYPOGRAPHY = re.compile("[\u00a0\u2000-\u200d\u2018-\u201f\u202f\u205f\u2060\u3000\ufeff]")
_ASCII = str.maketrans({**dict.fromkeys("\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                                        "\u200a\u202f\u205f\u3000", " "),
                        **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff"),
                        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
                        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"')})
_ENTITY = re.compile(r"&(?:quot|apos|amp|lt|gt|nbsp|#39|#x27|#34|#x22);")
_ENTITIES = {"&quot;": '"', "&apos;": "'", "&amp;": "&", "&lt;": "<", "&gt;": ">", "&nbsp;": " ",
             "&#39;": "'", "&#x27;": "'", "&#34;": '"', "&#x22;": '"'}


def plain(text: str) -> str:
    """The text with typography and HTML's entities undone (one level: "&amp;lt;" is "&lt;").
    Line breaks are untouched, so every line keeps its number."""
    if not text.isascii() and _TYPOGRAPHY.search(text):  # (isascii: 8 MiB in microseconds)
        text = text.translate(_ASCII)
    if "&" in text and _ENTITY.search(text):
        text = _ENTITY.sub(lambda m: _ENTITIES[m.group()], text)
    return text


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
    """Every input's lines, one after another (as str.splitlines splits them), plain, blank runs
    cut."""
    lines: list[str] = []
    points: list[int] = []
    removed: list[int] = []
    cut = 0  # lines cut out so far, over all inputs
    for text in map(plain, texts):
        base, cut_here, pieces, pos, before = len(lines), 0, [], 0, 0  # before: breaks in text[:pos]
        blanks = _BLANKS.match(text)
        lead = blanks.end() if blanks else 0  # where the text's first line has more than blanks
        for stretch in _STRETCH.finditer(text):
            # a stretch after the text's blanks only: the text's blank first line starts the run
            run = _blank_run(text, 0 if stretch.start() == lead else stretch.start(), stretch.end())
            if run is None:
                continue
            start, end, count = run
            before += _breaks(text, pos, start)
            kept = _KEPT.match(text, start)
            assert kept is not None  # the run has more than KEEP blank lines
            pieces.append(text[pos : kept.end()])
            first = base + before - cut_here + 1  # the run's first line, numbered as kept
            cut_here += count - KEEP
            cut += count - KEEP
            points.append(first + KEEP)
            removed.append(cut)
            before += count
            pos = end
        if pieces:
            pieces.append(text[pos:])
            text = "".join(pieces)
        lines.extend(text.splitlines())
    return TicketLines(lines, tuple(points), tuple(removed))


def _breaks(text: str, start: int, end: int) -> int:
    """Line boundaries in text[start:end], counted as str.splitlines counts them."""
    n = sum(text.count(ch, start, end) for ch in _BREAK_CHARS)
    return n - text.count("\r\n", start, end)


def _blank_run(text: str, start: int, end: int) -> tuple[int, int, int] | None:
    """(start, end, lines) of the blank lines in a stretch of blanks and breaks, if more than KEEP.

    A stretch starts at the text's start or just after a character of a line with something on it
    (that line ends at the stretch's first break), and ends with any blanks indenting the next line.
    """
    if start > 0:
        first = min((i for i in (text.find(ch, start, end) for ch in _BREAK_CHARS) if i >= 0), default=-1)
        if first < 0:
            return None
        start = first + (2 if text.startswith("\r\n", first) else 1)
    end = max(text.rfind(ch, start, end) for ch in _BREAK_CHARS) + 1
    count = _breaks(text, start, end) if end > start else 0
    return (start, end, count) if count > KEEP else None


WRAP_WIDTHS = (60, 160)
"""The widths a mail client, a PDF or a terminal wraps a pasted ticket at."""
WRAP_LINES = 20000
"""A ticket with more lines is not unwrapped (none wrapped by hand is so long)."""
# What starts a line of its own, never the rest of the line before: a log record (TensorFlow's and
# absl's prefix, dmesg's), a traceback's parts, an exception, a table row, a prompt, Markdown's
# fences, headings and list items, a pip list row or a table's columns, ...
_RECORD = re.compile(
    r"\s*$|\d{4}-\d\d-\d\d[ T]\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d|\[\s*\d+\.\d+\]"
    r"|\s*(?:Traceback \(|File \"|During handling|The above exception)"
    r"|[A-Za-z_][\w.]*(?:Error|Exception|Warning)\b"
    r"|\s*[|+]|\s*(?:\$ |# |>>> |PS [A-Za-z]:|[A-Za-z]:\\[^>]{0,80}>|\(\S+\) )"
    r"|\s*(?:```|#{1,6} |[-*] |\d+[.)] )|\S+ {2,}\S+\s*$|\S+ {3,}\S"
    # a logger's or pip's level ("ERROR:", "WARNING:tensorflow:"), a bracketed prefix or link, an
    # image, bold Markdown, a code line (an import, an assignment, a call)
    r"|[A-Z]{3,}[A-Z_]*:|!?\[|\*\*|(?:import|from) \w|[\w.]+ = |[\w.]+\("
    # a variable of an env dump ("LD_LIBRARY_PATH=..."), a prompt with its user and host
    r"|[A-Za-z_]\w*=|\S+@[\w.-]+:\S*[$#] "
)
_FRAME = re.compile(r'\s*File "')  # a traceback's frame: its source line follows, indented
# A command, which is a line of its own ("conda install ... -c nvidia", then "CUDA 12.1")
_COMMAND = re.compile(r"\s*(?:\$ |sudo |!|%)?(?:conda|mamba|pip3?|python3?|docker|apt(?:-get)?|yum|dnf|"
                      r"export|cd|git|nvidia-smi|nvcc|ldconfig|module|srun|sbatch|kubectl|wget|curl)\s")


def unwrap(lines: list[str]) -> tuple[list[str], list[int] | None]:
    """The lines with those a mail client, a PDF or a terminal wrapped at one width joined back, and
    for each line kept the 0-based index of its first line in `lines` (None: nothing was wrapped).

    A ticket is wrapped at its longest line's width W when at least two lines, and half of its
    lines over 0.8 W, end where the next word would not have fit (W, as the wrap left them) and
    go on in a line that starts no record of its own (a log line, a traceback's parts, a table
    row, a prompt, a list item, an env dump's variable, an indented line, a sentence after a
    sentence's end); a line shorter than W / 2, or a command, ends for a reason of its own. A
    terminal cuts at exactly W, inside words: where most such lines are W long, a line of W joins
    the next without a space."""
    if len(lines) > WRAP_LINES or len(lines) < 4:
        return lines, None
    widths = [len(line.rstrip()) for line in lines]
    width = max(widths)
    if not WRAP_WIDTHS[0] <= width <= WRAP_WIDTHS[1]:
        return lines, None
    joins = [i for i in range(len(lines) - 1) if _wrapped(lines, widths, width, i)]
    long = sum(1 for i in range(len(lines) - 1) if widths[i] > 0.8 * width and widths[i + 1])
    if len(joins) < 2 or 2 * len(joins) < long:
        return lines, None
    cut = 2 * sum(1 for i in joins if widths[i] == width) > len(joins)  # a terminal's hard cut
    joined: list[str] = []
    starts: list[int] = []
    wrapped = set(joins)
    for i, line in enumerate(lines):
        if i - 1 in wrapped:
            # a full line is cut inside its last word by a terminal, or by a wrap that breaks a word
            # longer than a line (a path, a URL)
            full = widths[i - 1] == width
            sep = "" if full and (cut or len(lines[i - 1].rsplit(None, 1)[-1]) > width // 4) else " "
            joined[-1] = joined[-1].rstrip() + sep + line.lstrip() if sep else joined[-1].rstrip() + line
        else:
            joined.append(line)
            starts.append(i)
    return joined, starts


def _wrapped(lines: list[str], widths: list[int], width: int, i: int) -> bool:
    """Whether line i ends where the wrap at `width` ended it and line i + 1 goes on with it."""
    line, nxt = lines[i], lines[i + 1]
    if 2 * widths[i] < width:  # a short line ends for a reason of its own (a long word follows)
        return False
    if not widths[i + 1] or _RECORD.match(nxt) or _FRAME.match(line) or _COMMAND.match(line) or \
            line.lstrip()[:1] in ("|", "+"):
        return False
    if nxt[:1].isspace() and (widths[i] < width or _indent(nxt) > 1 or _indent(nxt) == _indent(line)):
        return False  # an indented line of its own (a terminal's cut at W may leave one space)
    if nxt.split(None, 1)[0] == line.split(None, 1)[0]:
        return False  # one of a run of lines that start alike ("Requirement already satisfied: ...")
    if line.rstrip()[-1] in ".!?:" and nxt.lstrip()[:1].isupper():
        return False  # a sentence to a line, as people write them
    first = len(nxt.split(None, 1)[0])
    return widths[i] + 1 + first > width


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
