"""The command line a newcomer types: the right target, its reason on the first line, and
one-line answers where a person cannot be asked."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from click.testing import CliRunner
from tfdoctor.cli import cli
from tfdoctor.cmdkit import target_python
from tfdoctor.exit_codes import ExitCode

TFDOCTOR = Path(sys.executable).parent / "tfdoctor"


@pytest.fixture(scope="module")
def other_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv that is not tfdoctor's own (as when tfdoctor runs from pipx or uv tool)."""
    path = tmp_path_factory.mktemp("active") / "venv"
    venv.create(path, with_pip=False, symlinks=True)
    return path


def test_active_virtual_env_is_the_default_target(other_venv: Path):
    """tfdoctor from pipx with a venv activated diagnoses that venv, not its own interpreter."""
    python, why = target_python(None, {"VIRTUAL_ENV": str(other_venv)})
    assert python == str(other_venv / "bin" / "python")
    assert "$VIRTUAL_ENV" in why and sys.executable in why


def test_conda_prefix_comes_after_virtual_env(other_venv: Path, tmp_path: Path):
    """$VIRTUAL_ENV wins over $CONDA_PREFIX; a conda env alone is chosen by $CONDA_PREFIX."""
    both = {"VIRTUAL_ENV": str(other_venv), "CONDA_PREFIX": "/nonexistent/conda"}
    assert target_python(None, both)[0] == str(other_venv / "bin" / "python")
    python, why = target_python(None, {"CONDA_PREFIX": str(other_venv)})
    assert python == str(other_venv / "bin" / "python") and "$CONDA_PREFIX" in why
    # A variable naming no interpreter is skipped, never a broken target.
    assert target_python(None, {"VIRTUAL_ENV": str(tmp_path)})[0] == sys.executable


def test_own_environment_and_explicit_python():
    """tfdoctor's own active venv is its own interpreter; --python always wins."""
    python, why = target_python(None, {"VIRTUAL_ENV": sys.prefix})
    assert python == sys.executable and "own" in why
    assert target_python(None, {})[1].startswith("tfdoctor's own interpreter")
    assert target_python(sys.executable, {"VIRTUAL_ENV": "/x"}) == (sys.executable, "--python")


def test_first_line_names_the_interpreter_and_why(other_venv: Path):
    """Every text report starts with the interpreter diagnosed and the reason it was chosen."""
    env = {**os.environ, "VIRTUAL_ENV": str(other_venv)}
    env.pop("CONDA_PREFIX", None)
    proc = subprocess.run([str(TFDOCTOR), "--quick", "--no-tui"], capture_output=True, text=True,
                          env=env, timeout=120)
    first = proc.stdout.splitlines()[0]
    assert first == (f"Diagnosing {other_venv}/bin/python (the active environment $VIRTUAL_ENV; "
                     f"tfdoctor runs from {sys.executable})"), proc.stdout[:400]
    assert proc.stdout.splitlines()[1].startswith("Verdict: ")


def test_apply_without_yes_and_without_a_terminal_is_a_usage_error():
    """`tfdoctor fix --apply` from a script: one line and exit 2, not a prompt read as Ctrl+C."""
    proc = subprocess.run([str(TFDOCTOR), "fix", "--apply", "--python", sys.executable],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == ExitCode.USAGE
    assert proc.stderr.strip().count("\n") == 0
    assert "add --yes" in proc.stderr


def test_global_python_before_fix_reaches_fix():
    """Options before the command are the command's: the dry run is for the given interpreter."""
    result = CliRunner().invoke(cli, ["--python", sys.executable, "fix", "--json"])
    assert result.exit_code == ExitCode.OK, result.output
    assert f'"python": "{sys.executable}"' in result.stdout
