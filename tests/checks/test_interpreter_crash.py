"""A target interpreter that crashes by itself is unusable; one stopped from outside is not judged.

Issue 21: a segfaulting interpreter got `smoke-crashed` and no `python-unusable`, while `exit 137`
(a shell's report of a kill) did get it: a crash of the probe child was read as "did not finish".
The interpreter runs a child that imports only the standard library; SIGSEGV there will recur.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tfdoctor.cli import cli


def fake(tmp_path: Path, body: str) -> str:
    """An executable shell script standing in for the target interpreter."""
    path = tmp_path / "python"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def diagnose(python: str, *args: str) -> dict:
    result = CliRunner().invoke(cli, ["--json", "--no-tui", "--python", python, *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return json.loads(result.stdout)


def outcome(doc: dict, check: str) -> str:
    return next(o["status"] for o in doc["outcomes"] if o["check"] == check)


@pytest.mark.parametrize("body", ["kill -SEGV $$", "kill -ABRT $$", "kill -BUS $$", "exit 137"])
def test_an_interpreter_that_crashes_by_itself_is_unusable(tmp_path, body):
    """A segfault, an abort, a bus error (and exit 137, as before) of the stdlib-only probe child:
    python-unusable, the root cause of what follows."""
    doc = diagnose(fake(tmp_path, body), "--quick")
    ids = [f["id"] for f in doc["findings"]]
    assert "python-unusable" in ids and outcome(doc, "python-interpreter") == "failed", ids
    assert doc["verdict"]["root_cause"] == "python-unusable"


def test_a_segfault_in_the_full_run_is_unusable_and_the_smoke_crash_follows(tmp_path):
    """The full run of issue 21: the smoke child crashes too, and python-unusable is still named
    (the root cause), not smoke-crashed alone."""
    doc = diagnose(fake(tmp_path, "kill -SEGV $$"), "--budget", "30")
    ids = [f["id"] for f in doc["findings"]]
    assert "python-unusable" in ids and doc["verdict"]["root_cause"] == "python-unusable", ids


@pytest.mark.parametrize("body", ["kill -KILL $$", "kill -TERM $$"])
def test_an_interpreter_killed_from_outside_is_could_not_check(tmp_path, body):
    """SIGKILL (the OOM killer) or SIGTERM (a time limit) says nothing about the interpreter:
    could-not-check, never unusable."""
    doc = diagnose(fake(tmp_path, body), "--quick")
    assert "python-unusable" not in [f["id"] for f in doc["findings"]]
    assert outcome(doc, "python-interpreter") == "could-not-check"
