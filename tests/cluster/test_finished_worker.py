"""The watcher of `tfdoctor cluster` ends when every worker has answered, not at --timeout.

Issue 21: a worker SIGSTOP'd after it had sent its results (`end`) never exits, so the watcher,
which waited for every worker to exit, waited the whole --timeout. A worker's last event is its
answer: once all have answered (or exited), a worker that has not exited gets a short grace and
is reaped. Workers here are small scripts speaking the worker protocol (one JSON event a line),
started and reaped by the real watcher; a worker stopped before its answer still times out.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from tfdoctor.children import spawn
from tfdoctor.cluster import workers as W

from tests.cluster.clusterkit import gone

SCRIPT = """
import json, os, signal, sys, time
def emit(event):
    print(json.dumps({"event": event, "pid": os.getpid()}), flush=True)
emit("hello")
if sys.argv[1] == "linger":
    time.sleep(1.0)
if sys.argv[1] == "stop-before":
    os.kill(os.getpid(), signal.SIGSTOP)
emit("end")
if sys.argv[1] == "stop-after":
    os.kill(os.getpid(), signal.SIGSTOP)
"""


def worker(tmp_path: Path, index: int, mode: str) -> W.WorkerRun:
    script = tmp_path / "worker.py"
    script.write_text(SCRIPT)
    run = W.WorkerRun(index, f"127.0.0.1:{20000 + index}", sys.executable)
    run.proc = spawn([sys.executable, str(script), mode], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run.outcome = "running"
    return run


def stopped(pid: int) -> bool:
    """The process is in the stopped state (T), as SIGSTOP leaves it."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        if state == "T":
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("first", ["exit", "linger"])
def test_a_worker_stopped_after_its_answer_does_not_hold_the_run(tmp_path, first):
    """One worker exits (at once, before the watcher has read its `end`; or a second later), the
    other is SIGSTOP'd after `end`: the watcher returns within the answered grace, not at the
    deadline nor after the grace for a dead peer; both completed (no exit status: the kill was
    ours), nothing left running."""
    runs = [worker(tmp_path, 0, first), worker(tmp_path, 1, "stop-after")]
    assert runs[1].proc is not None and stopped(runs[1].proc.pid)
    started = time.monotonic()
    result = W.watch(runs, started + 30)
    took = time.monotonic() - started
    assert result == {"timed_out": False}
    assert took < W.ANSWERED_GRACE + 5, f"{took:.1f} s: waited for the stopped worker"
    assert [(r.outcome, r.exit) for r in runs] == [("completed", None), ("completed", None)]
    assert all(gone(r.proc.pid) for r in runs if r.proc is not None)


def test_a_worker_stopped_before_its_answer_still_times_out(tmp_path):
    """Stopped before `end` it has not answered: the run waits until the deadline and names it
    hung, as before."""
    runs = [worker(tmp_path, 0, "exit"), worker(tmp_path, 1, "stop-before")]
    started = time.monotonic()
    result = W.watch(runs, started + 4)
    assert result == {"timed_out": True} and time.monotonic() - started >= 4
    assert [r.outcome for r in runs] == ["completed", "hung"]
    assert all(gone(r.proc.pid) for r in runs if r.proc is not None)
