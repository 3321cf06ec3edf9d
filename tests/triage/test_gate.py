"""The gate that keeps regexes off lines they cannot match never changes what they find.

Triage is fast on large tickets because a pattern runs only where the literal text its matches
need is (issue 21); a wrong requirement would silently lose a cause, so each test compares the
gated answer with the plain one on real text and on text made to sit at the edges.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

from tfdoctor.smoke import logmap
from tfdoctor.textgate import Gate, folded, gated, requirements
from tfdoctor.triage.lines import KEEP, ticket_lines
from tfdoctor.triage.recognisers import prose, tf_log
from tfdoctor.triage.recognisers._text import clean

TESTS = Path(__file__).resolve().parents[1]


def _real_lines() -> list[str]:
    """Every distinct line of the field corpus and the recorded tickets, cleaned as triage does."""
    lines: list[str] = []
    for path in sorted([*TESTS.glob("field/cases/*.txt"), *TESTS.glob("triage/data/*/*.txt")]):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return list(dict.fromkeys(s for s in map(clean, lines) if s))


REAL = _real_lines()


def test_tf_log_asks_logmap_exactly_when_it_would_answer():
    """On every real line, tf_log's gated answer is logmap's own: the cause recognise reads, else
    the reason harmless gives."""
    gate, known = tf_log._causes()
    keyed = gate.lines_to_search(REAL)
    assert keyed is not None and len(REAL) > 3000
    for i, line in enumerate(REAL):
        got = tf_log._cause(line, gate, known) if i in keyed else None
        assert got == (logmap.recognise(line) or logmap.harmless(line)), line


def test_first_is_the_loops_first_match():
    """Gate.first finds the pattern a loop over all of them finds first, with the same match."""
    gate = Gate(p for _, p in logmap.PATTERNS)
    for line in REAL:
        hits = ((i, m.span()) for i, (_, p) in enumerate(logmap.PATTERNS) if (m := p.search(line)))
        want = next(hits, None)
        got = gate.first(line)
        assert (got and (got[0], got[1].span())) == want, line


def test_prose_patterns_gated_find_what_they_find():
    """Each of prose's gated patterns finds, on every real line, what the bare regex finds."""
    patterns = [v for v in vars(prose).values() if hasattr(v, "could_match")]
    assert len(patterns) > 10
    for line in REAL:
        low = folded(line)
        for g in patterns:
            bare, got = g.pattern.search(line), g.search(line, low)
            assert (got.span() if got else None) == (bare.span() if bare else None), (g.pattern.pattern, line)


def test_requirements_read_from_the_parse_tree():
    """What a match needs: literal runs, one of an alternation's, a repeat's body; nothing from
    an optional part or a class; case-insensitive literals lowered."""
    need = requirements
    assert need(re.compile(r"Loaded runtime CuDNN library: (?P<s>\S+)")) == (
        frozenset({("Loaded runtime CuDNN library: ", False)}),)
    assert need(re.compile(r"(?:abc|xyz)\d+")) == (frozenset({("abc", False), ("xyz", False)}),)
    assert need(re.compile(r"(?i)Driver Version")) == (frozenset({("driver version", True)}),)
    assert need(re.compile(r"(?:optional)?[a-z]+")) == ()
    assert need(re.compile(r"abc|\d+")) == ()  # one alternative needs nothing: nor does the whole
    assert set(need(re.compile(r"(?:xy){2,}-(?i:Tail)"))) == {
        frozenset({("xy", False)}), frozenset({("-", False)}), frozenset({("tail", True)})}


def test_folding_matches_every_character_re_folds_to_an_ascii_letter():
    """Under IGNORECASE re matches a few non-ASCII characters to ASCII letters (the Kelvin sign to
    k, the long s to s): folded() must turn each into its letter, or the gate would turn away a
    line the pattern matches. Searches every code point, as the table was made."""
    letter = re.compile("[a-z]", re.IGNORECASE)
    for code in range(128, sys.maxunicode + 1):
        char = chr(code)
        if letter.fullmatch(char):
            assert re.fullmatch(folded(char), char, re.IGNORECASE) and folded(char).isascii(), hex(code)
    sign = "\u212a"  # KELVIN SIGN
    g = gated(re.compile(r"(?i)kernel"))
    assert g.search(f"{sign}ernel", folded(f"{sign}ernel")) is not None


def test_made_up_lines_at_the_edges():
    """Random lines built from the patterns' own literals, cut and recased: gated == bare."""
    rng = random.Random(21)
    pieces = [text for g in (gated(p) for _, p in logmap.PATTERNS) for need in g.needs for text, _ in need]
    gate = Gate(p for _, p in logmap.PATTERNS)
    for _ in range(3000):
        parts = [rng.choice(pieces) for _ in range(rng.randint(1, 4))]
        parts = [p[rng.randint(0, 2):] if rng.random() < 0.3 else p for p in parts]
        line = " ".join(p.upper() if rng.random() < 0.2 else p for p in parts)
        want = next((i for i, (_, p) in enumerate(logmap.PATTERNS) if p.search(line)), None)
        got = gate.first(line)
        assert (got[0] if got else None) == want, line


