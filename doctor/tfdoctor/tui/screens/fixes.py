"""The fix plan, the CLI's own: the same planner, the same step text (fixing/render.py), the same
apply. Steps tfdoctor applies are selectable; manual ones are commands for a person and are never
"applied". One apply at a time; undo only when there is something to undo; after either, the
diagnosis re-runs and the plan comes with its report (made off the UI thread: fixrun.py)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, SelectionList, Static
from textual.widgets.selection_list import Selection

from tfdoctor.render_text import headline
from tfdoctor.tui.fixview import (
    causes,
    installed_changes,
    numbers,
    once,
    progress_lines,
    styled_step,
    tags,
    version_changes,
)
from tfdoctor.tui.keys import LIST_KEYS
from tfdoctor.tui.screens.confirm import ConfirmScreen
from tfdoctor.tui.state import doctor
from tfdoctor.tui.widgets.verdict import VerdictBar

if TYPE_CHECKING:
    from tfdoctor.fixing.model import FixPlan, FixStep


class StepList(SelectionList[str]):
    """The steps tfdoctor applies: Space selects, j/k move."""

    BINDINGS = LIST_KEYS


class FixScreen(Screen[None]):
    """Fixes tfdoctor applies (selectable, with commands and diffs) and manual ones to copy."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("a", "apply", "Apply"),
        Binding("u", "undo", "Undo"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.plan: FixPlan | None = None
        self.plan_error: str | None = None
        self.previews: dict[int, Any] = {}
        self.undoable = False
        self.waiting = False  # no plan for the report yet: a worker makes it, then recompose

    def _take_plan(self) -> None:
        """The plan a worker made for the app's report (not yet: one is asked to make it)."""
        app = doctor(self)
        self.plan, self.plan_error, self.previews, self.waiting = None, None, {}, False
        if app.report is None:
            return
        made = app.plan_of(app.report)
        if made is None:
            self.waiting = True
            app.plan_in_worker(app.report)
            return
        self.plan, self.plan_error = made

    def compose(self) -> ComposeResult:
        self._take_plan()
        plan = self.plan
        yield VerdictBar(id="verdict")
        with VerticalScroll(id="fixes"):
            yield Static(self._heading(), classes="heading", id="fix-heading")
            auto = [(i, s) for i, s in enumerate(plan.steps) if s.automatic] if plan else []
            manual = [(i, s) for i, s in enumerate(plan.steps) if not s.automatic] if plan else []
            if auto:
                yield Static(Content.styled("Applied by tfdoctor (space selects, a applies)",
                                            "bold"))
                yield StepList(*(Selection(Content.assemble(
                    (s.fix_id, "bold"), f"  [{tags(s)}]  fixes: {', '.join(causes(s))}"), s.fix_id)
                    for _i, s in auto), id="fix-select")
                yield Static(self._steps_text(auto), id="fix-commands")
            elif plan is not None:
                yield Static("None: no step of this plan can be applied by tfdoctor.",
                             classes="muted")
            if manual:
                yield Static(Content.styled("\nManual: run these yourself (tfdoctor never "
                                            "applies them)", "bold"))
                yield Static(self._steps_text(manual), id="fix-manual")
            yield Static(self._note(), id="fix-note", classes="muted")
            yield Static("", id="fix-progress")
            yield Static("", id="fix-result")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(0.5, self._tick)
        self.watch(self.app, "report", self._report_changed, init=False)
        self.watch(self.app, "plans_made", self._report_changed, init=False)
        self.watch(self.app, "running", self._show_result, init=False)
        self._after_change()
        for selection in self.query(SelectionList):
            selection.focus()

    def _after_change(self) -> None:
        self._refresh_undoable()
        self._show_result()
        self._load_previews()

    async def _report_changed(self, _value: object = None) -> None:
        """After an apply or undo the diagnosis re-ran (or a late plan came): show the plan."""
        await self.recompose()
        self._after_change()
        for selection in self.query(SelectionList):
            selection.focus()

    def _heading(self) -> Content:
        plan = self.plan
        if self.waiting:
            return Content.styled("Making the fix plan ...", "bold")
        if self.plan_error:
            return Content.styled(f"Cannot make the fix plan: {self.plan_error}", "bold $text-error")
        if plan is None:
            return Content.styled("No report yet.", "bold")
        if not plan.steps:
            return Content.styled(f"Nothing to fix for {plan.python}.", "bold")
        auto = sum(s.automatic for s in plan.steps)
        return Content.styled(f"Fix plan for {plan.python} ({plan.env_kind}): {len(plan.steps)} "
                              f"step(s), {auto} tfdoctor can apply, {len(plan.steps) - auto} "
                              "for a person", "bold")

    def _steps_text(self, steps: list[tuple[int, FixStep]]) -> Content:
        """The CLI's step text, numbered in the order shown, each cause once, and a pip step's
        versions (installed now -> what it installs)."""
        from tfdoctor.fixing.render import render_step

        report, shown = doctor(self).report, numbers(self.plan) if self.plan else {}
        installed = report.facts.python.packages if report else {}
        texts: list[Content] = []
        for i, s in steps:
            text = render_step(shown.get(i, i + 1), once(s), self.previews.get(i))
            changes = version_changes(s, installed)
            texts.append(styled_step(text + "".join(f"   version: {c}\n" for c in changes)))
        return Content("\n").join(texts)

    def _note(self) -> str:
        if doctor(self).applier is None:
            return "\nThis build cannot apply fixes: run the commands yourself."
        return "\na applies the selected steps after a confirmation that shows their commands " \
            "and diffs; u undoes the last apply; q during an apply waits for the rollback."

    @work(thread=True, exclusive=True, group="fix-previews", exit_on_error=False)
    def _load_previews(self) -> None:
        """The diff of every file a step would write (its script run on scratch copies)."""
        from tfdoctor.fixing.preview import preview_files

        plan = self.plan
        if plan is None:
            return
        previews = {}
        for i, step in enumerate(plan.steps):
            if step.files:
                try:
                    previews[i] = preview_files(step)
                except Exception:  # noqa: BLE001, S112  (no diff to show: the commands still are)
                    continue
        self.app.call_from_thread(self._show_previews, plan, previews)

    def _show_previews(self, plan: FixPlan, previews: dict[int, Any]) -> None:
        if plan is not self.plan or not previews:
            return
        self.previews = previews
        steps = list(enumerate(plan.steps))
        for widget_id, automatic in (("#fix-commands", True), ("#fix-manual", False)):
            for widget in self.query(widget_id).results(Static):
                widget.update(self._steps_text([(i, s) for i, s in steps
                                                if s.automatic == automatic]))

    @work(thread=True, exclusive=True, group="fix-undoable", exit_on_error=False)
    def _refresh_undoable(self) -> None:
        """Whether there is an apply to undo: the applier reads its journals, off the UI thread."""
        applier, plan = doctor(self).applier, self.plan
        check = getattr(applier, "undoable", None)
        undoable = bool(plan and callable(check) and check(plan.prefix))
        self.app.call_from_thread(self._set_undoable, undoable)

    def _set_undoable(self, undoable: bool) -> None:
        self.undoable = undoable
        self.refresh_bindings()

    def _selected(self) -> list[str]:
        found = self.query(SelectionList)
        return list(found.first().selected) if found else []

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        app = doctor(self)
        idle = app.fixing is None and not app.running
        if action == "back":
            return True if app.fixing is None else None
        if action == "apply":
            can = app.applier is not None and bool(self.plan and any(
                s.automatic for s in self.plan.steps))
            return (True if idle else None) if can else False
        if action == "undo":
            return (True if idle else None) if self.undoable else False
        return True

    def action_back(self) -> None:
        """Back to the main screen, never while an apply or undo runs (its result is here)."""
        if doctor(self).fixing is None:
            self.app.pop_screen()

    def action_apply(self) -> None:
        app, plan = doctor(self), self.plan
        if app.fixing is not None or plan is None:
            return
        chosen = self._selected()
        if not chosen:
            self.notify("Select a step first (space).", severity="warning")
            return
        steps = [(i, s) for i, s in enumerate(plan.steps) if s.fix_id in chosen and s.automatic]
        question = Content("\n").join([
            Content.styled(f"Apply {len(steps)} step(s)? tfdoctor will run exactly this:", "bold"),
            self._steps_text(steps)])
        self.app.push_screen(ConfirmScreen(question, yes="Apply"),
                             lambda yes: self._apply(plan, chosen) if yes else None)

    def _apply(self, plan: FixPlan, chosen: list[str]) -> None:
        doctor(self).apply_fixes(plan, chosen)
        self._show_progress()

    def action_undo(self) -> None:
        if not self.undoable or self.plan is None:
            return
        prefix = self.plan.prefix
        self.app.push_screen(ConfirmScreen(Content(f"Undo the last apply in {prefix}?"),
                                           yes="Undo"),
                             lambda yes: self._undo(prefix) if yes else None)

    def _undo(self, prefix: str) -> None:
        doctor(self).undo_fixes(prefix)
        self._show_progress()

    def _tick(self) -> None:
        if doctor(self).fixing is not None:
            self._show_progress()

    def _show_progress(self) -> None:
        """While an apply or undo runs: what it is doing, for how long, and the applier's
        latest output (pip's, framed as pip frames a child's); the last result is cleared."""
        app = doctor(self)
        action = app.fixing
        self.refresh_bindings()
        if action is None:
            return
        elapsed = time.monotonic() - app.fix_started
        parts = [Content.styled(
            f"\n{'Applying' if action == 'apply' else 'Undoing'} ... {elapsed:.0f} s (keys are "
            "disabled; q waits for the environment to be restored)", "bold $text-warning")]
        parts += progress_lines(app.fix_status, list(app.fix_lines))
        # query, not query_one: the screen may be recomposing (the plan refreshed) right now.
        for widget in self.query("#fix-progress").results(Static):
            widget.update(Content("\n").join(parts))
        for widget in self.query("#fix-result").results(Static):
            widget.update("")

    def _show_result(self, _value: object = None) -> None:
        """The result of the operation that finished last (cleared when the next one starts):
        its summary, the verdict before and after, and the packages whose version changed."""
        app = doctor(self)
        self.refresh_bindings()
        if app.fixing is not None:
            self._show_progress()
            return
        for widget in self.query("#fix-progress").results(Static):
            widget.update("")
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
        if app.before is not None and app.report is not None and not app.running:
            parts += [Content(f"Changed: {c}") for c in installed_changes(
                app.before.facts.python.packages, app.report.facts.python.packages)]
        for widget in self.query("#fix-result").results(Static):
            widget.update(Content("\n").join(parts))
