"""literal_lines skips a literal with a character the text lacks (issue 21, item 4: triage is
linear): the same lines as a test of each line, for every trigger's literals over real tickets."""

from __future__ import annotations

from tfdoctor.triage import recognisers
from tfdoctor.triage.recognisers import _text, pip_output, tf_log
from tfdoctor.triage.recognisers._text import Trigger, literal_lines
from triage_fixtures import recorded_tickets


def test_literal_lines_finds_the_lines_holding_it():
    triggers = [getattr(m, "_TRIGGER", None) for m in (*recognisers.RECOGNISERS, pip_output, tf_log)]
    literals = {lit for t in triggers if isinstance(t, Trigger) for lit in t.literals}
    literals |= {"Zz", "\u00e9t\u00e9", "x\ty", "]"}
    assert len(literals) > 50
    found = skipped = 0
    for lines in recorded_tickets(120):
        text = "\n".join(lines)
        for literal in sorted(literals):
            want = {i for i, line in enumerate(lines) if literal in line}
            for given in (None, lines):
                got: set[int] = set()
                literal_lines(text, literal, got, given)
                assert got == want, (literal, lines[:3])
            found += bool(want)
            skipped += not set(literal) <= set(text)
    assert found > 100 and skipped > 100
    _text.forget()
