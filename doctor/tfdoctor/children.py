"""Every child tfdoctor starts, and how it ends: `spawn` and `reap`, nothing else.

A child starts in a session of its own, with SIGINT and SIGTERM unblocked (tfdoctor's probe
threads block them, and a mask survives fork and exec), and with a token of its own in its
environment (TFDOCTOR_RUN_TOKEN). `reap` then stops it with everything it started, found by
three marks: its process group, the token (inherited by every descendant, kept across setsid
and exec) and its pipes (whoever holds one). Each gets SIGTERM, and SIGKILL after a grace
period. A daemon that calls setsid, redirects its output and ignores SIGTERM is reaped all the
same. Only processes whose /proc entries tfdoctor may read are looked at (the same user's, or
any for root), and a token is random, so no one else's process matches.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

TOKEN_VAR = "TFDOCTOR_RUN_TOKEN"
"""Holds the tokens of the tfdoctor children a process descends from, separated by spaces."""
TERM_GRACE = 0.5
"""Seconds between SIGTERM and SIGKILL when a child (or what it left behind) is stopped."""
KILL_WAIT = 1.0
"""Seconds to wait for the kernel to finish SIGKILLed processes before calling them survivors."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_RUN = os.urandom(6).hex()
_count = 0
_LIVE: dict[int, tuple[subprocess.Popen[Any], str, frozenset[int]]] = {}
"""pid (the child's process group) -> (the child, its token, the inodes of its pipes)."""
_LOCK = threading.RLock()  # re-entrant: the signal handler takes it on the main thread
_SPAWN = threading.Lock()
"""Held while a child is started: no other child is forked while the parent still holds this
one's pipe ends. A sibling forked then kept copies of the write ends until its exec, was taken
for a writer when this child exited (`nudge`, `reap`), and was stopped: a probe of the target
interpreter "killed by SIGTERM" on a loaded machine (CI, stop 23)."""
_CLOSING = False
"""Set by kill_all_children: tfdoctor is exiting, and a child spawned after that (a probe
thread's spawn in flight when the signal came) is killed at once, not left behind."""


def _unblock_stop_signals() -> None:
    """Run in the child between fork and exec: one sigprocmask, no lock taken, nothing imported."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: int | IO[Any] | None = subprocess.DEVNULL,
    stdout: int | IO[Any] | None = subprocess.DEVNULL,
    stderr: int | IO[Any] | None = subprocess.DEVNULL,
    cwd: str | None = None,
    text: bool = False,
) -> subprocess.Popen[Any]:
    """Start argv as a tracked child (raises OSError as Popen does); `reap` it when done."""
    global _count
    with _LOCK:
        _count += 1
        token = f"{_RUN}-{_count}"
    child_env = dict(os.environ if env is None else env)
    child_env[TOKEN_VAR] = f"{child_env.get(TOKEN_VAR, '')} {token}".strip()
    with _SPAWN:  # Popen returns once the child has exec'd and the parent closed its ends
        proc = subprocess.Popen(
            list(argv), stdin=stdin, stdout=stdout, stderr=stderr, env=child_env, cwd=cwd,
            start_new_session=True, preexec_fn=_unblock_stop_signals,
            text=text, errors="replace" if text else None,
        )
    _register(proc, token, _pipe_inodes(proc.stdout, proc.stderr))
    return proc


def exited(proc: subprocess.Popen[Any]) -> bool:
    """Whether the child has ended, without reaping it: until `reap`, its pid (and so its
    group id) stays reserved, and no process that took the freed id can be taken for ours.
    Use this, not poll() or wait(), on a spawned child (pid_max is 32768 on many machines, and
    a busy one hands a freed pid out again within minutes)."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # waited for elsewhere
        return True


def wait_exited(proc: subprocess.Popen[Any], timeout: float) -> bool:
    """Wait up to `timeout` seconds for the child to end (not reaping it); whether it did."""
    end = time.monotonic() + timeout
    while not exited(proc):
        if time.monotonic() >= end:
            return False
        time.sleep(0.02)
    return True


def token_of(proc: subprocess.Popen[Any]) -> str | None:
    """The token `spawn` gave this child (None once reaped, or for a child it did not start)."""
    tracked = _tracked(proc)
    return tracked[1] if tracked else None


