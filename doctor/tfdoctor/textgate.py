"""Which regexes could match a line, decided from the literal text every match must contain.

A pattern like `Loaded runtime CuDNN library: (?P<s>\\S+)` can only match a line holding
"Loaded runtime CuDNN library: ". `required` reads that out of the pattern's own parse tree
(alternatives give a set: one of them must be there), and `Gate` tests those literals with
plain substring checks, so the regex runs only on lines where it might match. The answer is
exact: a pattern whose requirement cannot be read (or whose parse fails) is always run.
Searching a hundred regexes on every line of an 8 MiB ticket is what made triage slow (issue 21).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import compress
from typing import Any


def _private(module: str, before_311: str) -> Any:
    """re's parser: private from Python 3.11 (the old public names warn there), public before."""
    try:
        return importlib.import_module(module)
    except ImportError:  # pragma: no cover  (Python 3.10)
        return importlib.import_module(before_311)


_sre = _private("re._constants", "sre_constants")
_sre_parse = _private("re._parser", "sre_parse")

Need = frozenset[tuple[str, bool]]
"""One of these (literal, case-insensitive) must occur in any match; the literal is lowercase
when case-insensitive."""

# Under IGNORECASE Python's re also matches these to ASCII letters (found by trying every code
# point; tests/triage/test_gate.py repeats the search): fold them before lowering. str.replace,
# not str.translate, which costs a dictionary look-up per character of non-ASCII text.
_FOLD = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))
_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", _sre.MAX_REPEAT)}


def folded(line: str) -> str:
    """The line as a case-insensitive literal is looked for in it (see `Need`)."""
    if not line.isascii():
        for char, letter in _FOLD:
            line = line.replace(char, letter)
    return line.lower()


@cache
def _parse(source: str, flags: int) -> Any:
    """re's parse tree of a pattern, made once (requirements and alternatives both read it; the
    gates over the catalogue's patterns parsed each of them four times at every start). Read,
    never changed."""
    return _sre_parse.parse(source, flags)


def required(pattern: re.Pattern[str]) -> Need | None:
    """One literal set any match of pattern must contain (the most telling), or None."""
    needs = requirements(pattern)
    return needs[0] if needs else None


def requirements(pattern: re.Pattern[str]) -> tuple[Need, ...]:
    """Every literal set any match must contain, most telling first; () when none can be read."""
    try:
        parsed = _parse(pattern.pattern, pattern.flags)
        return _options(list(parsed), bool(parsed.state.flags & re.IGNORECASE))
    except Exception:  # noqa: BLE001  (a private parser: whatever it does, the pattern is always run)
        return ()


def alternatives(pattern: re.Pattern[str]) -> tuple[tuple[Need, ...], ...] | None:
    """For a pattern that is one alternation (`a|b`, `(?i:a|b)`, also with what re's parser
    factors out of every alternative, `\\b` in `\\ba|\\bb`): what each alternative requires, so a
    line must hold all of one alternative's literals; None for any other pattern."""
    try:
        parsed = _parse(pattern.pattern, pattern.flags)
        items, icase = list(parsed), bool(parsed.state.flags & re.IGNORECASE)
        while len(items) == 1 and items[0][0] is _sre.SUBPATTERN:
            _group, add, remove, sub = items[0][1]
            icase = bool((icase or add & re.IGNORECASE) and not remove & re.IGNORECASE)
            items = list(sub)
        branches = [av for op, av in items if op is _sre.BRANCH]
        if len(branches) != 1:  # a match holds a match of one alternative, whatever is around it
            return None
        alts = tuple(_options(list(alt), icase) for alt in branches[0][1])
        return None if any(not alt for alt in alts) else alts
    except Exception:  # noqa: BLE001
        return None


