"""One diagnosis, as the CLI and the TUI both run it: probe and smoke side by side, then judge."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tfdoctor.host import Host, quiet_thread
from tfdoctor.registry import CheckConfig

if TYPE_CHECKING:  # loaded in diagnose(), after the smoke child has started
    from tfdoctor.facts import Facts
    from tfdoctor.report import Report

Progress = Callable[[str], None]
SmokeProgress = Callable[[str, float], None]


@dataclass(frozen=True, slots=True)
class SmokeOptions:
    """What smoke work to run; `None` in `diagnose` means --quick (no TensorFlow import)."""

    only: tuple[str, ...] | None = None
    budget: float = 300.0
    per_recipe: float = 120.0


def diagnose(host: Host, config: CheckConfig = CheckConfig(), *, smoke: SmokeOptions | None = None,
             progress: Progress | None = None, smoke_progress: SmokeProgress | None = None,
             cancel: threading.Event | None = None) -> Report:
    """Collect facts on `host` and judge them; never raises for machine problems.

    With smoke options, the smoke child starts first, before the probes, the checks and the
    facts are even imported, and the static probes run while it imports TensorFlow, so a full
    run costs little more than the import and the work.
    """
    if smoke is None:
        from tfdoctor.probes import collect_facts
        from tfdoctor.report import build_report

        return build_report(_chosen(host, collect_facts(host, progress)), config)
    from tfdoctor.smoke.runner import start_smoke

    cancel = cancel or threading.Event()
    pool = ThreadPoolExecutor(max_workers=1, initializer=quiet_thread)
    try:
        finish = start_smoke(host, only=smoke.only, budget=smoke.budget,
                             per_recipe=smoke.per_recipe, progress=smoke_progress, cancel=cancel)
        running = pool.submit(finish)
        from tfdoctor.probes import collect_facts

        facts = collect_facts(host, progress, tf_loader=True)
        smoke_facts = running.result()
    except BaseException:
        cancel.set()  # Ctrl+C, SIGTERM: stop the smoke child now, not at its time limit
        raise
    finally:
        pool.shutdown(wait=False)
    from tfdoctor.report import build_report

    return build_report(replace(_chosen(host, facts), smoke=smoke_facts), config)


def _chosen(host: Host, facts: Facts) -> Facts:
    """Record why this interpreter is the target (the report's first line says it)."""
    if host.python_why is None:
        return facts
    return replace(facts, python=replace(facts.python, chosen_by=host.python_why))
