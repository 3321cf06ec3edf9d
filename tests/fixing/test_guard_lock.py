"""Fast tests of the transaction parts that need no venv: pip-plan refusal, free space, the lock,
the runner's watchdog and cancel."""

from __future__ import annotations

import os
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
    start = time.monotonic()
    threading.Timer(0.5, token.set, ("SIGINT",)).start()
    with pytest.raises(Cancelled, match="SIGINT"):
        run_guarded(["sh", "-c", script], timeout=30, cancel=token)
    assert time.monotonic() - start < 10
    grandchild = int(marker.read_text())
    assert not Path(f"/proc/{grandchild}").exists() or \
        Path(f"/proc/{grandchild}/stat").read_text().split(") ", 1)[1][0] == "Z"


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
