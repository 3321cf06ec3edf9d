"""The real `tfdoctor` in a pseudo-terminal: a real diagnosis, keys, quit, and no orphans.

Every process started inherits a unique marker in its environment; after the TUI exits, no
process carrying it may remain (probe children and the smoke child run in their own sessions,
so a process-group check would miss them).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import pexpect
import pytest

LAUNCH = Path(__file__).with_name("launch.py")


def _marked(mark: str) -> list[int]:
    """Pids of live processes whose environment carries `mark` (every child inherits it)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if mark.encode() in (proc / "environ").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def _spawn(mark: str, *args: str) -> pexpect.spawn:
    """`tfdoctor ARGS` (or the launcher, when args start with it) on an 80x24 terminal."""
    env = {**os.environ, "TFDOCTOR_TEST_MARK": mark, "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    argv = list(args) if args and args[0] == str(LAUNCH) else ["-m", "tfdoctor", *args]
    return pexpect.spawn(sys.executable, argv, env=env, dimensions=(24, 80),
                         encoding="utf-8", codec_errors="replace", timeout=30)


def _gone(mark: str, within: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within
    while (left := _marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.parametrize("target", ["own", "tensorflow"])
def test_real_run_keys_and_quit_leave_no_process(target: str, request: pytest.FixtureRequest) -> None:
    """A real --quick run, for tfdoctor's own interpreter (with or without TensorFlow: the
    README's install puts it there) and for a TensorFlow venv: a verdict appears, screens open,
    q exits with the code that verdict implies, and nothing it started is left running."""
    mark = uuid.uuid4().hex
    python = () if target == "own" else ("--python", request.getfixturevalue("tf_cpu_python"))
    child = _spawn(mark, "--quick", *python)
    child.expect(r"Verdict: (healthy|\d+ problem|incomplete|could not check)")
    verdict = child.match.group(1)
    # Tab to the checks table (present whatever the verdict; findings may be empty), open one.
    for key, shown in (("\t", "Checks"), ("\r", "Check "), ("\x1b", "Checks"), ("f", "values"),
                       ("\x1b", "Checks"), ("?", "fix plan"), ("\x1b", "Checks")):
        child.send(key)
        child.expect(shown)
    child.send("q")
    # The terminal keeps the target, the verdict (and root cause) after the TUI is gone.
    child.expect(r"Diagnosing [^\r\n]+\r?\nVerdict: [^\r\n]+")
    child.expect(r"tfdoctor --no-tui prints the whole report")
    child.expect(pexpect.EOF)
    child.close()
    expected = {"healthy": 0, "incomplete": 3, "could not check": 3}.get(verdict, 1)
    assert child.exitstatus == expected, (verdict, child.exitstatus, child.signalstatus)
    assert _gone(mark) == []


@pytest.fixture
def slow_python(tmp_path: Path) -> Path:
    """An 'interpreter' that hangs, so the target probe is still running when q is pressed."""
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\nexec sleep 60\n")
    path.chmod(0o755)
    return path


def test_q_during_a_run_stops_children_and_exits_130(slow_python: Path) -> None:
    """q while a probe's child hangs: the TUI says it is stopping, waits for the child to be
    killed, exits 130, prints the partial report, and leaves no process behind."""
    mark = uuid.uuid4().hex
    child = _spawn(mark, str(LAUNCH), "--python", str(slow_python), "--timeout", "3")
    child.expect("Diagnosing")
    deadline = time.monotonic() + 10
    while not any(_cmdline(pid).startswith(str(slow_python)) or "sleep" in _cmdline(pid)
                  for pid in _marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any("sleep" in _cmdline(pid) for pid in _marked(mark)), "the hanging probe never started"
    child.send("q")
    child.expect("Stopping")
    child.expect("Verdict: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert _gone(mark) == []


def test_q_during_the_tensorflow_import_kills_the_smoke_child(tf_cpu_python: str) -> None:
    """q while the smoke child imports TensorFlow: the cancel reaches the runner, which kills
    the child's process group; tfdoctor exits 130 and nothing it started survives."""
    mark = uuid.uuid4().hex
    child = _spawn(mark, "--python", tf_cpu_python)
    child.expect("Diagnosing")
    deadline = time.monotonic() + 20
    while not any("_child.py" in _cmdline(p) for p in _marked(mark)):
        assert time.monotonic() < deadline, "the smoke child never started"
        time.sleep(0.05)
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert _gone(mark) == []


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_s_during_the_tensorflow_import_leaves_smoke_checks_not_run(tf_cpu_python: str) -> None:
    """The issue's first bug, on the real binary: s while TensorFlow imports stops the run; the
    verdict is incomplete (the smoke checks did not run; their rows are Pilot-tested in
    test_review.py), and q exits 3."""
    mark = uuid.uuid4().hex
    child = _spawn(mark, "--python", tf_cpu_python)
    child.expect("Diagnosing")
    deadline = time.monotonic() + 20
    while not any("_child.py" in _cmdline(p) for p in _marked(mark)):
        assert time.monotonic() < deadline, "the smoke child never started"
        time.sleep(0.05)
    child.send("s")
    child.expect("Verdict: incomplete")
    child.send("q")
    # Left in the terminal: the verdict counts the smoke checks that did not run.
    child.expect(r"Verdict: incomplete: no problem found, but \d+ check\(s\) could not check or "
                 r"did not run")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3
    assert _gone(mark) == []
