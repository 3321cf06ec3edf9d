"""The lines over MAX_LINE, found a block of the joined text at a time (issue 21, item 4: triage
is linear): the same lines as the length of each line says."""

from __future__ import annotations

import random

from tfdoctor.triage.recognisers import _text
from tfdoctor.triage.recognisers._text import MAX_LINE, _long_lines


def _plain(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if len(line) > MAX_LINE]


def test_long_lines_as_each_length_says():
    rng = random.Random(11)
    lengths = [0, 1, 50, MAX_LINE // 2 - 1, MAX_LINE // 2, MAX_LINE - 1, MAX_LINE, MAX_LINE + 1,
               MAX_LINE + 2, 2 * MAX_LINE, 3 * MAX_LINE + 7]
    cases = [[], [""]] + [["x" * n] for n in lengths]
    for _ in range(300):
        cases.append(["y" * rng.choice(lengths) for _ in range(rng.randint(1, 6))])
    # a line holding line breaks: its length counts, not the pieces between them
    cases.append(["a" * 100, ("b" * 5000 + "\n") * 5, "c"])
    cases.append([("b" * 9999 + "\n") * 3])
    found_long = 0
    for lines in cases:
        want = _plain(lines)
        found_long += bool(want)
        assert _long_lines(lines, "\n".join(lines)) == want, [len(x) for x in lines]
    assert found_long > 100


def test_ticket_text_blanks_the_long_lines():
    lines = ["short", "z" * (MAX_LINE + 1), "end"]
    _text.forget()
    assert _text.ticket_text(lines) == "short\n\nend"
    _text.forget()
