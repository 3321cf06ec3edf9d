"""A recogniser that jumps to its trigger lines reads a ticket as one that reads every line.

Issue 21: a ticket of millions of short lines was slow because every recogniser looked at every
line. Each recogniser now names what a line must hold for it to act while idle (its `_TRIGGER`)
and says when it is busy (inside a table, a listing, a report); a trigger that missed a line it
acts on would silently lose a fact, so each test compares the jumping walk with the full one on
real tickets, whole, run together and shuffled (block boundaries then fall anywhere).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tfdoctor.triage.lines import ticket_lines
from tfdoctor.triage.recognisers import RECOGNISERS, _text, pip_output, tf_log
from tfdoctor.triage.recognisers._text import EVERY_LINE, MAX_LINE, Trigger, Walk

TESTS = Path(__file__).resolve().parents[1]
TICKETS = [p.read_text(encoding="utf-8", errors="replace")
           for p in sorted([*TESTS.glob("field/cases/*.txt"), *TESTS.glob("triage/data/*/*.txt")])]
WALKING = [m for m in (*RECOGNISERS, pip_output, tf_log) if hasattr(m, "_TRIGGER")]


def _shuffled() -> str:
    lines = "\n".join(TICKETS).splitlines()
    random.Random(21).shuffle(lines)
    return "\n".join(lines)


def _read(module: object, text: str) -> list:
    _text.forget()
    return list(module.recognise(ticket_lines([text]).lines))  # type: ignore[attr-defined]


def test_every_recogniser_but_prose_walks():
    """prose reads only the lines its claim gate finds; every other recogniser has a trigger."""
    assert len(WALKING) == len(RECOGNISERS) + 2


@pytest.mark.parametrize("module", WALKING, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_trigger_lines_lose_nothing(module, monkeypatch):
    """On every real ticket, all of them at once and their lines shuffled, the observations are
    those of a walk over every line."""
    for text in [*TICKETS, "\n".join(TICKETS), _shuffled()]:
        fast = _read(module, text)
        with monkeypatch.context() as m:
            m.setattr(module, "_TRIGGER", EVERY_LINE)
            assert _read(module, text) == fast


def test_walk_jumps_to_trigger_lines_and_reads_on_while_busy():
    """Idle, only the lines holding a trigger's text; busy, every line after one; a line over
    MAX_LINE never; `gap` says whether a readable line was passed over."""
    lines = ["a", "KEY one", "b", "x" * (MAX_LINE + 1), "c", "KEY two", "d", "e"]
    busy = {"on": False}
    walk = Walk(lines, Trigger(("KEY",)), lambda: busy["on"])
    got = []
    for number, s in walk:
        got.append((number, s, walk.gap))
        busy["on"] = s in ("KEY one", "b")  # on to "c", over the long line
    assert got == [(2, "KEY one", True), (3, "b", False), (5, "c", False), (6, "KEY two", False)]
    assert [n for n, _ in Walk(lines, Trigger(folded=("key",)))] == [2, 6]
    _text.forget()


def test_trigger_finds_literals_in_the_raw_line():
    """A literal behind a timestamp or a quote marker (which cleaning takes off) is still found,
    once per line however often the line holds it."""
    lines = ["2024-01-01 00:00:00.0: KEY", "> > KEY KEY", "none", "KEY"]
    assert Trigger(("KEY",)).lines(lines) == [0, 1, 3]
    _text.forget()


def test_a_literal_on_most_lines_is_found_line_by_line_alike():
    """Once a trigger's literal is on most lines it is looked for line by line: the same lines."""
    lines = [f"v{i}" if i % 3 else f"x{i}" for i in range(5000)] + ["x"] * 100 + ["a v"]
    text = "\n".join(lines)
    one_by_one: set[int] = set()
    _text.literal_lines(text, "v", one_by_one, lines)
    over_text: set[int] = set()
    _text.literal_lines(text, "v", over_text)
    assert one_by_one == over_text == {i for i, line in enumerate(lines) if "v" in line}
