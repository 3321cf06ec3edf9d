"""The fix plan: review every command, apply the chosen fixes after a confirmation, see the
verdict before and after, undo. Applying goes through the app's injected applier only."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, SelectionList, Static
from textual.widgets.selection_list import Selection

from tfdoctor.findings import Finding
from tfdoctor.render_text import headline
from tfdoctor.tui.screens.confirm import ConfirmScreen
from tfdoctor.tui.state import doctor


class FixScreen(Screen[None]):
    """Fixes the doctor may apply (selectable), and root-level ones printed for a human."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("a", "apply", "Apply"),
        Binding("u", "undo", "Undo"),
    ]

    def compose(self) -> ComposeResult:
        fixable, manual = self._fixes()
        with VerticalScroll(id="fixes"):
            yield Static(Content.styled("Fixes the doctor can apply (space selects)", "bold"),
                         classes="heading")
            if fixable:
                options = (Selection(Content.assemble((fid, "bold"), f"  {f.id}"), fid)
                           for fid, f in fixable.items())
                yield SelectionList[str](*options, id="fix-select")
            else:
                yield Static("None: no finding has a fix the doctor can apply.", classes="muted")
            yield Static(self._commands(fixable, manual), id="fix-commands")
            yield Static(self._note(fixable), id="fix-note", classes="muted")
            yield Static("", id="fix-result")
        yield Footer()

    def on_mount(self) -> None:
        for name in ("report", "running"):
            self.watch(self.app, name, self._show_result, init=False)
        self._show_result()
        for selection in self.query(SelectionList):
            selection.focus()

    def _fixes(self) -> tuple[dict[str, Finding], dict[str, Finding]]:
        """fix id -> the first finding naming it; split into applicable and root-only."""
        report = doctor(self).report
        fixable: dict[str, Finding] = {}
        manual: dict[str, Finding] = {}
        for f in report.findings if report else ():
            rem = f.remediation
            if rem is None:
                continue
            (manual if rem.needs_root else fixable).setdefault(rem.fix_id, f)
        return fixable, manual

    def _commands(self, fixable: dict[str, Finding], manual: dict[str, Finding]) -> Content:
        lines: list[Content] = []
        groups = (("Commands of each fix", fixable), ("Run these yourself (need root)", manual))
        for title, group in groups:
            if not group:
                continue
            lines.append(Content.styled(f"\n{title}", "bold"))
            for fid, f in group.items():
                lines.append(Content.assemble((fid, "bold $text-accent"), f": {f.message}"))
                lines.extend(Content(f"  $ {c}") for c in f.remediation.commands)  # type: ignore[union-attr]
        return Content("\n").join(lines)

    def _note(self, fixable: dict[str, Finding]) -> str:
        if doctor(self).applier is None:
            return "\nApplying needs the fix planner, which this build lacks: run the commands " \
                "yourself."
        return "\na applies the selected fixes (after a confirmation); u undoes the last apply." \
            if fixable else ""

    def _selected(self) -> list[str]:
        found = self.query(SelectionList)
        return list(found.first().selected) if found else []

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        app = doctor(self)
        if action == "apply":
            return app.applier is not None and bool(self._fixes()[0])
        if action == "undo":
            return callable(getattr(app.applier, "undo", None))
        return True

    def action_apply(self) -> None:
        chosen = self._selected()
        if not chosen:
            self.notify("Select a fix first (space).", severity="warning")
            return
        fixable = self._fixes()[0]
        question = Content("\n").join([
            Content.styled(f"Apply {len(chosen)} fix(es)? These commands will run:", "bold"),
            *(Content(f"  $ {c}") for fid in chosen
              for c in fixable[fid].remediation.commands),  # type: ignore[union-attr]
        ])
        self.app.push_screen(ConfirmScreen(question, yes="Apply"),
                             lambda yes: doctor(self).apply_fixes(chosen) if yes else None)

    def action_undo(self) -> None:
        self.app.push_screen(ConfirmScreen(Content("Undo the last applied fixes?"), yes="Undo"),
                             lambda yes: doctor(self).undo_fixes() if yes else None)

    def _show_result(self, _value: object = None) -> None:
        app = doctor(self)
        done = app.fix_summary
        if done is None:
            return
        verb = "Undo" if done.action == "undo" else "Apply"
        parts = [Content.styled(f"\n{verb} {'failed' if done.failed else 'done'}",
                                "bold $text-error" if done.failed else "bold $text-success"),
                 Content(done.summary)]
        if app.before is not None:
            parts.append(Content.assemble(("Before: ", "bold"), headline(app.before)))
        after = "re-running the diagnosis ..." if app.running else (
            headline(app.report) if app.report else "no report")
        parts.append(Content.assemble(("After:  ", "bold"), after))
        self.query_one("#fix-result", Static).update(Content("\n").join(parts))
