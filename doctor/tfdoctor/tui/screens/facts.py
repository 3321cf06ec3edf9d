"""The facts view: the whole snapshot as a tree, with a search box that filters it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from tfdoctor.report import Report
from tfdoctor.tui.widgets.facts_tree import FactsTree
from tfdoctor.tui.widgets.verdict import VerdictBar


class FactsScreen(Screen[None]):
    """Everything the probes learned; type to keep only the paths and values that match."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("slash", "search", "Search"),
    ]

    def __init__(self, report: Report) -> None:
        super().__init__()
        self.data, self.known = report.facts.to_dict(), report.facts.known

    def compose(self) -> ComposeResult:
        yield VerdictBar(id="verdict")
        yield Input(placeholder="search facts (path or value), e.g. cudnn", id="facts-search")
        yield Static("", id="facts-count")
        yield FactsTree("facts", id="facts-tree")
        yield Footer()

    def on_mount(self) -> None:
        self._show("")
        self.query_one(FactsTree).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self._show(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(FactsTree).focus()

    def _show(self, query: str) -> None:
        tree = self.query_one(FactsTree)
        shown = tree.show(self.data, query, known=self.known)
        label = f"{shown} value(s) match {query!r}" if query.strip() else f"{shown} values"
        if tree.hidden:
            label += f" shown, {tree.hidden} more not shown (search to narrow)"
        self.query_one("#facts-count", Static).update(Content(label))

    def action_search(self) -> None:
        self.query_one(Input).focus()

    def action_back(self) -> None:
        search = self.query_one(Input)
        if search.has_focus and search.value:
            search.value = ""
            return
        self.app.pop_screen()
