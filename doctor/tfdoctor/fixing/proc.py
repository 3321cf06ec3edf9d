"""Children of an apply: stoppable at any moment, and never outliving tfdoctor.

Every command an apply runs (pip, the fix scripts, the package listings) goes through
`run_guarded`: it runs in a process group of its own, so stopping it stops pip and whatever pip
started; a small watchdog process holds a pipe to tfdoctor and kills that group when tfdoctor
dies without saying goodbye (kill -9, power cut of the terminal), so an orphaned pip never
finishes an install on its own. SIGINT and SIGTERM during an apply set a cancel event (see
`interruptible`); the runner sees it within a fraction of a second and stops the group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from tfdoctor.host import CommandResult, track_group

WATCHDOG = (
    "import os, signal, sys\n"
    "pgid = int(sys.argv[1])\n"
    "if sys.stdin.buffer.read(1) != b'x':\n"  # end of file without goodbye: tfdoctor died
    "    try:\n"
    "        os.killpg(pgid, signal.SIGKILL)\n"
    "    except OSError:\n"
    "        pass\n"
)
TERM_GRACE = 3.0
"""Seconds pip gets after SIGTERM to leave before SIGKILL (it cleans its temp directories)."""


class Cancelled(Exception):
    """The apply was asked to stop (Ctrl+C, SIGTERM, the TUI's quit): raised at a safe point."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(f"stopped by {signal_name}")
        self.signal_name = signal_name


class CancelToken:
    """Set once, from a signal handler or another thread; remembers why."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reason = ""
        self.at_prompt = False
        """True while tfdoctor waits for a person's answer: a signal then stops at once."""

    def set(self, reason: str) -> None:
        if not self.event.is_set():
            self.reason = reason
            self.event.set()

    def is_set(self) -> bool:
        return self.event.is_set()

    def check(self) -> None:
        """Raise Cancelled at a safe point between two changes."""
        if self.event.is_set():
            raise Cancelled(self.reason)


def run_guarded(argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None,
                cancel: CancelToken | None = None, log: Path | None = None) -> CommandResult:
    """Run argv in its own process group with a watchdog; output goes to a file, not pipes.

    Cancelled when `cancel` is set while it runs (the group is stopped first: SIGTERM, then
    SIGKILL after TERM_GRACE). `log` receives the output (appended); without it a temporary file.
    """
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                    env=dict(env) if env is not None else None,
                                    start_new_session=True)
        except OSError as exc:
            return CommandResult(tuple(argv), None, "", "", error=exc.strerror or str(exc))
        track_group(proc)
        watchdog = _watchdog(proc.pid)
        try:
            code, timed_out = _wait(proc, timeout, cancel)
        finally:
            _stop_group(proc)
            track_group(proc, live=False)
            _dismiss(watchdog)
        out.seek(0)
        text = out.read().decode("utf-8", errors="replace")
    if log is not None:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(argv)}\n{text}\n")
    if cancel is not None and cancel.is_set() and code != 0:
        raise Cancelled(cancel.reason)
    return CommandResult(tuple(argv), None if timed_out else code, text, "", timed_out=timed_out)


def _wait(proc: subprocess.Popen[bytes], timeout: float,
          cancel: CancelToken | None) -> tuple[int | None, bool]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return proc.wait(0.1), False
        except subprocess.TimeoutExpired:
            pass
        if cancel is not None and cancel.is_set():
            _stop_group(proc, grace=TERM_GRACE)
            return proc.wait(), False
        if time.monotonic() > deadline:
            _stop_group(proc)
            return proc.wait(), True


def _stop_group(proc: subprocess.Popen[bytes], grace: float = 0.0) -> None:
    """SIGTERM the group, wait up to `grace`, then SIGKILL what is left of it."""
    if grace:
        _signal_group(proc.pid, signal.SIGTERM)
        end = time.monotonic() + grace
        while time.monotonic() < end and _group_alive(proc.pid):
            proc.poll()
            time.sleep(0.05)
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _watchdog(pgid: int) -> subprocess.Popen[bytes] | None:
    """A process that kills group `pgid` when its stdin reaches end of file without a goodbye."""
    try:
        return subprocess.Popen([sys.executable, "-I", "-S", "-c", WATCHDOG, str(pgid)],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:  # pragma: no cover  (no watchdog: the group is still stopped on exit paths)
        return None


def _dismiss(watchdog: subprocess.Popen[bytes] | None) -> None:
    if watchdog is None or watchdog.stdin is None:
        return
    try:
        watchdog.stdin.write(b"x")
        watchdog.stdin.close()
    except OSError:
        pass
    try:
        watchdog.wait(5)
    except subprocess.TimeoutExpired:  # pragma: no cover
        watchdog.kill()


@contextmanager
def interruptible(cancel: CancelToken, say: object = None) -> Iterator[None]:
    """While an apply runs in the main thread: SIGINT / SIGTERM set `cancel` instead of
    unwinding, so the apply stops pip and restores the backup before tfdoctor exits. `say`
    (a callable taking one line) is told what happens; later signals only repeat that line."""
    if threading.current_thread() is not threading.main_thread():
        yield  # a worker thread (the TUI): the app sets `cancel` itself
        return

    def handler(signum: int, _frame: object) -> None:
        name = signal.Signals(signum).name
        first = not cancel.is_set()
        cancel.set(name)
        if cancel.at_prompt:  # nothing is running: stop here, the apply rolls back what it did
            raise Cancelled(name)
        if callable(say):
            say(f"{name}: stopping the fix and restoring the environment; tfdoctor exits when "
                "it is back as it was" if first else
                f"{name}: still restoring the environment, please wait")

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
