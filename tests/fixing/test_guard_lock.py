"""Fast tests of the transaction parts that need no venv: pip-plan refusal, free space, the lock,
the runner's watchdog and cancel."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tfdoctor.errors import FixError
from tfdoctor.fixing import guard
from tfdoctor.fixing.lock import Busy, env_lock, holder
from tfdoctor.fixing.proc import Cancelled, CancelToken, run_guarded

HAVE = {"tensorflow-cpu": "2.21.0", "numpy": "2.4.6", "protobuf": "5.29.5", "keras": "3.15.1"}


def test_a_second_tensorflow_distribution_is_refused():
    """tf-keras pulling `tensorflow` into a tensorflow-cpu venv: the issue's own example."""
    why = guard.worse_reason(("tf-keras~=2.21.0",), set(),
                             [("tf-keras", "2.21.0"), ("tensorflow", "2.21.0")], HAVE)
    assert why is not None and "tensorflow 2.21.0 beside tensorflow-cpu" in why


def test_moving_a_package_the_step_does_not_name_is_refused():
    """A protobuf pin that would also change numpy moves a package nobody asked to move."""
    why = guard.worse_reason(("protobuf<8,>=6.31.1",), set(),
                             [("protobuf", "7.36.2"), ("numpy", "1.26.4")], HAVE)
    assert why is not None and "numpy 2.4.6 -> 1.26.4" in why


@pytest.mark.parametrize(("args", "planned"), [
    (("protobuf<8,>=6.31.1",), [("protobuf", "7.36.2")]),
    (("--force-reinstall", "--no-deps", "tensorflow-cpu==2.21.0"), [("tensorflow-cpu", "2.21.0")]),
    (("tensorflow-cpu==2.21.0",), [("tensorflow-cpu", "2.21.0"), ("numpy", "2.1.0")]),
])
def test_what_the_step_names_may_move(args, planned):
    """The step's own packages, a reinstall of the kept TF, and TF's own requirements when the
    step installs TensorFlow are not "worse"."""
    assert guard.worse_reason(args, set(), planned, HAVE) is None


def test_not_enough_space_is_an_error_before_anything(tmp_path: Path):
    """A backup larger than the free space is refused with both sizes."""
    with pytest.raises(FixError, match="not enough free space"):
        guard.check_space(1 << 60, 0, tmp_path, str(tmp_path))
    guard.check_space(1, 1, tmp_path / "not" / "yet", str(tmp_path))


def test_lock_refuses_a_second_holder_and_names_the_first(state_dir: Path):
    """Inside one process a second flock on a new descriptor conflicts too: the refusal names
    the holder; after release nobody holds it."""
    with env_lock("/some/venv", "tfdoctor fix --apply"):
        assert "tfdoctor fix --apply (pid " in (holder("/some/venv") or "")
        with pytest.raises(Busy, match="another fix is running in /some/venv: tfdoctor fix --apply"):
            with env_lock("/some/venv", "the tfdoctor TUI's apply"):
                pass
    assert holder("/some/venv") is None


def test_cancel_stops_the_whole_group(tmp_path: Path):
    """A cancelled command's process group (a grandchild included) is gone when Cancelled is
    raised."""
    marker = tmp_path / "pid"
    token = CancelToken()
    script = f"sleep 60 & echo $! > {marker}; wait"
    cancelled_at: list[float] = []

    def cancel_once_started() -> None:
        # not on a timer: on a loaded machine sh may not have written the pid yet
        end = time.monotonic() + 20
        while time.monotonic() < end and not (marker.exists() and marker.read_text().strip()):
            time.sleep(0.02)
        cancelled_at.append(time.monotonic())
        token.set("SIGINT")

    threading.Thread(target=cancel_once_started, daemon=True).start()
    with pytest.raises(Cancelled, match="SIGINT"):
        run_guarded(["sh", "-c", script], timeout=30, cancel=token)
    assert time.monotonic() - cancelled_at[0] < 10
    grandchild = int(marker.read_text())
    assert not Path(f"/proc/{grandchild}").exists() or \
        Path(f"/proc/{grandchild}/stat").read_text().split(") ", 1)[1][0] == "Z"