def test_blank_runs_are_cut_and_every_kept_line_maps_back():
    """ticket_lines keeps every non-blank line, cuts only blank runs longer than KEEP, and maps
    each kept line to its number in the ticket as pasted, over several inputs and every line
    ending str.splitlines knows."""
    rng = random.Random(4)
    breaks = ["\n", "\r\n", "\r", "\x0b", "\u2028"]
    for _ in range(400):
        texts = []
        for _ in range(rng.randint(1, 3)):
            parts = []
            for _ in range(rng.randint(0, 6)):
                if rng.random() < 0.5:
                    parts.append(rng.choice(["x", "  ", "\t", "line"]) + rng.choice(breaks))
                else:
                    blank = rng.choice(["", " ", "\t"]) + rng.choice(breaks)
                    parts.append(blank * rng.randint(0, 2 * KEEP + 5))
            texts.append("".join(parts))
        whole = [line for text in texts for line in text.splitlines()]
        kept = ticket_lines(texts)
        numbers = [kept.original(n) for n in range(1, len(kept.lines) + 1)]
        assert numbers == sorted(set(numbers))
        assert all(whole[n - 1] == line for n, line in zip(numbers, kept.lines, strict=True))
        gone = set(range(1, len(whole) + 1)) - set(numbers)
        assert all(not whole[n - 1].strip(" \t") for n in gone)
        for text in texts:  # and no run longer than KEEP is left in any input
            run = longest = 0
            for line in ticket_lines([text]).lines:
                run = run + 1 if not line.strip(" \t") else 0
                longest = max(longest, run)
            assert longest <= KEEP


def test_log_line_is_logmaps_log_line():
    """tf_log's quick test for TensorFlow's log format answers as LOG_LINE's own search, on every
    real line (it only skips the search where the line cannot hold a match)."""
    for line in REAL:
        assert tf_log._log_line(line) == (logmap.LOG_LINE.search(line) is not None), line


def test_alternatives_read_past_what_re_factors_out():
    """re's parser moves what every alternative starts with out of the alternation (`\\b` in
    `\\ba|\\bb`); each alternative's literals still decide, so a line with none of them is skipped."""
    g = gated(re.compile(r"\b[\w.]+ depends on (?P<s>tensorflow-text)\b|\b(?P<t>keras-nlp)\s+0\.0\.0\b"))
    assert g.alternatives is not None
    for line in ("tensorflow keras", "x 1 depends on tensorflow-text", "keras-nlp 0.0.0", "keras-nlp 0.0.1"):
        assert g.could_match(line, folded(line)) or g.pattern.search(line) is None, line
    assert not g.could_match("tensorflow keras", "tensorflow keras")


def test_gate_over_distinct_lines_keeps_every_line_the_whole_text_keeps():
    """A gate run once per distinct line of a repetitive ticket keeps every line it keeps run over
    the whole text (it may keep more: over fewer lines, tf_log's second scan, which only narrows,
    is worth its cost less often), and each copy of a kept line."""
    from tfdoctor.triage.recognisers import _text

    gate, _known = tf_log._causes()
    base = [line for line in REAL if len(line) >= 40][:3000]
    lines, n = base * 3, len(base)
    gated, whole = _text.gated_lines(lines, gate.lines_in), gate.lines_in("\n".join(lines))
    assert gated is not None and whole is not None and whole <= gated
    assert all({i % n, i % n + n, i % n + 2 * n} <= gated for i in gated)
    _text.forget()


def test_literal_is_gated_without_parsing():
    """textgate.literal(word) is what gated() reads out of the escaped word's own regex."""
    from tfdoctor.knowledge import vocab
    from tfdoctor.textgate import literal

    for word in vocab.anchors() or ():
        assert literal(word) == gated(re.compile(re.escape(word))), word


def test_log_lines_found_line_by_line_or_over_the_text_alike():
    """tf_log finds the lines of the log format one by one where few lines hold "]", over the
    whole text where many do: the same lines either way."""
    from tfdoctor.triage.recognisers import _text

    for text in ("\n".join(REAL), "\n".join(line for line in REAL if "]" not in line) + "\nE a.cc:1] x"):
        whole: set[int] = set()
        _text.regex_lines(text, tf_log._LOG_LINE_WIDER, whole)
        found: set[int] = set()
        tf_log._log_lines(text, found)
        assert found == whole and whole


def test_vocab_could_match_is_the_word_loop():
    """vocab.could_match looks up only the anchors a line holds (a set intersection) instead of
    every word of it; on every real line, and on lines of anchors with and without their pair
    words, it says what the loop over every word said."""
    from tfdoctor.knowledge import vocab

    pairs = vocab._pairs()
    assert pairs is not None

    def loop(line: str) -> bool:
        words = set(vocab.WORD.findall(line[:vocab.MAX_LINE]))
        return any(w in pairs and ("" in pairs[w] or not words.isdisjoint(pairs[w])) for w in words)

    rng = random.Random(4)
    seconds = list(pairs.values())
    made = [" ".join(rng.sample(sorted(pairs), 2) + sorted(rng.choice(seconds))) for _ in range(300)]
    made += [" ".join(rng.sample(sorted(pairs), 3)) for _ in range(300)]
    for line in [*_real_lines(), *made]:
        assert vocab.could_match(line) is loop(line), line
