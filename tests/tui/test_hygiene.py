"""Import hygiene of the TUI: textual stays inside tfdoctor/tui and loads only when used."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import tfdoctor

PACKAGE = Path(tfdoctor.__file__).parent


def _imports_textual(module: str) -> bool:
    code = f"import sys, {module}; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def test_cli_and_tui_package_do_not_import_textual() -> None:
    """`tfdoctor --json` must not pay for textual; the CLI imports run_tui only when it runs."""
    assert not _imports_textual("tfdoctor.cli")
    assert not _imports_textual("tfdoctor.tui")
    assert _imports_textual("tfdoctor.tui.app")  # the check above can tell


def test_only_the_tui_package_imports_textual() -> None:
    """The view is the only layer that knows textual exists."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "tui" in path.relative_to(PACKAGE).parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "textual" or n.startswith("textual.") for n in names):
                offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


def test_tui_files_stay_small() -> None:
    """House style: split a file before it passes 300 lines."""
    big = {p.name: n for p in (PACKAGE / "tui").rglob("*.py")
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300}
    assert big == {}
