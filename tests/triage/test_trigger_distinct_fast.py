"""A trigger searches a ticket that repeats its lines once per distinct line (issue 21, item 4:
triage is linear): the same lines as a search of each line."""

from __future__ import annotations

from tfdoctor.textgate import folded
from tfdoctor.triage import recognisers
from tfdoctor.triage.recognisers import _text, pip_output, tf_log
from tfdoctor.triage.recognisers._text import EVERY_LINE, MAX_LINE, Trigger
from triage_fixtures import recorded_tickets


def _triggers() -> list[Trigger]:
    found = [getattr(m, "_TRIGGER", None) for m in (*recognisers.RECOGNISERS, pip_output, tf_log)]
    return [t for t in found if isinstance(t, Trigger)] + [EVERY_LINE, Trigger(folded=("nvidia-smi", "gpu"))]


def _each_line(trigger: Trigger, lines: list[str]) -> list[int]:
    """The lines (not over MAX_LINE) that hold a literal, a folded literal or a regex match."""
    out = []
    for i, line in enumerate(lines):
        if len(line) > MAX_LINE:
            continue
        if (any(lit in line for lit in trigger.literals) or any(lit in folded(line) for lit in trigger.folded)
                or (trigger.regex is not None and trigger.regex.search(line))):
            out.append(i)
    return out


def test_triggers_over_distinct_lines_find_what_each_line_holds():
    tickets = recorded_tickets()
    long = ["NVIDIA-SMI Driver Version " + "x" * MAX_LINE, "pad " * 3000]
    every = [line for ticket in tickets for line in ticket]
    lines = every * 2 + long + every[:5000]
    _text.forget()
    try:
        assert _text._distinct(lines) is not None  # (the search over distinct lines is the one tested)
        used = 0
        for trigger in _triggers():
            if trigger.regex is not None and not trigger.line_local:
                continue
            got = [i for i in trigger.lines(lines) if len(lines[i]) <= MAX_LINE]
            assert got == _each_line(trigger, lines), trigger
            used += bool(got)
        assert used > 10
    finally:
        _text.forget()
