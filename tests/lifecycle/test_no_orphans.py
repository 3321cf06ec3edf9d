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
