"""The filter box of a screen's lists: / opens it, typing narrows them, Enter keeps the filter
and goes back to the list, Escape clears it and closes the box."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class ListFilter(Input):
    """Hidden (out of the focus chain) until `open`; posts Narrowed (the needle, lower case)
    as the user types."""

    DEFAULT_CSS = "ListFilter { display: none; } ListFilter.-open { display: block; }"
    BINDINGS = [Binding("escape", "clear", "Clear filter")]

    @dataclass
    class Narrowed(Message):
        needle: str

    def on_mount(self) -> None:
        self.can_focus = False  # not the screen's first focus, nor a Tab stop, while closed

    def open(self) -> None:
        self.can_focus = True
        self.add_class("-open")
        self.focus()

    def _close(self) -> None:
        self.can_focus = False
        self.remove_class("-open")

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Narrowed(event.value.strip().lower()))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.screen.focus_next()
        if not self.value:
            self._close()

    def action_clear(self) -> None:
        self.value = ""
        self.screen.focus_next()
        self._close()


def matches(needle: str, *texts: str | None) -> bool:
    """Whether any text contains the needle (case-insensitive); an empty needle matches all."""
    return not needle or any(needle in (t or "").lower() for t in texts)
