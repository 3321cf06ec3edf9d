"""The one door to the machine: environment, commands with time limits, and the file system.

Probes take a `Host`; tests build one over a temporary root, an environment of their own and
stub libraries, so probes run their real code against a fake machine.
"""

from __future__ import annotations

import _thread
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tfdoctor import children
from tfdoctor.children import STOP_SIGNALS, exited, nudge, reap, spawn, wait_exited
from tfdoctor.children import kill_all_children as kill_all_children  # the CLI's door to it


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a child process did. `returncode` is negative for a signal, None after a time-out."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str | None = None
    """Set when the command could not start (e.g. "No such file or directory")."""
    truncated: tuple[str, ...] = ()
    """The streams ("stdout", "stderr") that printed more than run_command keeps."""
    output_bytes: int = 0
    """How many bytes the child printed on both streams, kept or not."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def signal_name(self) -> str | None:
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"

    def describe_failure(self) -> str:
        """One line: why this command did not succeed."""
        if self.error:
            return f"could not start {self.argv[0]}: {self.error}"
        if self.timed_out:
            return "timed out"
        if self.signal_name:
            return f"killed by {self.signal_name}"
        return f"exited with status {self.returncode}"


MAX_OUTPUT = 8 * 1024 * 1024
"""Bytes kept of each of a child's streams (the last ones: the JSON answer and the evidence are
at the end); a child that prints more is cut, and `CommandResult.truncated` says so."""
EXIT_GRACE = 1.0
"""After the child exits, how long its output pipes may stay open (a grandchild still writing)
before whoever holds them is stopped and the pipes are closed."""




def quiet_thread() -> None:
    """Run first in every thread the main thread starts: SIGINT and SIGTERM are left to the
    main thread. The kernel hands a process's signal to any thread that does not block it, and
    Python runs handlers only in the main thread; a signal taken by a probe thread left the main
    thread asleep in Future.result() until the probe's time limit (SIGTERM ignored for 10 s).
    Threads these threads start inherit the mask."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


_EXIT_GO = _thread.allocate_lock()
"""Held until a signal arrives; the signal handler releases it and the watchdog wakes."""
_EXIT_GO.acquire()
_EXIT_CODE: list[int] = []
_WATCHDOG_STARTED = False


def start_exit_watchdog(seconds: float = 0.8) -> None:
    """Start, before any signal can come, the thread that ends tfdoctor `seconds` after
    `arm_exit_watchdog`, even if unwinding is stuck (a probe thread the interpreter would join).

    It is started here, not in the signal handler: starting a thread takes threading's own
    lock, and a handler that runs while the main thread holds that lock (starting a probe
    thread) waited for it forever; SIGTERM then hung tfdoctor instead of ending it.
    """
    global _WATCHDOG_STARTED
    if _WATCHDOG_STARTED:
        return
    _WATCHDOG_STARTED = True

    def expire() -> None:
        quiet_thread()
        _EXIT_GO.acquire()
        time.sleep(seconds)
        children.kill_all(lock_timeout=0.1)  # a child spawned while the main thread unwound
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001  (a closed or broken stream: exit anyway)
                pass
        os._exit(_EXIT_CODE[0])

    threading.Thread(target=expire, name="tfdoctor-exit-watchdog", daemon=True).start()


def arm_exit_watchdog(code: int) -> None:
    """From a signal handler: exit with `code` within a second, whatever the main thread meets.
    Takes no Python lock (a raw lock's release), so a second signal cannot deadlock it either."""
    if not _EXIT_CODE:
        _EXIT_CODE.append(code)
    try:
        _EXIT_GO.release()
    except RuntimeError:  # armed already
        pass


