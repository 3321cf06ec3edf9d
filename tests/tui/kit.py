"""Reports, fakes and Pilot helpers for the TUI tests; reports come from the real checks."""

from __future__ import annotations

import asyncio
import html
import re
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from helpers import change, healthy, judge
from tfdoctor.facts import ProbeIssue
from tfdoctor.registry import CheckSpec, run_check
from tfdoctor.report import Report
from tfdoctor.tui.app import DoctorApp

if TYPE_CHECKING:
    from textual.pilot import Pilot


def problems_report() -> Report:
    """Two errors with fixes the doctor may apply (a numpy pin, an env var), root cause first."""
    facts = healthy()
    return judge(change(facts, env={"CUDA_VISIBLE_DEVICES": "-1"},
                        python={"packages": {**facts.python.packages, "numpy": "1.21.0"}}))


def pin_and_root_report() -> Report:
    """A numpy pin tfdoctor applies and a driver fix for a person (root): both kinds of step,
    and no step whose command names this checkout's path (stable snapshots)."""
    facts = healthy()
    return judge(change(facts, python={"packages": {**facts.python.packages, "numpy": "1.21.0"}},
                        driver={"nvml_error": "NVML_ERROR_DRIVER_NOT_LOADED",
                                "nvidia_module_loaded": False, "gpus": ()}))


def root_only_report() -> Report:
    """The driver is not loaded: the fix needs root, so the doctor only prints it."""
    return judge(change(healthy(), driver={"nvml_error": "NVML_ERROR_DRIVER_NOT_LOADED",
                                           "nvidia_module_loaded": False, "gpus": ()}))


def crashed_report() -> Report:
    """A probe that timed out and a check that raised, each through the real runner."""
    report = judge(replace(healthy(), probe_issues=(
        ProbeIssue("xla", "timeout", "ptxas --version took longer than 10 s"),)))

    def broken(facts: object, config: object) -> Iterator[object]:
        raise KeyError("sm_90a")

    spec = CheckSpec("tf-compute-table", "Compute capability table", "tensorflow", broken,
                     (), None)
    crashed = run_check(spec, report.facts, report.config)
    return replace(report, outcomes=(*report.outcomes, crashed),
                   findings=(*report.findings, *crashed.findings))


class Loader:
    """A load_report that serves reports in turn, records calls, and can block until released."""

    def __init__(self, *reports: Report, areas: tuple[str, ...] = ("driver", "platform"),
                 block: bool = False) -> None:
        self.reports, self.areas, self.calls = list(reports), areas, 0
        self.release = threading.Event()
        self.entered = threading.Event()
        self.saw_cancel = False
        self.thread: threading.Thread | None = None
        if not block:
            self.release.set()

    def __call__(self, progress: Callable[..., None], cancel: threading.Event) -> Report:
        self.calls += 1
        self.thread = threading.current_thread()
        for name in self.areas:
            progress(name)
        self.entered.set()
        while not self.release.is_set():
            if cancel.wait(0.02):
                self.saw_cancel = True
                break
        return self.reports[min(self.calls, len(self.reports)) - 1]


class FakeApplier:
    """Plans with the real planner, applies nothing: records the steps it was asked to apply,
    says what it would have changed, and can undo what it "applied"."""

    def __init__(self) -> None:
        self.applied: list[list[str]] = []
        self.undone = 0
        self.stopped = False

    def plan(self, report: Report):  # type: ignore[no-untyped-def]
        from tfdoctor.fixing.planner import plan_fixes

        return plan_fixes(report)

    def __call__(self, plan: object, fix_ids: list[str]) -> str:
        self.applied.append(list(fix_ids))
        return "numpy: 1.21.0 -> 2.1.3"

    def stop(self) -> None:
        self.stopped = True

    def undoable(self, prefix: str) -> bool:
        return len(self.applied) > self.undone

    def undo(self, prefix: str) -> str:
        self.undone += 1
        return "numpy: 2.1.3 -> 1.21.0"


Scenario = Callable[["Pilot[None]"], Awaitable[None]]


def drive(app: DoctorApp, scenario: Scenario, size: tuple[int, int] = (80, 24)) -> None:
    """Run the app headless under Pilot and play `scenario` against it."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await scenario(pilot)

    asyncio.run(main())


async def settle(pilot: Pilot[None]) -> None:
    """Wait until the diagnosis (and any fix) worker is done and the screen has caught up."""
    for _ in range(2):
        await _workers_done(pilot)
        await pilot.pause()


async def _workers_done(pilot: Pilot[None]) -> None:
    """wait_for_complete, where a worker that failed or was cancelled counts as done: whether
    Textual raises its WorkerFailed depends on a race (a worker already gone is not awaited), and
    the tests of a failing loader assert its error on screen instead. A screen's worker that
    dismisses its own screen (the save dialog, once the file is written) is cancelled with the
    screen, as Textual cancels a screen's workers when it is removed: the tests assert what it
    wrote."""
    from textual.worker import WorkerCancelled, WorkerFailed

    try:
        await pilot.app.workers.wait_for_complete()
    except (WorkerFailed, WorkerCancelled):
        pass


def screen_text(app: DoctorApp) -> str:
    """Everything visible on the screen, as plain text (from the SVG screenshot)."""
    rows: dict[int, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text [^>]*x="([\d.]+)" [^>]*-line-(\d+)\)">(.*?)</text>',
                         app.export_screenshot()):
        text = html.unescape(m[3]).replace("\xa0", " ")
        rows.setdefault(int(m[2]), []).append((float(m[1]), text))
    lines = []
    for n in sorted(rows):
        line = ""
        for x, text in sorted(rows[n]):
            line = line.ljust(round(x / 12.2)) + text
        lines.append(line.rstrip())
    return "\n".join(lines)
