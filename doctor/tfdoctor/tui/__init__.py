"""The Textual TUI: a live view over one `Report`. Only this package imports textual.

`run_tui` is what the CLI calls on a terminal; `make_app` (tui/app.py) is the factory the CLI
and the tests share. Importing this package does not import textual: `run_tui` does, lazily.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfdoctor.diagnose import SmokeOptions
    from tfdoctor.host import Host
    from tfdoctor.registry import CheckConfig
    from tfdoctor.report import Report


def run_tui(host: Host, config: CheckConfig, smoke: SmokeOptions | None, *,
            fail_on: str = "error", keep: Callable[[Report], None] | None = None) -> int:
    """Diagnose `host` live in the TUI; return the process exit code (see exit_codes.py).

    smoke None is --quick (no TensorFlow import). `keep` receives the last report once the
    TUI has closed (e.g. to --save its facts); it is not called when no report was made.
    """
    from tfdoctor.tui.app import make_app
    from tfdoctor.tui.seams import (
        PlanApplier,
        diagnosis_loader,
        export_support_report,
        final_words,
    )

    app = make_app(diagnosis_loader(host, config, smoke), applier=PlanApplier(host),
                   exporter=export_support_report, step_limit=smoke.per_recipe if smoke else None)
    app.run()
    if keep is not None and app.report is not None:
        keep(app.report)
    report = app.report
    if app.fix_exit is not None and app.fix_exit[1] and app.error is None:
        # Quit during a fix that changed the environment: the report on screen is from before
        # it, so the verdict left in the terminal comes from a fresh static diagnosis.
        from tfdoctor.diagnose import diagnose

        report = diagnose(host, config, smoke=None)
    code, text, error = final_words(report, app.outcome, app.error, fail_on)
    if text:
        print(text, end="", flush=True)
    from tfdoctor.console import error as say_error
    from tfdoctor.console import note

    if app.fix_exit is not None:
        note(app.fix_exit[0])  # last: the state the environment is in
    if error:
        say_error(error)
    return int(code)


def run_cluster_tui(load: Callable[[], dict[str, Any]], doing: str, fail_on: str = "error",
                    stop: Callable[[], None] | None = None) -> tuple[int, dict[str, Any] | None]:
    """The cluster TUI (tui/cluster.py) over the document `load` makes; (exit code, document)."""
    from tfdoctor.tui.cluster import run_cluster_tui as run

    return run(load, doing, fail_on, stop)


__all__ = ["run_cluster_tui", "run_tui"]
