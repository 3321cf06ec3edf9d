"""The GPU stack's message vocabulary (knowledge/vocabulary/*.toml), loaded once, and its matcher.

Every template was mined from an artefact (benchmarks/mine_vocabulary.py, docs/vocabulary.md) and
carries its cause id or the reason it is benign. `match(line)` answers which template a line of a
log or a pasted ticket is an instance of: placeholders become lazy wildcards (any value, quoted or
not), whitespace runs match any whitespace, the template may sit anywhere in the line (after
TensorFlow's log prefix, inside pip's or a traceback's words), and a line cut short by a paste still
matches once it holds the first `TRUNCATED_MIN` characters of the template's fixed text.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

VOCABULARY = Path(__file__).resolve().parent / "vocabulary"
SOURCES = (
    "tensorflow",
    "xla",
    "cuda_driver",
    "nvml",
    "cudnn",
    "nccl",
    "keras",
    "pip",
    "tensorflow_gpu",
    "container",
)
"""One TOML per source; the other files there (tf_sources, classify, new_causes, ...) are inputs."""

STRICT_QUOTES_BELOW = 16
"""A template with fewer fixed characters than this (quotes and spaces aside) matches only with the
quotes it prints around its values."""
TRUNCATED_MIN = 40
"""Fixed characters of a template a truncated line must hold (all of them for a shorter template)."""
MAX_LINE = 4000
"""Longer lines are cut before matching: no template is this long, and it bounds the regex work."""

# printf conversions, Go's %v and Python's {} / {name}: the same set the miner splits templates on.
PLACEHOLDER = re.compile(
    r"%[-+#0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L|q)?[sdiuxXfFgGeEpcvra]|\{[A-Za-z0-9_.!:]*\}"
)
WORD = re.compile(r"[A-Za-z0-9_]{4,}")
_QUOTES = "'\"`\u2018\u2019\u201c\u201d"
_QUOTE_CLASS = "['\"`\u2018\u2019\u201c\u201d]"
_VALUE = r"[^\n]*?"
# Numeric conversions take numbers only, so a template's value cannot swallow another's words.
_NUMERIC = {
    "d": r"[-+]?\d[\d,]*",
    "i": r"[-+]?\d[\d,]*",
    "u": r"\d[\d,]*",
    "x": r"(?:0[xX])?[0-9a-fA-F]+",
    "X": r"(?:0[xX])?[0-9a-fA-F]+",
    "p": r"(?:0[xX][0-9a-fA-F]+|\(nil\)|0)",
    "f": r"[-+]?(?:\d[\d.eE+-]*|nan|inf)",
    "g": r"[-+]?(?:\d[\d.eE+-]*|nan|inf)",
}


@dataclass(frozen=True, slots=True)
class Template:
    """One message a program of the GPU stack can print, as its source has it."""

    text: str
    level: str
    """error | warning | info, as the source logs or raises it."""
    source: str
    """tensorflow, xla, cuda_driver, nvml, cudnn, nccl, keras, pip, tensorflow_gpu or container."""
    source_file: str | None
    releases: tuple[str, ...]
    """TensorFlow release families (or the other sources' versions) whose artefacts hold it."""
    cause: str | None
    benign: str | None
    """Why the line is harmless, for a template that names no cause."""

    @property
    def fixed(self) -> str:
        """The template without placeholders: the words every instance of it contains."""
        return _without_values(self.text, "")


@cache
def templates() -> tuple[Template, ...]:
    """Every template of every source, in file order."""
    out = []
    for source in SOURCES:
        path = VOCABULARY / f"{source}.toml"
        if not path.exists():
            continue
        with path.open("rb") as f:
            data = tomllib.load(f)
        for t in data.get("template", ()):
            out.append(
                Template(
                    t["text"],
                    t["level"],
                    source,
                    t.get("source_file"),
                    tuple(t.get("releases", ())),
                    t.get("cause"),
                    t.get("benign"),
                )
            )
    return tuple(out)


# --- compiling a template --------------------------------------------------------------------------


_TOKEN = re.compile("%%|" + PLACEHOLDER.pattern)


def _without_values(text: str, value: str = " ") -> str:
    """The text with each placeholder replaced by `value` ("%%" is a literal %, not a value)."""
    return _TOKEN.sub(lambda m: "%" if m.group() == "%%" else value, text)


def _tokens(text: str) -> Iterator[tuple[str, str]]:
    """("lit", chars) and ("ph", placeholder) pieces of a template, left to right ("%%" is a literal %)."""
    pos, lit = 0, ""
    for m in _TOKEN.finditer(text):
        lit += text[pos : m.start()]
        pos = m.end()
        if m.group() == "%%":
            lit += "%"
            continue
        if lit:
            yield "lit", lit
            lit = ""
        yield "ph", m.group()
    lit += text[pos:]
    if lit:
        yield "lit", lit


def _literal(chars: str, before_ph: bool, after_ph: bool, strict: bool = False) -> str:
    """A literal piece as a pattern: whitespace runs as \\s+, any quote for a quote (optional by a
    value, unless `strict`)."""
    out = []
    for i, run in enumerate(re.split(r"(\s+)", chars)):
        if not run:
            continue
        if run.isspace():
            out.append(r"\s+" if i else r"\s*")
            continue
        for j, c in enumerate(run):
            if c in _QUOTES:
                by_value = (before_ph and i == 0 and j == 0) or (after_ph and j == len(run) - 1)
                touching = by_value and not strict
                out.append(_QUOTE_CLASS + ("?" if touching else ""))
            else:
                out.append(re.escape(c))
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _Chunk:
    pattern: str
    fixed: int
    line_end: bool = False
    """The template's text has a line break right after this chunk."""
    text: str = ""
    """The chunk's literal text, each value a NUL."""


def _value(ph: str) -> str:
    if ph.startswith("%") and not ph.startswith("%l") and ph[-1] in _NUMERIC:
        return _NUMERIC[ph[-1]]
    if ph.startswith("%l") and ph[-1] in "diu":
        return _NUMERIC[ph[-1]]
    return _VALUE


def _chunks(text: str, strict: bool = False) -> list[_Chunk]:
    """The template as word-sized pattern chunks (the space before a word opens its chunk); quotes
    around a value are optional unless `strict`."""
    toks = list(_tokens(text))
    chunks: list[_Chunk] = []
    pat, fixed, src = "", 0, ""
    for k, (kind, value) in enumerate(toks):
        if kind == "ph":
            pat += _value(value)
            src += "\0"
            continue
        before_ph = k > 0 and toks[k - 1][0] == "ph"
        after_ph = k + 1 < len(toks) and toks[k + 1][0] == "ph"
        pieces = re.split(r"(?<=\s)(?=\S)", value)
        for n, piece in enumerate(pieces):
            last = n == len(pieces) - 1
            if piece[-1:].isspace() and (not last or k + 1 < len(toks)):
                # The space between two words opens the next chunk, so a line cut after a word
                # (a paste, a wrap) ends a chunk cleanly.
                word = piece.rstrip()
                pat += _literal(word, before_ph and n == 0, False, strict) if word else ""
                fixed += len(word.strip())
                chunks.append(_Chunk(pat, fixed, "\n" in piece[len(word) :], src + word))
                pat, fixed, src = (r"\s+" if word or chunks else r"\s*"), 0, ""
                continue
            pat += _literal(piece, before_ph and n == 0, after_ph and last, strict)
            fixed += len(piece.strip())
            src += piece
    if pat:
        chunks.append(_Chunk(pat, fixed, False, src))
    return chunks


@dataclass(frozen=True, slots=True)
class _Compiled:
    template: Template
    full: re.Pattern[str]
    truncated: re.Pattern[str] | None
    cumulative: tuple[int, ...]
    """Fixed characters covered after each optional chunk of `truncated` (index = group number - 1)."""
    total: int
    words: tuple[str, ...]
    """Every word of the fixed text: a whole instance holds them all (checked before the regex)."""
    head_words: tuple[str, ...]
    """The words a truncated instance holds."""


def _end(text: str) -> str:
    """A word boundary where the template ends with a literal word character (CUDA_ERROR_X, not _XY)."""
    return r"(?![A-Za-z0-9_])" if re.search(r"\w$", text) and not PLACEHOLDER.search(text[-3:]) else ""


def _words(text: str) -> tuple[str, ...]:
    return tuple(WORD.findall(_without_values(text)))


def _compile(t: Template) -> _Compiled:
    # A leading or trailing value adds nothing to a search but cost: matching starts at the first
    # fixed text (which lets the regex engine scan for it) and stops at the last.
    text = re.sub(r"^(?:" + PLACEHOLDER.pattern + r")+", "", t.text).lstrip()
    text = re.sub(r"(?:" + PLACEHOLDER.pattern + r")+$", "", text).rstrip()
    # A template whose words are few ("'%s' failed with '%s'") keeps its quotes: without them it is
    # any sentence with "failed with" in it (conda's "Solving environment: failed with initial frozen
    # solve").
    strict = len(re.sub(r"\s|['\"`‘’“”]", "", _without_values(text))) < STRICT_QUOTES_BELOW
    chunks = _chunks(text, strict)
    total = sum(c.fixed for c in chunks)
    end = _end(t.text)
    full = re.compile("".join(c.pattern for c in chunks) + end)
    # The head a truncated line must hold: chunks up to TRUNCATED_MIN fixed characters, or up to the
    # template's first line break (TensorFlow's multi-line messages reach a ticket a line at a time).
    head_fixed, n_head = 0, 0
    for c in chunks:
        if head_fixed >= TRUNCATED_MIN:
            break
        head_fixed += c.fixed
        n_head += 1
        if c.line_end and head_fixed > 0:
            break
    words = _words(text)
    if n_head >= len(chunks):
        return _Compiled(t, full, None, (), total, words, words)
    rest = chunks[n_head:]
    nested, cumulative, covered = "", [], head_fixed
    for c in rest:
        covered += c.fixed
        cumulative.append(covered)
    for c in reversed(rest):
        nested = f"(?:{c.pattern}(){nested})?"
    head = "".join(c.pattern for c in chunks[:n_head])
    truncated = re.compile(head + nested + r"\s*\S*$")
    head_words = _words(" ".join(c.text for c in chunks[:n_head]))
    return _Compiled(t, full, truncated, (head_fixed, *cumulative), total, words, head_words)


@cache
def _head_words(t: Template) -> tuple[str, ...]:
    """The whole words of the template's head (what a truncated instance still holds)."""
    text = re.sub(r"^(?:" + PLACEHOLDER.pattern + r"|\s)+", "", t.text)
    head, fixed = [], 0
    for c in _chunks(text):
        head.append(c.text)
        fixed += c.fixed
        if fixed >= TRUNCATED_MIN - 10 or c.line_end:
            break
    # A word glued to a value ("libcudnn%s") is no anchor: the line holds "libcudnn8". Values
    # are NULs in a chunk's text; a glued word touches one.
    src = " ".join(head)
    words = [m.group() for m in re.finditer(r"(?<![\w\0])[A-Za-z0-9_]{4,}(?![\w\0])", src)]
    return tuple(words or WORD.findall(src))


def _rarest(words: Iterable[str]) -> str | None:
    freq = _word_frequency()
    return min(words, key=lambda w: (freq.get(w, 0), -len(w)), default=None)


def _anchor(t: Template) -> str | None:
    """The template's rarest whole word in its head (what the prefilter looks for in a line)."""
    return _rarest(_head_words(t))


@cache
def _word_frequency() -> dict[str, int]:
    """In how many templates each word appears: the rarest word of a template is its best anchor."""
    freq: dict[str, int] = {}
    for t in templates():
        for w in set(WORD.findall(_without_values(t.text))):
            freq[w] = freq.get(w, 0) + 1
    return freq


@dataclass(frozen=True, slots=True)
class _Index:
    by_anchor: dict[str, tuple[Template, ...]]
    unanchored: tuple[Template, ...]


@cache
def index() -> _Index:
    by: dict[str, list[Template]] = {}
    loose = []
    for t in templates():
        a = _anchor(t)
        if a is None:
            loose.append(t)
        else:
            by.setdefault(a, []).append(t)
    return _Index({k: tuple(v) for k, v in by.items()}, tuple(loose))


# Compiled when a line first holds the template's anchor: compiling all 848 up front was most of
# the time of a triage whose ticket holds one log line (issue 21).
compiled = cache(_compile)


_by_anchor: dict[str, tuple[_Compiled, ...]] = {}
"""Each anchor's templates compiled, in index's order: looked up by the word instead of hashing
each Template again for compiled's cache (a log line asks for several, a log has many lines)."""


def compiled_of(word: str) -> tuple[_Compiled, ...]:
    found = _by_anchor.get(word)
    if found is None:
        found = _by_anchor[word] = tuple(map(compiled, index().by_anchor[word]))
    return found


def _candidates(line: str) -> Iterator[_Compiled]:
    by_anchor = index().by_anchor
    seen: set[str] = set()
    for w in WORD.findall(line):
        if w in by_anchor and w not in seen:
            seen.add(w)
            yield from compiled_of(w)
    yield from map(compiled, index().unanchored)


def _score(c: _Compiled, line: str) -> tuple[int, int] | None:
    """(fixed characters matched, 1 for a whole instance / 0 for a truncated one), or None."""
    if all(map(line.__contains__, c.words)) and c.full.search(line):
        return c.total, 1
    if c.truncated is None or not all(map(line.__contains__, c.head_words)):
        return None
    m = c.truncated.search(line)
    if m is None:
        return None
    depth = m.lastindex or 0
    return c.cumulative[depth], 0


def match(line: str) -> Template | None:
    """The most specific template the line is an instance of (most fixed text wins; whole before cut)."""
    line = line[:MAX_LINE]
    best: tuple[int, int] | None = None
    found: Template | None = None
    for c in _candidates(line):
        s = _score(c, line)
        if s is not None and (best is None or s > best):
            best, found = s, c.template
    return found


_SAMPLE = {
    "d": "42",
    "i": "42",
    "u": "42",
    "x": "2a",
    "X": "2A",
    "p": "0x7f3a2c",
    "f": "0.5",
    "F": "0.5",
    "g": "0.5",
    "G": "0.5",
    "e": "5e-01",
    "E": "5E-01",
    "c": "x",
    "v": "v7",
}


def instance_of(text: str, value: str = "libfoo.so.1") -> str:
    """The template with every placeholder filled in (numbers for numeric ones): a line it must match."""

    def fill(m: re.Match[str]) -> str:
        ph = m.group()
        return _SAMPLE.get(ph[-1], value) if ph.startswith("%") else value

    return PLACEHOLDER.sub(fill, text.replace("%%", "\0")).replace("\0", "%")


@cache
def _pairs() -> dict[str, frozenset[str]] | None:
    """Anchor of each template -> the second rarest head words that go with it ("" when the head
    has one word); None when a template has no word to look for."""
    pairs: dict[str, set[str]] = {}
    for t in templates():
        words = _head_words(t)
        first = _rarest(words)
        if first is None:
            return None
        pairs.setdefault(first, set()).add(_rarest(w for w in words if w != first) or "")
    return {k: frozenset(v) for k, v in pairs.items()}


def could_match(line: str) -> bool:
    """False only when the line is an instance of no template: it lacks every template's two
    rarest head words (a set lookup per word, so a long ticket's prose is turned away cheaply)."""
    pairs = _pairs()
    if pairs is None:
        return True
    words = set(WORD.findall(line[:MAX_LINE]))
    # Only the line's anchors are looked up (a C set intersection): a line of prose has tens of
    # words and rarely an anchor, and this runs for every line a log gate keeps
    for w in words.intersection(_anchor_set()):
        second = pairs[w]
        if "" in second or not words.isdisjoint(second):
            return True
    return False


def lookup_words() -> frozenset[str]:
    """Every word could_match looks up: the anchors and their second words (a line's other
    words never change its answer)."""
    pairs = _pairs() or {}
    return frozenset(pairs).union(*pairs.values()) - {""}


@cache
def anchor_groups() -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(anchors that decide alone, anchors that need a second word): a line could_match keeps
    holds an anchor of the first group, or one of the second and one of its second words. None
    when _pairs knows no words."""
    pairs = _pairs()
    if pairs is None:
        return None
    alone = tuple(sorted(w for w, second in pairs.items() if "" in second))
    paired = tuple(sorted(w for w, second in pairs.items() if "" not in second))
    return alone, paired


@cache
def _anchor_set() -> frozenset[str]:
    """The anchors _pairs knows (empty when it knows none)."""
    return frozenset(_pairs() or ())


@cache
def anchors() -> tuple[str, ...] | None:
    """The words the prefilter looks for: a line holding none of them matches no template (None
    when some template has no anchor, so no line can be ruled out by its words). Read from the
    templates' text, without compiling them (a gate builds on it before any line is matched)."""
    found = [_anchor(t) for t in templates()]
    return None if any(a is None for a in found) else tuple(dict.fromkeys(a for a in found if a))


def first_line(text: str) -> str:
    """The first line of a template that holds fixed words (what a ticket shows of a multi-line one)."""
    for part in text.split("\n"):
        if PLACEHOLDER.sub("", part).strip():
            return part
    return text


def same_reading(got: Template | None, want: Template) -> bool:
    """The match is the template, or one no line can tell apart from it (same words, same meaning):
    what the vocabulary's tests and benchmark count as recognised."""
    if got is None:
        return False
    if got.text == want.text:
        return True
    words = set(PLACEHOLDER.sub(" ", first_line(want.text)).split())
    return (got.cause, got.benign) == (want.cause, want.benign) and words <= set(got.fixed.split())


def fixed_prefix(text: str, fixed: int) -> str | None:
    """The template's text up to the first space after `fixed` non-space fixed characters, if any
    (where a pasted line cut short may end)."""
    n = 0
    for m in re.finditer(r"%%|" + PLACEHOLDER.pattern + r"|.", text, re.S):
        if len(m.group()) == 1 and not m.group().isspace():
            n += 1
        elif m.group().isspace() and n >= fixed:
            return text[: m.start()]
    return None
