"""Recognise known TensorFlow log lines and map them to causes; frame log output as evidence.

The patterns are the cause catalogue's (knowledge/causes/*.toml), each written from its source:
TensorFlow's, XLA's, NVIDIA's or a package's own message. Pure functions over text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from tfdoctor.facts import LogCause
from tfdoctor.knowledge import catalogue, vocab
from tfdoctor.textgate import ZERO, Gate, digit_blind, has_digit

# (log cause id, pattern) in recognition order, and the benign lines: views of the catalogue
# (doctor/tfdoctor/knowledge/, docs/knowledge.md), where each pattern is kept with its source and
# real samples. The first match wins; the catalogue's `outranks` links decide that order.
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (cause.log_id, pattern.regex)
    for cause in catalogue().log_causes() if cause.log_id
    for pattern in cause.patterns
)
GENERIC_LOG = frozenset(c.log_id for c in catalogue().log_causes() if c.generic and c.log_id)
"""Log causes that say only that a part failed: a specific vocabulary template outranks them."""
NOISE = re.compile("|".join(f"(?:{b.regex.pattern})" for b in catalogue().benign))


_STATUS = re.compile(r"\b(?:CUDA_ERROR|CUBLAS_STATUS|CUDNN_STATUS)_[A-Z_]+")
BY_PATTERN_ONLY = frozenset({"pip"})
"""Vocabulary sources whose templates decide no cause by themselves (see recognise)."""
UNRECOGNISED = "unrecognised"
"""The log cause of an error or warning line of TensorFlow's, XLA's or the CUDA stack's own log
that the catalogue does not know: reported as it is (never silent), with its source file."""
# The C++ log prefix TensorFlow and XLA print: "2021-03-01 10:00:00.000000: E tensorflow/.../x.cc:328]"
# (glog style, TF <= 2.15; triage has taken the timestamp off) or "E0000 00:00:1721811870.196385   15886 x.cc:535]" (Abseil, TF >= 2.16),
# and Python's "ERROR:tensorflow:". Only errors, fatals and warnings; info lines are not reported.
LOG_LINE = re.compile(
    r"(?:(?:^\s*|\d: )(?P<a>[EWF]) (?P<fa>[\w./+-]+\.(?:cc|cpp|h|cu)):\d+\]"
    r"|\b(?P<b>[EWF])\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ (?P<fb>[\w./+-]+\.(?:cc|cpp|h|cu)):\d+\]"
    r"|^\s*(?P<c>ERROR):(?P<fc>tensorflow):)\s*\S"
)


HARMLESS = "harmless"
"""The log cause of an error or warning line of TensorFlow's log format that a benign entry or the
vocabulary knows to be harmless: a ticket that pasted it gets the reason (an info finding), as an
expert would answer it, instead of nothing. Read by triage only; a live run does not report them."""


def harmless(line: str) -> tuple[str, str] | None:
    """(HARMLESS, why) for an error or warning line of TensorFlow's log format that a benign entry
    or a benign template knows; None for any other line. Ask it of a line recognise answered None
    for (triage does), so that recognise is not run twice."""
    if _level(line) is None:
        return None
    first = _benign_gate().first(line)  # the first benign entry that matches, in their order
    why = catalogue().benign[first[0]].reason if first is not None else None
    if why is None:
        template = vocab.match(line)
        why = template.benign if template is not None and template.cause is None else None
    return (HARMLESS, why) if why else None


def log_level(line: str) -> tuple[str, str] | None:
    """("error" or "warning", source file) of an error, fatal or warning line of TensorFlow's own
    log format, None for any other line."""
    found = _level(line)
    return None if found is None else (found[0], subject_of(line, found[1]))  # type: ignore[return-value]


Where = tuple[int, int] | str | None
"""Where a reading's subject is: a span of the line (stripped when read; an empty one is no
subject), a text of its own, or None. Spans, so that lines alike but for their digits can share
one reading (digit_blind_on)."""


def subject_of(line: str, where: Where) -> str | None:
    """The subject `where` points at in line."""
    if where is None or isinstance(where, str):
        return where
    text = line[where[0]:where[1]]
    return text.strip() if text else None


def _level(line: str) -> tuple[str, Where] | None:
    """log_level with the source file as a span (or Python's name)."""
    if "]" not in line and "ERROR:" not in line:  # every form below has one
        return None
    m = LOG_LINE.search(line)
    if m is None:
        return None
    level = m.group("a") or m.group("b") or m.group("c")
    source: Where = m.span("fa") if m.group("fa") else m.span("fb") if m.group("fb") else "tensorflow (Python)"
    return ("warning" if level == "W" else "error"), source


def is_noise(line: str) -> bool:
    """A line TensorFlow prints on healthy machines (or our own recipe marker)."""
    return _benign_gate().first(line) is not None  # NOISE.search, each entry only where it could match


def recognise(line: str) -> tuple[str, str | None] | None:
    """(cause id, subject) for a known log line; (UNRECOGNISED, source file) for another error or
    warning line of TensorFlow's log format; None for anything else or known noise."""
    found = _recognise(line)
    return None if found is None else (found[0], subject_of(line, found[1]))


def reading(line: str) -> tuple[str, Where] | None:
    """recognise(line), or else harmless(line), with the subject as a Where (subject_of)."""
    return _recognise(line) or harmless(line)


def _recognise(line: str) -> tuple[str, Where] | None:
    if is_noise(line):
        return None
    hit = _by_pattern(line)
    if hit is not None and hit[0] not in GENERIC_LOG:
        return hit
    # The mined vocabulary: every message template of the GPU stack's own sources, classified; a
    # specific template outranks a generic pattern ("any CUDA_ERROR_ name"). pip's messages name a
    # package in their values, which only the catalogue's patterns and the pip recogniser read: a
    # pip template alone decides no cause.
    template = vocab.match(line)
    if template is not None and template.source not in BY_PATTERN_ONLY:
        if template.cause is None:
            return hit  # benign, with its reason in the vocabulary (unless a pattern knows better)
        if hit is None or template.cause not in GENERIC_LOG:
            status = _STATUS.search(line)
            return template.cause, status.span() if status else None
    if hit is not None:
        return hit
    level = _level(line)
    return (UNRECOGNISED, level[1]) if level else None


def _by_pattern(line: str) -> tuple[str, Where] | None:
    """The first pattern, in recognition order, that matches: searched only where the literal text
    every match must contain is in the line (the gate), which makes a long ticket linear. The
    subject is group s (where it matched something), else group t, else the error name that may
    follow the matched phrase on the line."""
    hit = _gate().first(line)
    if hit is None:
        return None
    index, match = hit
    groups = match.groupdict()
    name = "s" if groups.get("s") else "t"
    if groups.get(name) is not None:
        return PATTERNS[index][0], match.span(name)
    status = _STATUS.search(line)
    return PATTERNS[index][0], status.span() if status else None


def digit_blind_on(line: str, zeroed: str) -> bool:
    """Whether reading() answers alike every line whose digits zeroed (textgate.ZERO) are
    `zeroed`, line among them: the same cause, the subject at the same place. So where each step
    it may take is digit-blind there: the benign entries' and the patterns' gates
    (Gate.digit_blind_on), the vocabulary's templates that could be matched (_vocab_blind_on),
    and LOG_LINE and _STATUS (digit-blind patterns)."""
    return (_fixed_blind() and _benign_gate().digit_blind_on(line, zeroed)
            and _gate().digit_blind_on(line, zeroed) and _vocab_blind_on(line, zeroed))


@cache
def _fixed_blind() -> bool:
    return digit_blind(LOG_LINE) and digit_blind(_STATUS)


def _vocab_blind_on(line: str, zeroed: str) -> bool:
    """Whether vocab.match answers alike every line whose digits zeroed are `zeroed`. It scores
    the templates of the anchor words a line holds (runs of letters, digits and "_", which a
    digit for a digit keeps where they were), and those without an anchor. With no anchor that
    holds a digit in `zeroed` (zeroed), the lines hold the same anchors; where each of those
    templates and the unanchored ones is digit-blind (its regexes and words) or lacks a word
    without a digit that it needs (_unmatched), each scores alike in every line."""
    digit_anchors, unanchored = _vocab_digits()
    if any(map(zeroed.__contains__, digit_anchors)) or not _unmatched(unanchored, line):
        return False
    by_anchor = vocab.index().by_anchor
    return all(_unmatched(_anchor_sighted(w), line) for w in set(vocab.WORD.findall(line)) if w in by_anchor)


Sighted = tuple[tuple[tuple[str, ...], tuple[str, ...] | None], ...]
"""Of each template that is not digit-blind: (its words without a digit, those of its head;
None where it has no truncated form)."""


def _unmatched(sighted: Sighted, line: str) -> bool:
    """Whether the line lacks, for each template, a word without a digit its whole form needs
    and one its truncated form needs: it matches none of them, nor does a line alike but for its
    digits."""
    for words, head in sighted:
        if all(map(line.__contains__, words)):
            return False
        if head is not None and all(map(line.__contains__, head)):
            return False
    return True


@cache
def _vocab_digits() -> tuple[tuple[str, ...], Sighted]:
    """(the anchors that hold a digit, each digit a 0; _sighted of the templates without an
    anchor)."""
    anchors = vocab.index().by_anchor
    zeroed = tuple(sorted({w.translate(ZERO) for w in anchors if has_digit(w)}))
    return zeroed, _sighted(map(vocab.compiled, vocab.index().unanchored))


@cache
def _anchor_sighted(word: str) -> Sighted:
    """_sighted of the anchor's templates (compiled when first asked, as vocab.match compiles
    them)."""
    return _sighted(vocab.compiled_of(word))


def _sighted(compiled: Iterable[object]) -> Sighted:
    out = []
    for c in compiled:
        full, truncated = c.full, c.truncated  # type: ignore[attr-defined]
        words, head = c.words, c.head_words  # type: ignore[attr-defined]
        if (digit_blind(full) and (truncated is None or digit_blind(truncated))
                and not any(map(has_digit, (*words, *head)))):
            continue
        out.append((tuple(w for w in words if not has_digit(w)),
                    None if truncated is None else tuple(w for w in head if not has_digit(w))))
    return tuple(out)


@cache
def _benign_gate() -> Gate:
    """The benign entries' regexes behind a gate: NOISE matches a line exactly when one of them
    does (its alternation of each), and searching its 800 characters of alternatives at every
    position of every log line cost more than all the causes' patterns (issue 21)."""
    return Gate(b.regex for b in catalogue().benign)


@cache
def _gate() -> Gate:
    return Gate(pattern for _, pattern in PATTERNS)


def scan(lines: Iterable[str], recipe: str | None = None) -> tuple[LogCause, ...]:
    """Every recognised line, once per (cause, subject), in order of first appearance."""
    seen: set[tuple[str, str | None]] = set()
    out = []
    for line in lines:
        hit = recognise(line)
        if hit is None or hit in seen:
            continue
        seen.add(hit)
        out.append(LogCause(id=hit[0], line=line.strip()[:500], subject=hit[1], recipe=recipe))
    return tuple(out)


def without_noise(lines: Iterable[str]) -> list[str]:
    return [ln for ln in lines if ln.strip() and not is_noise(ln)]


def frame(lines: tuple[str, ...] | list[str], total: int | None = None) -> str:
    """pip-style evidence: "[N lines of output]", the lines indented, "[end of output]"."""
    count = len(lines) if total is None else total
    shown = "\n".join("  " + ln for ln in lines)
    more = f" (last {len(lines)} shown)" if count > len(lines) else ""
    return f"[{count} lines of output{more}]\n{shown}\n[end of output]"
