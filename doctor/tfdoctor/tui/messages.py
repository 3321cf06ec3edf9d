"""Messages the TUI's worker threads post to the app (posting is thread-safe in Textual)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class ProgressStep(Message):
    """A probe area finished (`value` None), or a smoke step began (`value` as sent)."""

    name: str
    value: float | None = None


@dataclass
class FixesDone(Message):
    """The applier (or its undo) returned: its before/after summary, or the error it raised."""

    action: str
    """apply or undo."""
    summary: str
    failed: bool = False