def _options(items: Sequence[tuple[object, object]], icase: bool) -> tuple[Need, ...]:
    """What each item of a sequence requires (all items must match), most telling first."""
    options: list[Need] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            text = "".join(run)
            if not icase or text.isascii():
                options.append(frozenset({(text.lower() if icase else text, icase)}))
            run.clear()

    for op, av in items:
        if op is _sre.LITERAL:
            run.append(chr(av))  # type: ignore[arg-type]
            continue
        flush()
        options.extend(_item(op, av, icase))
    flush()
    # The most telling first: its least telling literal is the longest and has the rarest characters.
    return tuple(sorted(set(options), key=lambda n: (-min(_telling(t, i) for t, i in n), len(n), sorted(n))))


def _sequence(items: Sequence[tuple[object, object]], icase: bool) -> Need | None:
    options = _options(items, icase)
    return options[0] if options else None


def _item(op: object, av: Any, icase: bool) -> tuple[Need, ...]:
    """What one item of a sequence requires: every Need of the tuple."""
    if op is _sre.SUBPATTERN:
        _group, add, remove, sub = av
        icase = bool((icase or add & re.IGNORECASE) and not remove & re.IGNORECASE)
        return _options(list(sub), icase)
    if op is _sre.ATOMIC_GROUP:
        return _options(list(av), icase)
    if op in _REPEATS:
        low, _high, sub = av
        return _options(list(sub), icase) if low >= 1 else ()
    if op is _sre.BRANCH:  # one alternative matches: one of their requirements is there
        needs = [_sequence(list(alt), icase) for alt in av[1]]
        if any(n is None for n in needs):
            return ()
        return (frozenset().union(*needs),)  # type: ignore[arg-type]
    return ()  # a class, any character, an anchor, a look-around, a back reference


_DIGITS = "0123456789"


def digit_blind(pattern: re.Pattern[str]) -> bool:
    """Whether pattern treats every ASCII digit alike: no digit literal, every class holding all
    of 0-9 or none of them, no back reference. Such a pattern matches a line and the line with
    its digits zeroed (ZERO) at the same places, each group too: a match only ever asks whether
    a character is in a class (or is a literal), and a digit for a digit answers alike. False
    where unsure (a construct not read here, a parse that fails)."""
    try:
        return _blind(list(_parse(pattern.pattern, pattern.flags)))
    except Exception:  # noqa: BLE001  (a private parser: unsure)
        return False


def _blind(items: Sequence[tuple[Any, Any]]) -> bool:
    for op, av in items:
        if op is _sre.LITERAL or op is _sre.NOT_LITERAL:
            if chr(av) in _DIGITS:
                return False
        elif op is _sre.IN:
            if len({_in_class(av, d) for d in _DIGITS}) != 1:
                return False
        elif op is _sre.ANY or op is _sre.AT:
            continue
        elif op is _sre.SUBPATTERN:
            if not _blind(list(av[3])):
                return False
        elif op is _sre.ATOMIC_GROUP:
            if not _blind(list(av)):
                return False
        elif op in _REPEATS:
            if not _blind(list(av[2])):
                return False
        elif op is _sre.BRANCH:
            if not all(_blind(list(alt)) for alt in av[1]):
                return False
        elif op is _sre.ASSERT or op is _sre.ASSERT_NOT:
            if not _blind(list(av[1])):
                return False
        else:  # a back reference, a conditional, anything else
            return False
    return True


_HOLD_DIGITS = {_sre.CATEGORY_DIGIT, _sre.CATEGORY_WORD, _sre.CATEGORY_NOT_SPACE, _sre.CATEGORY_NOT_LINEBREAK}
_NO_DIGITS = {_sre.CATEGORY_NOT_DIGIT, _sre.CATEGORY_NOT_WORD, _sre.CATEGORY_SPACE, _sre.CATEGORY_LINEBREAK}


def _in_class(items: Sequence[tuple[Any, Any]], digit: str) -> bool | None:
    """Whether a class holds the digit; None where unsure."""
    hit, negate = False, False
    for op, av in items:
        if op is _sre.NEGATE:
            negate = True
        elif op is _sre.LITERAL:
            hit = hit or chr(av) == digit
        elif op is _sre.RANGE:
            hit = hit or av[0] <= ord(digit) <= av[1]
        elif op is _sre.CATEGORY and (av in _HOLD_DIGITS or av in _NO_DIGITS):
            hit = hit or av in _HOLD_DIGITS
        else:
            return None
    return hit != negate


