"""Export: save the report to a file only its owner can read (the real TUI's exporter writes the
redacted support report, Markdown with its JSON beside it), in a worker, asking before replacing
either file."""

from __future__ import annotations

from pathlib import Path

from tfdoctor.report import Report
from tfdoctor.tui.screens.save import SaveScreen
from tfdoctor.tui.seams import Exporter

DEFAULT_NAME = "tfdoctor-report.json"
"""The default file of an exporter that writes one JSON document (tests, export_json)."""
SUPPORT_NAME = "tfdoctor-report.md"
"""The default of the support report's exporter: it writes tfdoctor-report.json beside it."""


def default_name(exporter: Exporter) -> str:
    return SUPPORT_NAME if getattr(exporter, "__name__", "") == "export_support_report" \
        else DEFAULT_NAME


class ExportScreen(SaveScreen):
    """Asks for a path, writes through the app's exporter, dismisses with the path written."""

    INPUT_ID = "export-path"

    def __init__(self, report: Report, exporter: Exporter) -> None:
        super().__init__("Export the report", default_name(exporter),
                         lambda path: exporter(report, path),
                         "It names paths, GPUs and package versions: share it with care.")
        self.report = report

    def targets(self, path: Path) -> list[Path]:
        """A Markdown support report has its JSON beside it: both are asked about."""
        return [path, path.with_suffix(".json")] if path.suffix == ".md" else [path]
