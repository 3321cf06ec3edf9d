"""The real `tfdoctor cluster` in a pseudo-terminal: the command opens the cluster screen on a
terminal (like `tfdoctor`), q closes it, and the verdict stays on stdout with its exit code."""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import pexpect
import pytest

RECORDED = Path(__file__).resolve().parents[1] / "cluster" / "fixtures" / "cluster-straggler.json"


def _spawn(*args: str, mark: str = "") -> pexpect.spawn:
    env = {**os.environ, "TERM": "xterm-256color", "TFDOCTOR_TEST_MARK": mark}
    return pexpect.spawn(sys.executable, ["-m", "tfdoctor", "cluster", *args], env=env,
                         dimensions=(40, 120), encoding="utf-8", codec_errors="replace", timeout=30)


def test_replay_on_a_terminal_opens_the_screen_and_q_leaves_the_verdict() -> None:
    """--replay on a TTY shows the screen (the straggler row), q exits 0 (healthy) and the
    verdict line is left behind."""
    child = _spawn("--replay", str(RECORDED))
    child.expect("straggler")
    child.expect("Cluster findings")
    child.send("q")
    child.expect(r"Cluster verdict: healthy \(1 warning\(s\)\)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_no_tui_on_a_terminal_prints_text() -> None:
    """--no-tui on a TTY: the plain text report, no screen."""
    child = _spawn("--replay", str(RECORDED), "--no-tui")
    child.expect(pexpect.EOF)
    child.close()
    out = child.before or ""
    assert child.exitstatus == 0 and out.startswith("Cluster verdict: healthy")
    assert "\x1b[?1049h" not in out  # never switched to the alternate screen


def _marked(mark: str, running: bytes = b"") -> list[int]:
    """Live processes whose environment carries `mark` (every child inherits it) and whose
    command line contains `running`."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if (proc.name.isdigit() and mark.encode() in (proc / "environ").read_bytes()
                    and running in (proc / "cmdline").read_bytes()):
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


@pytest.mark.slow
def test_q_during_a_live_run_kills_every_worker(tf_cpu_python) -> None:
    """A real 2-worker local job on the screen: q while it runs exits 130 at once and leaves no
    worker process (each runs in its own session, so they are found by an inherited marker)."""
    mark = uuid.uuid4().hex
    child = _spawn("--workers", "2", "--python", tf_cpu_python, mark=mark)
    child.expect("Running")
    deadline = time.monotonic() + 60
    while len(_marked(mark, b"_worker.py")) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(_marked(mark, b"_worker.py")) == 2
    child.send("q")
    # Never a silent 130 (issue 22): the terminal is told what was stopped.
    child.expect("cluster: interrupted: the job's workers were stopped")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    deadline = time.monotonic() + 5
    while _marked(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _marked(mark) == []
