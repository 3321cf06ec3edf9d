"""Children of an apply: stoppable at any moment, and never outliving tfdoctor.

Every command an apply runs (pip, the fix scripts, the package listings) goes through
`run_guarded`: it is a tracked child (children.spawn), so stopping it stops pip and whatever pip
started, even what left pip's process group; a small watchdog process holds a pipe to tfdoctor
and kills that group and every process carrying the child's token when tfdoctor dies without
saying goodbye (kill -9, power cut of the terminal), so an orphaned pip never finishes an
install on its own. SIGINT and SIGTERM during an apply set a cancel event (see
`interruptible`); the runner sees it within a fraction of a second and stops the group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO

from tfdoctor.children import dismiss, reap, spawn, wait_exited, watchdog
from tfdoctor.host import CommandResult

TERM_GRACE = 3.0
"""Seconds pip gets after SIGTERM to leave before SIGKILL (it cleans its temp directories)."""

OnLine = Callable[[str], None]
"""Told each line of a command's output as the command writes it (without its newline)."""
ON_LINE: ContextVar[OnLine | None] = ContextVar("tfdoctor_on_line", default=None)
"""The line callback of run_guarded calls that pass none: set around an apply in the thread that
runs it (the TUI shows pip's output live without every layer between passing it down)."""
LINE_LIMIT = 500
"""Characters of one line passed on (a package listing's JSON is one very long line)."""


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
                cancel: CancelToken | None = None, log: Path | None = None,
                on_line: OnLine | None = None) -> CommandResult:
    """Run argv in its own process group with a watchdog; output goes to a file, not pipes.

    Cancelled when `cancel` is set while it runs (the group is stopped first: SIGTERM, then
    SIGKILL after TERM_GRACE). `log` receives the output (appended); without it a temporary file.
    `on_line` (else ON_LINE's) is told each output line while the command runs, read back from
    that file every tenth of a second in this thread.
    """
    tell = on_line or ON_LINE.get()
    if tell is not None:  # Python children (pip) write to a file in blocks unless told not to
        env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    with tempfile.TemporaryFile() as out:
        try:
            proc = spawn(argv, stdout=out, stderr=out, env=env)
        except OSError as exc:
            return CommandResult(tuple(argv), None, "", "", error=exc.strerror or str(exc))
        guard = watchdog(proc)
        follow = _Follow(out, tell) if tell is not None else None
        try:
            code, timed_out, stopped = _wait(proc, timeout, cancel, follow)
        finally:
            reap(proc)  # what the command left behind
            dismiss(guard)
            if follow is not None:
                follow(final=True)
        out.seek(0)
        text = out.read().decode("utf-8", errors="replace")
    if log is not None:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(argv)}\n{text}\n")
    if stopped and cancel is not None:
        raise Cancelled(cancel.reason)
    return CommandResult(tuple(argv), None if timed_out else code, text, "", timed_out=timed_out)


class _Follow:
    """Reads what a command has written to its output file since the last call (pread: the
    file's offset is left alone) and tells each complete line; the rest waits for its newline."""

    def __init__(self, out: IO[bytes], tell: OnLine) -> None:
        self.fd, self.tell, self.offset, self.partial = out.fileno(), tell, 0, b""

    def __call__(self, final: bool = False) -> None:
        while chunk := os.pread(self.fd, 65536, self.offset):
            self.offset += len(chunk)
            *lines, self.partial = (self.partial + chunk).split(b"\n")
            for line in lines:
                self._tell(line)
        if final and self.partial:
            self._tell(self.partial)
            self.partial = b""

    def _tell(self, line: bytes) -> None:
        try:
            self.tell(line.decode("utf-8", errors="replace").rstrip("\r")[:LINE_LIMIT])
        except Exception:  # noqa: BLE001  (a broken viewer never breaks the apply it watches)
            self.tell = _ignore


def _ignore(_line: str) -> None:
    """What a line callback that raised is replaced with."""


def _wait(proc: subprocess.Popen[bytes], timeout: float, cancel: CancelToken | None,
          follow: _Follow | None = None) -> tuple[int | None, bool, bool]:
    """(exit code, timed out, stopped because `cancel` was set). A command stopped for a cancel
    is cancelled whatever its exit code: a shell whose child the stop killed first may exit 0
    (`wait` returns 0) before its own SIGTERM arrives."""
    deadline = time.monotonic() + timeout
    while True:
        if follow is not None:
            follow()
        if wait_exited(proc, 0.1):
            reap(proc)
            return proc.returncode, False, False
        if cancel is not None and cancel.is_set():
            if proc.poll() is not None:  # it finished on its own before the stop
                reap(proc)
                return proc.returncode, False, False
            reap(proc, grace=TERM_GRACE)
            return proc.returncode, False, True
        if time.monotonic() > deadline:
            reap(proc)
            return proc.returncode, True, False


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
