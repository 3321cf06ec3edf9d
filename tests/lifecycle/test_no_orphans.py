"""No child outlives tfdoctor: not on SIGTERM, not on Ctrl+C, not even when tfdoctor is SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

HANG = textwrap.dedent("""\
    #!/bin/sh
    # A target "python" whose probe and smoke children hang (like a library stuck in a driver call).
    exec sleep 120
    """)


def marked(mark: str) -> list[int]:
    """Pids of live processes whose environment carries `mark`."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark.encode() in (entry / "environ").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def wait_gone(mark: str, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = marked(mark)
        if not left:
            return []
        time.sleep(0.1)
    return marked(mark)


def start(tmp_path: Path, argv: list[str], mark: str) -> subprocess.Popen[bytes]:
    exe = Path(sys.executable).parent / "tfdoctor"
    env = {**os.environ, "TFDOCTOR_TEST_MARK": mark, "NO_COLOR": "1"}
    return subprocess.Popen([str(exe), *argv], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_kills_every_child(tmp_path, sig, code):
    """SIGTERM (Slurm, Kubernetes, timeout(1)) and Ctrl+C end tfdoctor at once, children too."""
    fake = tmp_path / "python"
    fake.write_text(HANG)
    fake.chmod(0o755)
    mark = f"tfdoctor-test-{uuid.uuid4()}"
    proc = start(tmp_path, ["--no-tui", "--budget", "100", "--python", str(fake)], mark)
    deadline = time.monotonic() + 10
    while len(marked(mark)) < 3 and time.monotonic() < deadline:  # tfdoctor + hanging children
        time.sleep(0.1)
    assert len(marked(mark)) >= 3
    started = time.monotonic()
    proc.send_signal(sig)
    assert proc.wait(timeout=10) == code
    assert time.monotonic() - started < 5
    assert wait_gone(mark, 5) == []


def test_smoke_child_exits_when_tfdoctor_is_killed(tmp_path, tf_cpu_python):
    """SIGKILL cannot be caught: the smoke child notices its parent is gone and exits itself."""
    mark = f"tfdoctor-test-{uuid.uuid4()}"
    proc = start(tmp_path, ["--no-tui", "--json", "--python", tf_cpu_python], mark)
    deadline = time.monotonic() + 10
    while not any(p != proc.pid for p in marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # let the smoke child get into its TensorFlow import
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert wait_gone(mark, 10) == []


STUCK = textwrap.dedent("""\
    import os, re, sys, threading
    # the smoke child's own exit-with-parent watch (smoke/_child.py), then one call that holds the
    # interpreter's lock for minutes, as the dlopen of TensorFlow's libraries holds it for seconds
    def watch():
        while os.read(0, 4096):
            pass
        os._exit(3)
    threading.Thread(target=watch, daemon=True).start()
    open(sys.argv[1], "w").write(str(os.getpid()))
    re.match(r"(a|aa)*c", "a" * 64)
    """)


def test_a_smoke_child_holding_its_interpreter_lock_dies_with_tfdoctor(tmp_path: Path) -> None:
    """A child whose main thread holds the interpreter's lock never runs its EOF watch thread:
    only the watchdog process (children.watchdog) kills it when tfdoctor is SIGKILLed. (A CI run
    failed test_smoke_child_exits_when_tfdoctor_is_killed on a loaded machine: the child was still
    in TensorFlow's import 10 seconds after tfdoctor died.)"""
    stuck, pidfile = tmp_path / "stuck.py", tmp_path / "pid"
    stuck.write_text(STUCK)
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} {stuck} {pidfile}\n")
    fake.chmod(0o755)
    package = str(Path(__import__("tfdoctor").__file__).parents[1])
    code = ("import sys, time; sys.path.insert(0, sys.argv[1]); from tfdoctor.host import Host; "
            "from tfdoctor.smoke.runner import start_smoke; "
            "start_smoke(Host(python=sys.argv[2]), budget=300, per_recipe=300); time.sleep(300)")
    parent = subprocess.Popen([sys.executable, "-c", code, package, str(fake)])
    try:
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text()):
            assert time.monotonic() < deadline, "the smoke child did not start"
            time.sleep(0.05)
        child = int(pidfile.read_text())
        time.sleep(0.3)  # into its long call
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        time.sleep(0.05)
    os.kill(child, signal.SIGKILL)
    raise AssertionError("the smoke child outlived the killed tfdoctor")
