"""One diagnosis, as the CLI and the TUI both run it: probe, (smoke,) judge."""

from __future__ import annotations

from collections.abc import Callable

from tfdoctor.host import Host
from tfdoctor.registry import CheckConfig
from tfdoctor.report import Report, build_report

Progress = Callable[[str], None]


def diagnose(host: Host, config: CheckConfig = CheckConfig(), *, quick: bool = True,
             progress: Progress | None = None) -> Report:
    """Collect facts on `host` and judge them; never raises for machine problems."""
    from tfdoctor.probes import collect_facts

    facts = collect_facts(host, progress)
    return build_report(facts, config)