@dataclass(frozen=True, slots=True)
class Gated:
    """A regex with what its matches must contain.

    `could_match(line, low)` is False only when pattern.search(line) is certainly None (low is
    folded(line)); `search(line, low)` is pattern.search(line), skipped when it cannot match. Both
    are made once per pattern as one expression of `in` tests (what _holds loops over): a
    recogniser asks a dozen of them of every line it reads, and three calls and two loops per ask
    were most of a long ticket's time (issue 21)."""

    pattern: re.Pattern[str]
    needs: tuple[Need, ...]
    alternatives: tuple[tuple[Need, ...], ...] | None = None
    """For one alternation: each alternative's needs (one of them must all be there)."""
    could_match: Callable[[str, str], bool] = field(init=False, repr=False, compare=False)
    search: Callable[[str, str], re.Match[str] | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.alternatives is None and len(self.needs) == 1 and len(self.needs[0]) == 1:
            # one literal (each anchor word of the vocabulary): closures, made in a microsecond
            (text, icase), = self.needs[0]
            could_match, search = _one_literal(text, icase, self.pattern.search)
        else:
            test = _test_source(self.needs, self.alternatives)
            scope: dict[str, Any] = {"_search": self.pattern.search}
            exec(f"def could_match(line, low):\n    return {test}\n"  # noqa: S102  (literals via repr)
                 f"def search(line, low):\n    return _search(line) if {test} else None\n", scope)
            could_match, search = scope["could_match"], scope["search"]
        object.__setattr__(self, "could_match", could_match)
        object.__setattr__(self, "search", search)


def _one_literal(text: str, icase: bool, pattern_search: Callable[[str], re.Match[str] | None]) -> tuple[
        Callable[[str, str], bool], Callable[[str, str], re.Match[str] | None]]:
    """could_match and search of a pattern whose only need is one literal."""
    if icase:
        def could_match(line: str, low: str) -> bool:
            return text in low

        def search(line: str, low: str) -> re.Match[str] | None:
            return pattern_search(line) if text in low else None
    else:
        def could_match(line: str, low: str) -> bool:
            return text in line

        def search(line: str, low: str) -> re.Match[str] | None:
            return pattern_search(line) if text in line else None
    return could_match, search


def _test_source(needs: tuple[Need, ...], alternatives: tuple[tuple[Need, ...], ...] | None) -> str:
    """A Python expression of line and low, true when _holds(needs) and (no alternatives or
    _holds(one alternative)): each literal written with repr."""
    test = _needs_source(needs)
    if alternatives is not None:
        test = f"{test} and ({' or '.join(_needs_source(alt) for alt in alternatives)})"
    return test


def _needs_source(needs: tuple[Need, ...]) -> str:
    if not needs:
        return "True"
    parts = [" or ".join(f"{text!r} in {'low' if icase else 'line'}" for text, icase in sorted(need))
             for need in needs]
    return "(" + " and ".join(f"({part})" for part in parts) + ")"


def _holds(needs: tuple[Need, ...], line: str, low: str) -> bool:
    """Each need has one of its literals in the line."""
    for need in needs:  # loops, not all(any(...)): this runs for every pattern on every line
        for text, icase in need:
            if text in (low if icase else line):
                break
        else:
            return False
    return True


def _digit_free(g: Gated) -> Gated:
    """g with only the needs whose literals hold no digit: where it cannot match a line, g's
    pattern matches no line alike but for its digits."""
    def keep(needs: tuple[Need, ...]) -> tuple[Need, ...]:
        return tuple(n for n in needs if not any(has_digit(text) for text, _ in n))

    alternatives = None if g.alternatives is None else tuple(map(keep, g.alternatives))
    return Gated(g.pattern, keep(g.needs), alternatives)


@cache
def gated(pattern: re.Pattern[str]) -> Gated:
    """The pattern with what its matches need (one for each pattern: a Gated is immutable, and
    logmap's and tf_log's gates gate the same patterns)."""
    return Gated(pattern, requirements(pattern), alternatives(pattern))


@cache
def literal(text: str) -> Gated:
    """gated(re.compile(re.escape(text))) for a non-empty text, without parsing the regex back
    (a gate over the vocabulary's 800 anchor words did, at every start); one for each text, which
    every gate over the anchors shares."""
    return Gated(re.compile(re.escape(text)), (frozenset({(text, False)}),))


class Gate:
    """Whether any of many patterns matches a line. One regex over a key substring of each
    pattern's literals, starting with a rare character so most positions are skipped at C speed,
    turns most lines away; on the others only the patterns whose key is there are searched."""

    def __init__(self, patterns: Iterable[re.Pattern[str] | Gated]) -> None:
        self.gated = tuple(p if isinstance(p, Gated) else gated(p) for p in patterns)
        self._always = tuple(i for i, g in enumerate(self.gated) if not g.needs)
        self._by_key: dict[tuple[str, bool], list[int]] = {}
        for i, g in enumerate(self.gated):
            for text, icase in g.needs[0] if g.needs else ():
                self._by_key.setdefault((_key(text, icase), icase), []).append(i)
        # Searched from each key found + 1, not with a look-ahead: only a bare trie lets re skip
        # the positions whose character starts no key.
        self._exact = _literal_regex({k for k, icase in self._by_key if not icase})
        self._folded = _literal_regex({k for k, icase in self._by_key if icase})
        # None for each digit_blind pattern, _digit_free of each other one (made when first asked)
        self._blind: tuple[Gated | None, ...] | None = None
        # Each trie's keys that hold a digit, the digits zeroed (key_lines' `digit_keys`)
        self._exact_digits, self._folded_digits = (
            tuple(sorted({k.translate(ZERO) for k, ic in self._by_key if ic is icase and has_digit(k)}))
            for icase in (False, True))
        # What a key found at a position makes a candidate: its patterns and those of every key it
        # starts with (the trie regex finds the longest key there).
        self._exact_at, self._folded_at = ({
            k: tuple(i for end in range(1, len(k) + 1) for i in self._by_key.get((k[:end], icase), ()))
            for k, ic in self._by_key if ic is icase} for icase in (False, True))

    def lines_to_search(self, lines: Sequence[str]) -> set[int] | None:
        """Indexes of the lines where a key is, found over the whole text at once (no Python work
        per line); None when every line must be searched."""
        return self.lines_in("\n".join(lines))

    def lines_in(self, text: str, dense: bool = False) -> set[int] | None:
        """lines_to_search for lines already joined by "\\n" (text holds no other line break).
        `dense`: the caller expects keys on most lines (or lines alike but for their digits), so
        each distinct line is searched from the start (key_lines)."""
        if self._always:
            return None
        out: set[int] = set()
        if self._exact is not None:
            key_lines(self._exact, text, out, digit_keys=self._exact_digits, dense=dense)
        if self._folded is not None:  # (8 MiB lowered only for a gate with a case-insensitive key)
            key_lines(self._folded, folded(text), out, digit_keys=self._folded_digits, dense=dense)
        return out

    def few_lines_in(self, text: str) -> set[int] | None:
        """lines_in, or None once keys are on most lines so far (key_lines' test, after 512 hit
        lines): for a caller that reads such text another way, the search given up early."""
        if self._always:
            return None
        out: set[int] = set()
        for regex, where in ((self._exact, text), (self._folded, None)):
            if regex is None:
                continue
            if where is None:
                where = folded(text)
            if not key_lines(regex, where, out, few=True):
                return None
        return out

    def any_match(self, line: str) -> bool:
        """Whether pattern.search(line) finds something for any of the patterns."""
        return self.first(line) is not None

    def first(self, line: str) -> tuple[int, re.Match[str]] | None:
        """(index, match) of the first of the patterns, in their order, that matches line: what
        a loop searching each in turn finds, without searching those that cannot match."""
        low = folded(line) if self._folded is not None else line
        gated = self.gated
        for i in sorted(self._candidates(line, low)):
            found = gated[i].search(line, low)
            if found is not None:
                return i, found
        return None

    def _candidates(self, line: str, low: str) -> set[int]:
        """The patterns whose key is in the line (and those without one)."""
        candidates = set(self._always)
        for regex, text, at in ((self._exact, line, self._exact_at), (self._folded, low, self._folded_at)):
            if regex is None:
                continue
            m = regex.search(text)
            while m is not None:  # each key where it starts, the overlapping ones too
                candidates.update(at[m.group()])
                m = regex.search(text, m.start() + 1)
        return candidates

    def digit_blind_on(self, line: str, zeroed: str) -> bool:
        """Whether first() answers alike every line whose digits zeroed are `zeroed` (ZERO; line
        among them): the same pattern, matched at the same places, groups included. So where
        `zeroed` holds no zeroed key with a digit, and every pattern whose key is in the line is
        digit_blind or lacks a literal without a digit that its matches need: the keys found are
        then the same in all those lines (see _verdicts), and so are the candidates; a
        digit-blind pattern matches each line at the same places (its literals hold no digit), and
        a literal without a digit is in all those lines or in none."""
        if any(map(zeroed.__contains__, self._exact_digits)):
            return False
        if self._folded_digits and any(map(folded(zeroed).__contains__, self._folded_digits)):
            return False
        if self._blind is None:
            self._blind = tuple(None if digit_blind(g.pattern) else _digit_free(g) for g in self.gated)
        blind = self._blind
        low = folded(line) if self._folded is not None else line
        return all(blind[i] is None or not blind[i].could_match(line, low)  # type: ignore[union-attr]
                   for i in self._candidates(line, low))


_CHUNK = 1 << 20
"""Characters of text split into lines at a time once keys are on most lines (key_lines)."""


def key_lines(regex: re.Pattern[str], text: str, out: set[int], line_local: bool | None = None,
              few: bool = False, digit_keys: tuple[str, ...] | None = None, dense: bool = False) -> bool:
    """Add the indexes of the lines of text ("\\n"-joined) where regex, a trie of literals,
    finds a key. One search per hit line, each a few C calls; once keys are on most lines so far
    (and no key holds a line break), the rest of the text is split into lines a chunk at a time
    and each is searched in C (map, compress): a ticket of half a million lines that all name the
    GPU made this loop a second of Python (issue 21). `line_local`: whether regex finds in a line
    alone what it finds from that line's start in the text (default: no line break in the
    pattern, true of a trie of literals). `few`: give up (return False, out part filled) where
    the rest would be searched line by line; True otherwise. `digit_keys`, for a trie of literals:
    its keys that hold a digit, each digit a 0 (ZERO), so that lines alike but for their numbers
    are searched once (_verdicts); None for any other regex. `dense` (with digit_keys): line by
    line from the start, where the caller knows most lines to be alike but for their digits: a
    search of the whole text, tried at each of its many positions that start a key, costs more
    (gpu-words: 0.28 s, line by line 0.17)."""
    line = last = hits = 0
    # (re.escape keeps a line break a line break)
    one_line = "\n" not in regex.pattern if line_local is None else line_local
    if dense and digit_keys is not None and one_line and not few:
        _each_line(regex, text, 0, 0, out, digit_keys)
        return True
    m = regex.search(text)
    while m is not None:
        line += text.count("\n", last, m.start())
        last = m.start()
        out.add(line)
        hits += 1
        after = text.find("\n", last)
        if after < 0:
            return True
        if hits >= 512 and hits * 4 > line and (one_line or few):
            if few:
                return False
            _each_line(regex, text, after + 1, line + 1, out, digit_keys)
            return True
        m = regex.search(text, after + 1)
    return True


def _each_line(regex: re.Pattern[str], text: str, pos: int, line: int, out: set[int],
               digit_keys: tuple[str, ...] | None = None) -> None:
    """Add the indexes of the lines from text[pos:] (line `line` starts at pos) where regex finds
    a match, searched line by line (each distinct line once: _verdicts)."""
    n = len(text)
    while True:
        end = n
        if pos + _CHUNK < n:
            end = text.rfind("\n", pos, pos + _CHUNK)
            if end < 0:  # a line longer than the chunk
                end = text.find("\n", pos + _CHUNK)
                end = n if end < 0 else end
        count, found = _verdicts(regex, text[pos:end], digit_keys)
        out.update(compress(range(line, line + count), found))
        if end >= n:
            return
        line += count
        pos = end + 1


ZERO = str.maketrans("123456789", "000000000")
"""Every ASCII digit a 0."""


def has_digit(text: str) -> bool:
    """Whether text holds an ASCII digit."""
    return any(map(text.__contains__, _DIGITS))


def _verdicts(regex: re.Pattern[str], chunk: str, digit_keys: tuple[str, ...] | None) -> tuple[
        int, Iterable[object]]:
    """(the number of lines of chunk, whether regex finds a match in each), regex searched once
    per distinct line where lines repeat (a log of one-letter lines, of one message).

    Where regex is a trie of literals (digit_keys given): once per distinct line with each digit
    a 0 ("GPU 12 CUDA" and "GPU 47 CUDA" are one line), unless the
    zeroed chunk holds a zeroed digit key. A key without a digit is where it was in a zeroed line
    (a digit for a digit); with none of the zeroed digit keys in it, the zeroed line holds no
    digit key, nor does the line itself (its digit key would be there zeroed): the keys found in
    both lines are the same, and so is the verdict."""
    if digit_keys is not None:
        zeroed = chunk.translate(ZERO)
        if not any(map(zeroed.__contains__, digit_keys)):
            chunk = zeroed
    parts = chunk.split("\n")
    distinct = set(parts)
    if len(distinct) * 2 > len(parts):
        return len(parts), map(regex.search, parts)
    verdict = {part: regex.search(part) is not None for part in distinct}
    return len(parts), map(verdict.__getitem__, parts)


def _key(text: str, icase: bool) -> str:
    """The part of a literal a line is first searched for: 8 characters from its rarest one (at
    least 4 from the end, so the key stays telling)."""
    starts = range(max(1, len(text) - 3)) if len(text) > 4 else range(1)
    start = min(starts, key=lambda i: (_rarity(text[i], icase), i))
    return text[start : start + 8]


def _telling(text: str, icase: bool) -> float:
    """How few lines a literal is likely to be in: longer, and of rarer characters, is fewer.
    Digits and dots count little: versions are everywhere in a ticket."""
    return sum(_weight(ch, icase) for ch in text)


def _weight(ch: str, icase: bool) -> float:
    """How telling one character of a literal is."""
    r = _rarity(ch, icase)
    if 20 < r <= 46:  # a lower-case letter: 1 (e) to 2 (z)
        return 1 + (46 - r) / 25
    return {0: 4.0, 10: 3.0, 47: 0.5, 50: 0.3}[r]


_BY_FREQUENCY = "etaoinshrdlcumwfgypbvkjxqz"  # English letters, most frequent first


def _rarity(ch: str, icase: bool) -> int:
    """How often ch is in a ticket, roughly: lower is rarer."""
    if ch.isascii() and ch.isalpha():
        if ch.isupper() and not icase:
            return 10
        return 46 - _BY_FREQUENCY.index(ch.lower())
    if ch.isdigit() or ch in ".-_/:,'\"=":
        return 47
    return 50 if ch.isspace() else 0


def _literal_regex(literals: set[str]) -> re.Pattern[str] | None:
    """One regex finding the longest of literals at a position (a trie: one test per character)."""
    if not literals:
        return None
    trie: dict[str, dict] = {}
    for text in literals:
        node = trie
        for ch in text:
            node = node.setdefault(ch, {})
        node[""] = {}
    return re.compile(_trie_regex(trie))


def _trie_regex(node: dict[str, dict]) -> str:
    """Longest first: a key that starts another still matches (the caller tries each prefix)."""
    alts = [re.escape(ch) + _trie_regex(sub) for ch, sub in sorted(node.items()) if ch]
    if "" in node:
        alts.append("")
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
