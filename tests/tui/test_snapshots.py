"""SVG snapshots of the main screens at 80x24, 120x40 and 200x60 (update: pytest
--snapshot-update).

Reviewed by eye when updated; a diff means the look changed, on purpose or not.
"""

from __future__ import annotations

import pytest
from helpers import healthy, judge
from tfdoctor.tui.app import make_app

from tui.kit import (
    FakeApplier,
    Loader,
    pin_and_root_report,
    problems_report,
    root_only_report,
    settle,
)

SMALL, LARGE, WIDE = (80, 24), (120, 40), (200, 60)


def _keys(*keys: str):  # type: ignore[no-untyped-def]
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        if keys:
            await pilot.press(*keys)
            await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", [SMALL, LARGE, WIDE], ids=["80x24", "120x40", "200x60"])
def test_main_with_problems(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    """The verdict names the root cause; findings above the checks, the passed ones folded;
    footer keys fit; at 200 columns the root cause's detail beside the lists."""
    assert snap_compare(make_app(Loader(problems_report())), terminal_size=size, run_before=_keys())


def test_main_healthy(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """A healthy machine: the verdict bar in the success colour, no findings."""
    assert snap_compare(make_app(Loader(judge(healthy()))), terminal_size=SMALL, run_before=_keys())


def test_main_while_running(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """First paint: the verdict bar says what runs, areas land, every check is pending."""
    loader = Loader(judge(healthy()), block=True)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        for _ in range(100):
            if loader.entered.is_set():
                break
            await pilot.pause(0.02)
        await pilot.pause()

    assert snap_compare(make_app(loader), terminal_size=SMALL, run_before=run_before)


def test_checks_unfolded(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """Enter on the folded row: every passed and not-applicable check under it."""
    app = make_app(Loader(problems_report()))
    assert snap_compare(app, terminal_size=LARGE, run_before=_keys("tab", "down", "down", "enter"))


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_detail(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    """A finding's detail: message, evidence, hint, root-only commands, links, facts."""
    app = make_app(Loader(root_only_report()))
    assert snap_compare(app, terminal_size=size, run_before=_keys("enter"))


def test_facts(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """The facts tree with its search box."""
    app = make_app(Loader(problems_report()))
    assert snap_compare(app, terminal_size=LARGE, run_before=_keys("f"))


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_fix_plan(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    """The fix plan: selectable steps, manual ones, and every command they run."""
    app = make_app(Loader(pin_and_root_report()), applier=FakeApplier())
    assert snap_compare(app, terminal_size=size, run_before=_keys("x", "space"))