_WATCHDOG = (
    "import os, signal, sys\n"
    "pgid, token = int(sys.argv[1]), sys.argv[2].encode()\n"
    "if sys.stdin.buffer.read(1) != b'x':\n"  # end of file without goodbye: tfdoctor died
    "    key = b'TFDOCTOR_RUN_TOKEN='\n"
    "    for pid in filter(str.isdigit, os.listdir('/proc')):\n"
    "        try:\n"
    "            env = open(f'/proc/{pid}/environ', 'rb').read().split(b'\\0')\n"
    "            mine = any(e.startswith(key) and token in e[len(key):].split() for e in env)\n"
    "            if mine and int(pid) != os.getpid():\n"
    "                os.kill(int(pid), signal.SIGKILL)\n"
    "        except OSError:\n"
    "            pass\n"
    "    try:\n"
    "        os.killpg(pgid, signal.SIGKILL)\n"
    "    except OSError:\n"
    "        pass\n"
)


def watchdog(proc: subprocess.Popen[Any]) -> subprocess.Popen[bytes] | None:
    """A process that SIGKILLs this child's group, and every process carrying its token, when its
    stdin reaches end of file without a goodbye: tfdoctor was killed (SIGKILL cannot be caught).
    A process of its own, so it acts at once, while the child itself may sit for seconds in one
    call that holds its interpreter's lock (dlopen of TensorFlow's libraries). `dismiss` ends it."""
    token = token_of(proc)
    if token is None:
        return None
    try:
        return spawn([sys.executable, "-I", "-S", "-c", _WATCHDOG, str(proc.pid), token],
                     stdin=subprocess.PIPE)
    except OSError:  # pragma: no cover  (no watchdog: the group is still stopped on exit paths)
        return None


def dismiss(guard: subprocess.Popen[bytes] | None) -> None:
    """Say goodbye to a `watchdog` (its child ended the ordinary way) and reap it."""
    if guard is None or guard.stdin is None:
        return
    try:
        guard.stdin.write(b"x")
        guard.stdin.close()
    except OSError:
        pass
    wait_exited(guard, 5.0)
    reap(guard, grace=0.0)


def reap(proc: subprocess.Popen[Any], grace: float = TERM_GRACE) -> tuple[int, ...]:
    """Stop the child and everything it started: SIGTERM, then SIGKILL after `grace` seconds.

    Returns at once when nothing is left, and does nothing for a child reaped already. Waits
    for the child itself (bounded: a process stuck in the kernel is not waited for). Returns
    the pids that outlived SIGKILL (none, barring a process in uninterruptible sleep).
    """
    tracked = _tracked(proc)
    if tracked is None:
        return ()
    _, token, pipes = tracked
    groups = _own_group(proc)
    try:
        survivors = stop(groups, {token}, pipes, grace)
        try:
            proc.wait(timeout=KILL_WAIT)
        except subprocess.TimeoutExpired:
            pass
    finally:
        with _LOCK:
            if _LIVE.get(proc.pid, (None,))[0] is proc:
                del _LIVE[proc.pid]
    return survivors


