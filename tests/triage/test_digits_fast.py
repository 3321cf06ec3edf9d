"""Lines alike but for their digits are read once (issue 21, item 4: triage is linear).

textgate.digit_blind, Gate.digit_blind_on and logmap.digit_blind_on say when a line and the same
line with other digits read alike; tf_log then reads such lines once, and Gate.lines_in searches
them once. Each test compares the shared answer with the plain answer of every line.
"""

from __future__ import annotations

import random
import re

from test_gate import REAL
from tfdoctor.knowledge import catalogue, vocab
from tfdoctor.smoke import logmap
from tfdoctor.textgate import ZERO, Gate, digit_blind, folded
from tfdoctor.triage.recognisers import tf_log
from tfdoctor.triage.recognisers._text import clean
from triage_fixtures import recorded_tickets


def _other_digits(line: str, rng: random.Random) -> str:
    return re.sub(r"\d", lambda _m: rng.choice("0123456789"), line)


def _with_digits(lines: list[str]) -> list[str]:
    return [line for line in lines if re.search(r"\d", line)]


def _span(m: re.Match[str] | None) -> tuple | None:
    return None if m is None else m.regs


def test_digit_blind_reads_the_parse_tree():
    for pattern in (r"\d+", r"[0-9a-f]", r"[^,]{1,200}", r"\w+\b", r"(?i)cuda", r"[\s\S]", r"(?<!\d)x"):
        assert digit_blind(re.compile(pattern)), pattern
    for pattern in (r"[1-9]", r"so\.1", r"[^0]", r"(a)\1", r"(?=\d)5", r"(x)?(?(1)a|b)"):
        assert not digit_blind(re.compile(pattern)), pattern


def test_digit_blind_patterns_match_other_digits_at_the_same_places():
    """Every pattern digit_blind passes matches a real line and the line with other digits at
    the same places, groups included; the patterns it fails include some that do not."""
    patterns = [p for _, p in logmap.PATTERNS] + [b.regex for b in catalogue().benign]
    patterns += [logmap.LOG_LINE, logmap._STATUS, tf_log._LOG_LINE_WIDER]
    blind = [p for p in patterns if digit_blind(p)]
    assert 50 < len(blind) < len(patterns)
    rng = random.Random(4)
    lines = _with_digits(REAL)
    assert len(lines) > 500
    for line in lines:
        others = [line.translate(ZERO), _other_digits(line, rng)]
        for p in blind:
            want = _span(p.search(line))
            for other in others:
                assert _span(p.search(other)) == want, (p.pattern, line, other)


def _gates() -> list[Gate]:
    gate, _known = tf_log._causes()
    return [logmap._gate(), logmap._benign_gate(), gate.patterns, gate.both]


def test_gate_digit_blind_on_means_the_same_first_match():
    """Where Gate.digit_blind_on says so, first() finds the same pattern at the same places in
    the line with other digits (real lines, and lines of the gates' own literals with digits)."""
    rng = random.Random(8)
    made = ["libcuda.so.1: cannot open shared object file", "tensorflow:2.18-gpu-jupyter",
            "keras-nlp 0.0.0", "[WinError 1455] The paging file is too small", "HDF5 NVML_P2P 12",
            "compiled using NumPy 1.x cannot be run in NumPy 2.0.1"]
    lines = _with_digits(REAL) + made
    for gate in _gates():
        shared = 0
        for line in lines:
            zeroed = line.translate(ZERO)
            if not gate.digit_blind_on(line, zeroed):
                continue
            shared += 1
            want = gate.first(line)
            for other in (zeroed, _other_digits(line, rng), _other_digits(line, rng)):
                got = gate.first(other)
                assert (got is None) == (want is None), (line, other)
                if got is not None:
                    assert (got[0], got[1].regs) == (want[0], want[1].regs), (line, other)  # type: ignore[index]
        assert shared > len(lines) // 2
    assert not logmap._gate().digit_blind_on(made[0], made[0].translate(ZERO))


def test_tf_log_reads_lines_alike_but_for_digits_as_each_alone():
    """tf_log's _cause, which reads lines alike but for their digits once, answers for every
    line of the recorded tickets (and two copies of each with other digits) what logmap answers
    of that line alone."""
    gate, known = tf_log._causes()
    rng = random.Random(9)
    lines = []
    for ticket in recorded_tickets():
        for raw in ticket:
            line = clean(raw)
            if line and re.search(r"\d", line):
                lines += [line, _other_digits(line, rng), _other_digits(line, rng)]
    # and log lines of each template of the vocabulary whose regexes or words hold a digit
    for t in vocab.templates():
        if not digit_blind(vocab.compiled(t).full) or re.search(r"\d", t.text):
            line = "W tensorflow/core/x.cc:12] " + vocab.first_line(vocab.instance_of(t.text))
            lines += [line, line.translate(ZERO), _other_digits(line, rng), _other_digits(line, rng)]
    known.clear()
    gate.by_digits.clear()
    for line in lines:
        plain = (logmap.recognise(line) or logmap.harmless(line)) if gate.any_match(line) else None
        assert tf_log._cause(line, gate, known) == plain, line
    shared = [v for v in gate.by_digits.values() if v is not tf_log._SEEN and v is not tf_log._ALONE]
    assert len(shared) > 1000 and any(v[0] is not None for v in shared)


def _plain_lines_in(gate: Gate, lines: list[str]) -> set[int]:
    return {i for i, line in enumerate(lines)
            if (gate._exact is not None and gate._exact.search(line))
            or (gate._folded is not None and gate._folded.search(folded(line)))}


def test_lines_in_searches_lines_alike_but_for_digits_once():
    """Where keys are on most lines (or the caller says they are: dense), Gate.lines_in searches
    each line with its digits zeroed once, unless a key with a digit could be there: the same
    lines as a search of each line."""
    gate, _known = tf_log._causes()
    assert gate.both is not None and gate.both._exact_digits
    rng = random.Random(6)
    keys = sorted(k for k, icase in gate.both._by_key if not icase)
    plain = [k for k in keys if not re.search(r"\d", k)][:6]
    with_digits = [k for k in keys if re.search(r"\d", k)]
    assert with_digits
    for pool in (plain + ["x", "", "7"], plain + with_digits + ["x"]):
        lines = [" ".join(rng.choice(pool) + str(rng.randint(0, 99)) for _ in range(rng.randint(0, 3)))
                 for _ in range(6000)]
        lines += [_other_digits(line, rng) for line in lines]
        want = _plain_lines_in(gate.both, lines)
        assert len(want) > 4000
        assert gate.both.lines_in("\n".join(lines)) == want
        # searched line by line from the start (tf_log's alone gate where keys are dense)
        for g in (gate.both, gate.alone()):
            assert g is not None
            assert g.lines_in("\n".join(lines), dense=True) == _plain_lines_in(g, lines)
