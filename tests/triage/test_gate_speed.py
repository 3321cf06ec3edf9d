"""The faster forms of the gate answer as the plain ones (issue 21, item 4: triage is linear).

Gated's compiled test is _holds' loops written out; Gate.lines_in searches the lines one by one
once keys are on most of them: each test compares the fast answer with the plain one.
"""

from __future__ import annotations

import random
import re

import pytest
from test_gate import REAL
from tfdoctor import textgate
from tfdoctor.smoke import logmap
from tfdoctor.textgate import Gate, folded, gated
from tfdoctor.triage.recognisers import prose, tf_log


def _plain_could_match(g: textgate.Gated, line: str, low: str) -> bool:
    if not textgate._holds(g.needs, line, low):
        return False
    return g.alternatives is None or any(textgate._holds(alt, line, low) for alt in g.alternatives)


def _all_gated() -> list[textgate.Gated]:
    gate, _known = tf_log._causes()
    found = [v for v in vars(prose).values() if isinstance(v, textgate.Gated)]
    found += list(gate.both.gated if gate.both is not None else gate.patterns.gated)
    return found


def test_compiled_could_match_is_the_loops_answer():
    """On every real line and on lines made of the patterns' own literals, could_match and search
    answer as the loops over needs and alternatives (and search is the bare regex's search)."""
    patterns = _all_gated()
    assert len(patterns) > 100
    rng = random.Random(21)
    pieces = [text for g in patterns for need in g.needs for text, _ in need]
    made = []
    for _ in range(2000):
        parts = [rng.choice(pieces) for _ in range(rng.randint(1, 4))]
        made.append(" ".join(p.upper() if rng.random() < 0.3 else p for p in parts))
    for line in [*REAL, *made]:
        low = folded(line)
        for g in patterns:
            assert g.could_match(line, low) is _plain_could_match(g, line, low), (g.pattern.pattern, line)
    for line in made:
        low = folded(line)
        for g in patterns:
            got, bare = g.search(line, low), g.pattern.search(line)
            assert (got.span() if got else None) == (bare.span() if bare else None), (g.pattern.pattern, line)


def test_literals_with_quotes_and_backslashes_are_written_as_literals():
    """The compiled test holds each literal as Python writes it (repr): quotes, backslashes and
    line breaks in a literal are looked for as they are."""
    for pattern in (r"it's \"here\"", r"C:\\Users\\x", "a\nb", r"(?i)Tab\there|'''"):
        g = gated(re.compile(pattern))
        for line in ("it's \"here\"", "C:\\Users\\x", "a\nb", "tab\there", "'''", "nothing"):
            low = folded(line)
            assert g.could_match(line, low) is _plain_could_match(g, line, low), (pattern, line)


def _plain_lines_in(gate: Gate, lines: list[str]) -> set[int]:
    """The lines where the gate's exact or folded trie finds a key, line by line."""
    out = set()
    for i, line in enumerate(lines):
        if (gate._exact is not None and gate._exact.search(line)) or (
                gate._folded is not None and gate._folded.search(folded(line))):
            out.add(i)
    return out


@pytest.mark.parametrize("chunk", [1 << 20, 64, 7])
def test_lines_in_line_by_line_is_the_whole_text_search(monkeypatch, chunk):
    """Where keys are on most lines, lines_in searches the rest line by line, a chunk at a time:
    the same lines as the search over the whole text, with lines longer than a chunk, empty
    lines, and an empty last line."""
    monkeypatch.setattr(textgate, "_CHUNK", chunk)
    gate = Gate(g.pattern for g in (prose._GPU_WORDS, prose._CUDA, prose._TF, prose._WSL))
    rng = random.Random(7)
    words = ["GPU", "cuda", "CUDA", "TensorFlow", "wsl", "x", "", "gpu", "CuDnN", "y" * 100]
    for ending in ("", "\n"):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 4))) for _ in range(5000)]
        text = "\n".join(lines) + ending
        want = _plain_lines_in(gate, text.split("\n"))
        assert len(want) > 2000
        assert gate.lines_in(text) == want


def test_lines_in_of_logmaps_gate_on_dense_real_lines():
    """logmap's patterns' gate over the real lines repeated (keys on most lines): line by line."""
    gate = Gate(p for _, p in logmap.PATTERNS)
    lines = [line for line in REAL if _plain_lines_in(gate, [line])] * 3 + REAL[:500]
    assert gate.lines_in("\n".join(lines)) == _plain_lines_in(gate, lines)


def test_tf_log_gate_keeps_every_line_it_would_answer():
    """tf_log's whole-text gate (anchors that need a second word kept only where vocab.could_match
    says so, once they are on many lines) keeps every line logmap could answer: real lines, and
    thousands of lines of paired anchors with and without their second words."""
    from tfdoctor.knowledge import vocab
    from tfdoctor.triage.recognisers._text import clean

    gate, _known = tf_log._causes()
    groups = vocab.anchor_groups()
    assert groups is not None and gate.alone() is not None
    _alone, paired = groups
    pairs = vocab._pairs()
    rng = random.Random(5)
    made = []
    for i in range(3 * tf_log._FEW):
        word = rng.choice(paired)
        second = sorted(pairs[word])[0] if rng.random() < 0.2 else "zzzz"
        made.append(f"2023-01-01 10:00:00.000001: {word} {i} {second}")
    for lines in (REAL, made, made + REAL):
        keyed = gate.lines_in("\n".join(lines))
        want = {i for i, line in enumerate(lines) if gate.any_match(clean(line))}
        assert want and want <= keyed


def test_noise_and_harmless_through_the_benign_gate():
    """is_noise is NOISE's search, and harmless names the first benign entry whose regex
    matches, on every real line and on each entry's own samples."""
    from tfdoctor.knowledge import catalogue

    benign = catalogue().benign
    samples = [s for b in benign for s in getattr(b, "samples", ())]
    for line in [*REAL, *samples]:
        assert logmap.is_noise(line) is bool(logmap.NOISE.search(line)), line
        first = next((b.reason for b in benign if b.regex.search(line)), None)
        got = logmap.harmless(line)
        if logmap.log_level(line) is not None and first is not None:
            assert got == (logmap.HARMLESS, first), line


def test_line_local_trigger_regexes_find_the_same_lines_one_by_one():
    """A trigger regex marked line_local finds, searched line by line once it is on most lines,
    the lines the search over the joined text finds: real lines, and dense made-up ones."""
    from tfdoctor.triage.recognisers import _text, build_info, pip_list

    rng = random.Random(3)
    made = [rng.choice(["numpy 1.2", "a  2.0.1 x", "b (3.1)", "v2 here", "x 12", " 1a", "\t9.9rc1",
                        "pkg  1.0)", "", "  ", "vv9"]) + rng.choice(["", " ", "\t"]) for _ in range(6000)]
    for trigger in (pip_list._TRIGGER, build_info._TRIGGER, _text.EVERY_LINE):
        assert trigger.line_local and trigger.regex is not None
        for lines in (REAL, made, made + REAL, REAL + made):
            text = "\n".join(lines)
            whole: set[int] = set()
            _text.regex_lines(text, trigger.regex, whole)
            each: set[int] = set()
            _text.regex_lines(text, trigger.regex, each, lines)
            assert each == whole
