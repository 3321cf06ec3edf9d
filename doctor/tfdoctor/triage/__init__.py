"""`tfdoctor triage`: diagnose what a support ticket contains (pasted logs, nvidia-smi, pip list).

Text -> recognisers -> observations -> a partial Facts document (unknown wherever the ticket
is silent) -> the same checks as a live run -> a report whose `ask_for` names the commands
that would decide what remains.
"""

from __future__ import annotations

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
    from tfdoctor.triage.lines import ticket_lines
    from tfdoctor.triage.recognisers import RECOGNISERS, _text, pip_output, prose, tf_log

    ticket = ticket_lines(texts)
    observations = [ob for module in (*RECOGNISERS, pip_output, tf_log, prose)
                    for ob in _safe(module, ticket.lines)]
    _text.forget()  # the joined text of an 8 MiB ticket: not kept past reading
    if not ticket.points:
        return observations
    return [replace(ob, line=ticket.original(ob.line)) for ob in observations]


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