def nudge(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM, without waiting, whatever the child started that still runs (`reap` follows)."""
    tracked = _tracked(proc)
    if tracked is not None:
        _, token, pipes = tracked
        groups = _own_group(proc)
        _send(marked(groups, {token}, {f"pipe:[{i}]" for i in pipes}), signal.SIGTERM)


def stop(groups: set[int], tokens: set[str], pipes: Iterable[int], grace: float,
         prefix: str | None = None) -> tuple[int, ...]:
    """SIGTERM every process marked by one of `groups`, `tokens` (or a token starting with
    `prefix`) or `pipes`, SIGKILL what is left after `grace`; the pids still alive after that.

    Signals go to the pids found in /proc, not to a group id (see `exited`); a group id in
    `groups` must belong to an unreaped child.
    """
    wanted = {f"pipe:[{i}]" for i in pipes}
    targets = marked(groups, tokens, wanted, prefix)
    if targets and grace > 0:
        _send(targets, signal.SIGTERM)
        end = time.monotonic() + grace
        while targets and time.monotonic() < end:
            time.sleep(0.02)
            targets = marked(groups, tokens, wanted, prefix)
    for _ in range(3):  # a process forking while we kill: each round takes what it made
        if not targets:
            return ()
        _send(targets, signal.SIGKILL)
        end = time.monotonic() + KILL_WAIT
        while targets and time.monotonic() < end:
            time.sleep(0.01)
            targets = marked(groups, tokens, wanted, prefix)
    return tuple(sorted(targets))


def kill_all_children() -> None:
    """SIGKILL every child still running and everything it started: on Ctrl+C or SIGTERM,
    before tfdoctor exits, so no TensorFlow child is left holding a GPU."""
    kill_all()


def kill_all(lock_timeout: float = -1) -> None:
    """kill_all_children; gives up after `lock_timeout` seconds if another thread holds the
    registry (the exit watchdog's last pass: the first pass ran)."""
    global _CLOSING
    if not _LOCK.acquire(timeout=lock_timeout):
        return
    try:
        _CLOSING = True
        groups = {pid for proc, _, _ in _LIVE.values() for pid in _own_group(proc)}
        pipes = {i for _, _, inodes in _LIVE.values() for i in inodes}
    finally:
        _LOCK.release()
    stop(groups, set(), pipes, 0.0, prefix=f"{_RUN}-")


def _own_group(proc: subprocess.Popen[Any]) -> set[int]:
    """{the child's group id} while the child is unreaped, else {}: a freed id could name a
    stranger's group (reaped elsewhere too: a SIGCHLD set to SIG_IGN, a waitpid(-1))."""
    if proc.returncode is not None:
        return set()
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return set()
    return {proc.pid}


def _tracked(proc: subprocess.Popen[Any]) -> tuple[subprocess.Popen[Any], str, frozenset[int]] | None:
    """This child's entry; not another child's that was given the same pid after it was reaped."""
    with _LOCK:
        tracked = _LIVE.get(proc.pid)
    return tracked if tracked is not None and tracked[0] is proc else None


def _register(proc: subprocess.Popen[Any], token: str, pipes: frozenset[int]) -> None:
    with _LOCK:
        closing = _CLOSING
        if not closing:
            _LIVE[proc.pid] = (proc, token, pipes)
    if closing:
        stop({proc.pid}, {token}, pipes, 0.0)


def _pipe_inodes(*streams: IO[Any] | None) -> frozenset[int]:
    inodes = set()
    for f in streams:
        if f is None:
            continue
        st = os.fstat(f.fileno())
        if stat.S_ISFIFO(st.st_mode):
            inodes.add(st.st_ino)
    return frozenset(inodes)


def _send(pids: set[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def marked(groups: set[int], tokens: set[str], pipes: set[str], prefix: str | None = None) -> set[int]:
    """Live pids (not this process) in one of `groups`, carrying one of `tokens` (or one that
    starts with `prefix`) in their environment, or writing to one of `pipes` ("pipe:[inode]")."""
    me, found = os.getpid(), set[int]()
    try:
        entries = os.listdir("/proc")
    except OSError:  # no /proc: the group is all we can reach
        return found
    for name in entries:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) < 3 or fields[0] in (b"Z", b"X"):
            continue  # a zombie is dead already; its parent reaps it
        if int(fields[2]) in groups or _carries(name, tokens, prefix) or _holds(name, pipes):
            found.add(int(name))
    return found


def _carries(pid: str, tokens: set[str], prefix: str | None) -> bool:
    if not tokens and prefix is None:
        return False
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:  # another user's process: not ours to read, nor to kill
        return False
    key = TOKEN_VAR.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(key):
            words = entry[len(key):].decode(errors="replace").split()
            return any(w in tokens or (prefix is not None and w.startswith(prefix)) for w in words)
    return False


def _holds(pid: str, pipes: set[str]) -> bool:
    """Whether `pid` holds the write end of one of `pipes`: only a writer keeps our read from
    reaching end-of-file. (A sibling child between fork and exec holds copies of tfdoctor's
    read ends for a moment; it is not a holder.)"""
    if not pipes:
        return False
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") not in pipes:
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as f:
                flags = next(int(line.split()[1], 8) for line in f if line.startswith(b"flags:"))
        except (OSError, StopIteration, ValueError, IndexError):
            continue
        if flags & os.O_ACCMODE != os.O_RDONLY:
            return True
    return False