class _Stream:
    """The last `cap` bytes of one output pipe, and how many bytes came in all."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > 2 * self.cap:  # trim in batches: amortised linear
            del self.data[: len(self.data) - self.cap]

    def text(self) -> str:
        return bytes(self.data[-self.cap:]).decode("utf-8", errors="replace")


def run_command(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    cwd: str | None = None,
    max_output: int = MAX_OUTPUT,
) -> CommandResult:
    """Run argv as a tracked child (children.spawn); never waits past `timeout` (plus about a
    second), and returns only once the child and everything it started are gone.

    On time-out the child, its group and every descendant (by token or by our pipe) are
    stopped; reads are bounded in time and in bytes (`max_output` per stream, the last kept).
    """
    try:
        proc = spawn(argv, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    except OSError as exc:
        return CommandResult(tuple(argv), None, "", "", error=exc.strerror or str(exc))
    try:
        out, err, timed_out = _collect(proc, input, timeout, max_output)
    except BaseException:
        reap(proc, grace=0.0)
        raise
    finally:
        reap(proc)  # whatever the child left behind: a daemon that redirected its output too
        for f in (proc.stdout, proc.stderr, proc.stdin):
            if f is not None:
                f.close()
    truncated = tuple(name for name, s in (("stdout", out), ("stderr", err)) if s.total > s.cap)
    return CommandResult(tuple(argv), None if timed_out else proc.returncode, out.text(),
                         err.text(), timed_out=timed_out, truncated=truncated,
                         output_bytes=out.total + err.total)


def _collect(proc: subprocess.Popen[bytes], input: str | None, timeout: float,
             cap: int) -> tuple[_Stream, _Stream, bool]:
    """Read both pipes until end-of-file, the child's exit plus EXIT_GRACE, or the deadline."""
    assert proc.stdout is not None and proc.stderr is not None
    streams = {proc.stdout.fileno(): _Stream(cap), proc.stderr.fileno(): _Stream(cap)}
    out, err = streams[proc.stdout.fileno()], streams[proc.stderr.fileno()]
    sel = selectors.DefaultSelector()
    for fd in streams:
        sel.register(fd, selectors.EVENT_READ)
    pending = (input or "").encode()
    stdin_fd = proc.stdin.fileno() if proc.stdin is not None else -1
    if proc.stdin is not None:
        os.set_blocking(stdin_fd, False)
        sel.register(stdin_fd, selectors.EVENT_WRITE)
    start = time.monotonic()
    deadline, timed_out, exited_at = start + timeout, False, None
    while sel.get_map():
        now = time.monotonic()
        if exited_at is None and exited(proc):
            exited_at = now
            nudge(proc)  # what it left behind; reap ends what does not listen
        if exited_at is not None and now > exited_at + EXIT_GRACE:
            reap(proc)  # a descendant that escaped with our pipe: the child itself is done
            _drain(sel, streams, 0.2)
            break
        if now >= deadline:
            timed_out = not exited(proc)
            reap(proc)
            _drain(sel, streams, 0.5)
            break
        limit = min(deadline, exited_at + EXIT_GRACE) if exited_at is not None else deadline
        for key, _ in sel.select(timeout=max(0.0, min(limit - now, 0.2))):
            fd = int(key.fd)
            if fd == stdin_fd:
                pending = _feed(sel, proc, pending)
                continue
            chunk = os.read(fd, 65536)
            if chunk:
                streams[fd].add(chunk)
            else:
                sel.unregister(fd)
    sel.close()
    # Both pipes closed early by a child that still runs: it keeps the rest of its time.
    if not wait_exited(proc, max(0.0, deadline - time.monotonic())):
        timed_out = True
    return out, err, timed_out


def _feed(sel: selectors.BaseSelector, proc: subprocess.Popen[bytes], pending: bytes) -> bytes:
    assert proc.stdin is not None
    try:
        pending = pending[os.write(proc.stdin.fileno(), pending[:65536]):]
    except (BrokenPipeError, BlockingIOError) as exc:
        pending = b"" if isinstance(exc, BrokenPipeError) else pending
    if not pending:
        sel.unregister(proc.stdin.fileno())
        proc.stdin.close()
    return pending


def _drain(sel: selectors.BaseSelector, streams: dict[int, _Stream], seconds: float) -> None:
    """What is already in the pipes, for at most `seconds`: the holders are dead or dying."""
    end = time.monotonic() + seconds
    while sel.get_map() and time.monotonic() < end:
        ready = sel.select(timeout=max(0.0, end - time.monotonic()))
        if not ready:
            break
        for key, _ in ready:
            fd = int(key.fd)
            if fd not in streams:
                sel.unregister(fd)
                continue
            chunk = os.read(fd, 65536)
            if chunk:
                streams[fd].add(chunk)
            else:
                sel.unregister(fd)


def host_from_environment(python: str, python_why: str | None = None) -> Host:
    """The real machine. TFDOCTOR_FS_ROOT (a test seam, documented in docs/scenarios.md) moves
    /proc, /dev and the default library directories under another root."""
    return Host(env=dict(os.environ), root=Path(os.environ.get("TFDOCTOR_FS_ROOT", "/")),
                python=python, python_why=python_why)


@dataclass(frozen=True)
class Host:
    """The machine being diagnosed, as seen by probes."""

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    root: Path = Path("/")
    """File-system root for /proc, /dev, /etc and default library dirs (a temp dir in tests)."""
    python: str = sys.executable
    """The target interpreter whose TensorFlow is diagnosed (--python)."""
    own_python: str = sys.executable
    """tfdoctor's own interpreter, which has nvidia-ml-py for the NVML child."""
    python_why: str | None = None
    """Why `python` is the target (--python, the active $VIRTUAL_ENV, ...): the report's first line."""
    timeout: float = 10.0
    """Default time limit for one probe command."""

    def path(self, absolute: str) -> Path:
        """A machine path (e.g. "/proc/modules") under this host's root."""
        return self.root / absolute.lstrip("/")

    def read_text(self, absolute: str) -> str | None:
        """File contents, or None when missing or unreadable."""
        try:
            return self.path(absolute).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def run(self, argv: Sequence[str], *, timeout: float | None = None,
            extra_env: Mapping[str, str] | None = None, input: str | None = None) -> CommandResult:
        limit = timeout or self.timeout
        env = dict(self.env)
        env["TFDOCTOR_CHILD_DEADLINE"] = str(int(limit) + 5)  # our own probe children obey it
        if extra_env:
            env.update(extra_env)
        return run_command(argv, timeout=limit, env=env, input=input)

    def which(self, name: str) -> str | None:
        """Resolve a command on this host's PATH."""
        for d in self.env.get("PATH", "").split(os.pathsep):
            if d and os.access(os.path.join(d, name), os.X_OK) and not os.path.isdir(os.path.join(d, name)):
                return os.path.join(d, name)
        return None
