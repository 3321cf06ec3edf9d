"""`tfdoctor triage`: diagnose what a support ticket contains (pasted logs, nvidia-smi, pip list).

Text -> recognisers -> observations -> a partial Facts document (unknown wherever the ticket
is silent) -> the same checks as a live run -> a report whose `ask_for` names the commands
that would decide what remains.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

# Imported here, before `def observe`, so the function (not the submodule) is the package's
# `observe`; the module is a light dataclass and a table.
from tfdoctor.triage.observe import Observation

if TYPE_CHECKING:  # `tfdoctor --help` imports this package: the facts model stays unloaded
    from tfdoctor.facts import Facts


def observe(texts: Sequence[str]) -> list[Observation]:
    """Every observation of every recogniser, in recogniser order (tool output before prose)."""
    from tfdoctor.triage.lines import ticket_lines, unwrap
    from tfdoctor.triage.recognisers import RECOGNISERS, _text, pip_output, prose, tf_log

    ticket = ticket_lines(texts)
    lines, starts = unwrap(ticket.lines)
    lines = _without_wishes(lines)
    observations = [ob for module in (*RECOGNISERS, pip_output, tf_log, prose)
                    for ob in _safe(module, lines)]
    _text.forget()  # the joined text of an 8 MiB ticket: not kept past reading
    if starts is not None:  # a wrapped line's number is its first line's
        observations = [replace(ob, line=starts[ob.line - 1] + 1) for ob in observations]
    if not ticket.points:
        return observations
    return [replace(ob, line=ticket.original(ob.line)) for ob in observations]


# The heading on a line of its own ("**Describe the expected behavior**", "### Expected output"): an
# inline label ("Expected Behavior: TensorFlow should list the GPUs") is a wish of that line only.
_WISH = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*|\*\*)?(?:describe[ \t]+(?:the[ \t]+)?)?expected[ \t]+"
                   r"(?:behaviou?r|output|results?)[ \t]*[?:]?[ \t]*(?:\*\*)?[ \t]*:?[ \t]*$",
                   re.IGNORECASE | re.MULTILINE)
_WISH_WORDS = re.compile(r"xpected[ \t]+(?:behaviou?r|output|result)", re.IGNORECASE)
# What ends the section: the next heading, a label line ("Actual Behavior:", "Error Logs:"), or the
# current / actual behaviour said inline
_HEADING = re.compile(r"[ \t]*(?:#{1,6}[ \t]+\S|\*\*[^*]{2,80}\*\*[ \t]*:?[ \t]*$"
                      r"|[\w ]{0,30}\b(?:behaviou?r|logs?|output|steps|reproduce|code|environment|information"
                      r"|info|context|screenshots?|versions?)[ \t]*:[ \t]*$"
                      r"|(?:actual|current|observed)[ \t]+(?:behaviou?r|output|results?)\b)", re.IGNORECASE)
_COMMAND = re.compile(r"[ \t]*(?:\$[ \t]|>>>|python3?[ \t]+-c\b|!?pip3?[ \t]+install\b)")
WISH_LINES = 60
"""At most this many lines of an expected-behaviour section are set aside (a template's section is
a few lines; a heading that is not one ends it sooner)."""


def _without_wishes(lines: list[str]) -> list[str]:
    """The lines with each issue template's "expected behavior" section blanked (its heading kept):
    what the user wishes TensorFlow printed ("[PhysicalDevice(... device_type='GPU')]") is not what
    it printed. A code block there is a wish only where the words before announce it ("should look
    like this:"); one that is not (nvidia-smi pasted under the heading), a command or the next
    heading ends the section. Blanked, not removed, so every line keeps its number."""
    from tfdoctor.triage.recognisers._text import _ticket

    text = _ticket(lines)[0]
    if _WISH_WORDS.search(text) is None:  # (one scan for the words: trying _WISH at each of four
        return lines                      # million line starts cost 0.3 s)
    hits = [m.start() for m in _WISH.finditer(text)]
    if not hits:
        return lines
    kept = list(lines)
    at, before, done = 0, 0, 0  # a position in text, the line breaks before it, the lines passed
    for start in hits:
        before += text.count("\n", at, start)  # counted from the last hit on: linear in the text
        at = start
        number = before + 1  # the line after the heading
        if number <= done:
            continue  # a heading inside a section already set aside
        end = min(number + WISH_LINES, len(kept))
        said = ""  # the last words before a code block
        while number < end:
            line = kept[number]
            if _HEADING.match(line) or _WISH.match(line) or _COMMAND.match(line):
                break
            if line.lstrip().startswith("```"):
                if not said.rstrip().endswith(":"):
                    break
                close = next((n for n in range(number + 1, end) if kept[n].lstrip().startswith("```")),
                             end - 1)
                for n in range(number, close + 1):
                    kept[n] = ""
                number, said = close + 1, ""
                continue
            if line.strip():
                said = line
            kept[number] = ""
            number += 1
        done = number
    return kept


def _safe(module: object, lines: list[str]) -> Iterator[Observation]:
    """A recogniser that raises loses its own observations, never the others' (reported by tests)."""
    try:
        yield from module.recognise(lines)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001  (a broken recogniser must not hide the ticket)
        return


def triage_facts(texts: Sequence[str], collected_at: str | None = None) -> tuple[Facts, list[Observation]]:
    """The partial facts of a ticket and the observations they came from."""
    from tfdoctor.triage.assemble import assemble

    observations = observe(texts)
    stamp = collected_at or datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    return assemble(observations, stamp), observations