def test_a_command_stopped_for_a_cancel_is_cancelled_even_when_it_exits_0(tmp_path: Path):
    """A shell whose child the stop kills first returns from `wait` with 0 and may exit 0 before
    its own SIGTERM lands (a CI run failed on that race): it was still stopped, not finished.
    Here the shell ignores SIGTERM, so it always exits 0 once its child is gone."""
    marker = tmp_path / "pid"
    token = CancelToken()
    script = f"trap '' TERM; sleep 60 & echo $! > {marker}; wait; exit 0"

    def cancel_once_started() -> None:
        end = time.monotonic() + 20
        while time.monotonic() < end and not (marker.exists() and marker.read_text().strip()):
            time.sleep(0.02)
        token.set("SIGTERM")

    threading.Thread(target=cancel_once_started, daemon=True).start()
    with pytest.raises(Cancelled, match="SIGTERM"):
        run_guarded(["sh", "-c", script], timeout=30, cancel=token)
    # a command that finished on its own before anyone cancelled is not
    done = CancelToken()
    result = run_guarded(["sh", "-c", "exit 0"], timeout=30, cancel=done)
    done.set("late")
    assert result.returncode == 0


def test_the_watchdog_kills_pip_when_tfdoctor_is_killed(tmp_path: Path):
    """kill -9 of the process that ran the command: its watchdog kills the command's group."""
    marker = tmp_path / "pid"
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from tfdoctor.fixing.proc import "
            "run_guarded; run_guarded(['sh', '-c', 'echo $$ > ' + sys.argv[2] + '; sleep 60'], "
            "timeout=60)")
    package = str(Path(__import__("tfdoctor").__file__).parents[1])
    parent = subprocess.Popen([sys.executable, "-c", code, package, str(marker)])
    end = time.monotonic() + 20
    while not marker.exists() or not marker.read_text().strip():
        assert time.monotonic() < end
        time.sleep(0.05)
    child = int(marker.read_text())
    parent.kill()
    parent.wait()
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise AssertionError("the command outlived the killed parent")


CONTENDER = r"""
import os, sys, time
from tfdoctor.fixing.lock import Busy, env_lock
prefix, log, go = sys.argv[1:4]
while not os.path.exists(go):
    time.sleep(0.001)
for _ in range(20):
    try:
        with env_lock(prefix, "contender"):
            with open(log, "a") as f:
                f.write(f"in {os.getpid()}\n")
            time.sleep(0.01)
            with open(log, "a") as f:
                f.write(f"out {os.getpid()}\n")
    except Busy:
        pass
"""


def test_contenders_on_a_stale_lock_never_hold_it_together(tmp_path: Path):
    """Eight processes race for an environment whose lock file names a dead pid of this host,
    twenty times each: the takeover and the link happen under flock, so the log of who is
    inside never shows two at once, someone always gets in, and no lock file is left."""
    from tfdoctor.fixing.lock import LOCK_NAME, _boot_id

    prefix = tmp_path / "venv"
    prefix.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    (prefix / LOCK_NAME).write_text(
        json.dumps({"pid": dead.pid, "host": socket.gethostname(), "boot_id": _boot_id()}))
    log, go = tmp_path / "log", tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", CONTENDER, str(prefix), str(log), str(go)])
             for _ in range(8)]
    time.sleep(1.0)  # let them all import and wait at the line
    go.touch()
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    events = log.read_text().split("\n")[:-1]
    assert events and len(events) % 2 == 0
    for i in range(0, len(events), 2):  # strictly in, out, in, out: never two inside
        assert events[i].startswith("in ") and events[i + 1] == "out" + events[i][2:], events
    assert list(prefix.iterdir()) == []
