"""A lazy Walk (its trigger looked through a window of lines at a time, from the next line to
read) reads what a walk over the trigger's hits in the whole text reads (issue 21)."""

from __future__ import annotations

import random
import re

import pytest
from tfdoctor.triage.recognisers import _text
from tfdoctor.triage.recognisers._text import MAX_LINE, Trigger, Walk

TRIGGERS = [
    Trigger(("key", "=")),
    Trigger(("key",), ("lower",), re.compile(r"\d+x"), line_local=True),
    Trigger(regex=re.compile(r"[^\S\n]v\d"), line_local=True),
    _text.EVERY_LINE,
]
PIECES = ["plain", "key here", "a=b", "LOWER case", "12x", " v1", "BEGIN", "x" * (MAX_LINE + 1), "", "  "]


def _walk(lines: list[str], trigger: Trigger, lazy: bool, skips: dict[int, int]) -> list[tuple[int, str]]:
    """What a recogniser busy for three lines after "BEGIN" reads, skipping ahead where told."""
    state = {"left": 0}
    walk = Walk(lines, trigger, lambda: state["left"] > 0, lazy=lazy)
    read = []
    try:
        for number, line in walk:
            read.append((number, line))
            state["left"] = 3 if line == "BEGIN" else max(0, state["left"] - 1)
            if number in skips and state["left"]:
                walk.skip_to(min(len(lines), number + skips[number]))
    finally:
        _text.forget()
    return read


@pytest.mark.parametrize("seed", range(8))
def test_lazy_walk_reads_what_the_whole_text_walk_reads(seed):
    rng = random.Random(seed)
    for trigger in TRIGGERS:
        lines = [rng.choice(PIECES) for _ in range(rng.choice([10, 5000, 30000]))]
        skips = {n: rng.randrange(1, 50) for n in rng.sample(range(1, len(lines) + 1), min(20, len(lines)))}
        assert _walk(lines, trigger, True, skips) == _walk(lines, trigger, False, skips)
