"""One fix at a time per target environment: a lock file in the environment itself.

`<prefix>/.tfdoctor.lock` names its holder (pid, user, host, boot, start time, command) and is
held two ways at once, because each alone misses a case:
- its existence: it appears complete and at once (written aside, then link(2), which is atomic
  on local file systems and on NFS), so every user, every state directory and every machine
  that mounts the environment sees it, even where flock is local-only (NFS `local_lock`);
- an flock on it: the kernel drops it when its holder dies (even by kill -9), so a takeover
  never races a live holder on this machine, and a stale file is judged under the lock.

A file whose holder is gone (this host and boot, and no process with that pid and start time)
is stale and taken over. One from another host is never guessed dead: the refusal names the
holder and the file to remove if it is gone. The file is removed on release, so the
environment keeps no trace. Where the environment's directory cannot be written (a system
Python), the lock is `envs/<env>/lock` in the state directory, after checking that nobody
holds the environment's own.
"""

from __future__ import annotations

import errno
import fcntl
import getpass
import json
import os
import secrets
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tfdoctor.errors import FixError, OutputFileError
from tfdoctor.files import make_private_dir
from tfdoctor.fixing.journal import env_dir

LOCK_NAME = ".tfdoctor.lock"
ATTEMPTS = 50
"""Each retry means the file changed hands between two system calls: a handful is plenty."""
NOT_OURS = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT)
"""The environment cannot hold a lock file of ours: read-only to us, or not there at all."""


class Busy(FixError):
    """Another tfdoctor is applying or undoing a fix in the same environment."""

    reference = "fix-in-progress"


def lock_path(prefix: str) -> Path:
    """Where the environment's own lock lives: `<prefix>/.tfdoctor.lock`."""
    return Path(prefix, LOCK_NAME)


@contextmanager
def env_lock(prefix: str, what: str) -> Iterator[None]:
    """Hold the environment's lock for `what` ("tfdoctor fix --apply", "the TUI's apply").

    Busy (one line naming the holder) when it is held; OutputFileError (exit code 2) when
    neither the environment nor the state directory can hold it.
    """
    record = _record(what)
    path = lock_path(prefix) if os.path.isabs(prefix) else None
    fd = None
    if path is not None:
        try:
            fd = _acquire(path, record, prefix)
        except OSError as exc:
            if exc.errno not in NOT_OURS:
                raise OutputFileError(path, exc.strerror or str(exc)) from None
            path = None  # not ours to write: the state directory's, unless the env's is held
            running = holder(prefix)
            if running is not None:
                raise Busy(_busy_words(prefix, running)) from None
    if path is None:
        path = env_dir(prefix) / "lock"
        try:
            make_private_dir(path.parent)
            fd = _acquire(path, record, prefix)
        except OSError as exc:
            raise OutputFileError(path, exc.strerror or str(exc)) from None
    assert fd is not None
    try:
        yield
    finally:
        _release(path, fd)


def holder(prefix: str) -> str | None:
    """Who holds the environment's lock now (in words), or None when nobody does."""
    for path in (lock_path(prefix), env_dir(prefix) / "lock"):
        if not os.path.isabs(path):
            continue
        words = _held_by(path)
        if words is not None:
            return words
    return None


def _record(what: str) -> dict[str, Any]:
    return {"what": what, "pid": os.getpid(), "user": _user(), "host": socket.gethostname(),
            "boot_id": _boot_id(), "start": _start_ticks(os.getpid()),
            "started": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
            "command": " ".join(sys.argv)}


def _acquire(path: Path, record: dict[str, Any], prefix: str) -> int:
    """The descriptor of our lock file at `path`, flocked; Busy when someone else holds it."""
    for _ in range(ATTEMPTS):
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, (json.dumps(record) + "\n").encode())
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new inode: nobody else has it
            try:
                os.link(tmp, path)
                return fd
            except FileExistsError:
                # open(2) on O_EXCL over NFS: link(2) may report failure for a link it made (a
                # lost reply); a link count of 2 on our own file says it did.
                if os.fstat(fd).st_nlink == 2 or _take_over_if_stale(path, tmp, prefix):
                    return fd
        except BaseException:
            os.close(fd)
            raise
        finally:
            _unlink(tmp)
        os.close(fd)
    raise Busy(f"the fix lock {path} keeps changing hands; try again")


def _take_over_if_stale(path: Path, tmp: Path, prefix: str) -> bool:
    """Replace the lock file at `path` by ours (`tmp`) when its holder is gone; Busy when it is
    not; False when the file changed under us (try again)."""
    try:
        try:
            fd, mode = os.open(path, os.O_RDWR), fcntl.LOCK_EX
        except PermissionError:  # another user's file (0644): a shared lock still meets theirs
            fd, mode = os.open(path, os.O_RDONLY), fcntl.LOCK_SH
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(_busy_words(prefix, _describe(_read(fd), path))) from None
        if not _same_file(fd, path):
            return False
        record = _read(fd)
        if _alive(record) is not False:
            raise Busy(_busy_words(prefix, _describe(record, path)))
        os.rename(tmp, path)  # atomic: never a moment without a lock file
        return True
    finally:
        os.close(fd)


def _release(path: Path, fd: int) -> None:
    """Remove the lock file (while still holding it, and only if it is still ours), then close."""
    try:
        if _same_file(fd, path):
            os.unlink(path)
    except OSError:
        pass
    finally:
        os.close(fd)


def _held_by(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _describe(_read(fd), path)
        record = _read(fd)
        return None if _alive(record) is False else _describe(record, path)
    finally:
        os.close(fd)


def _busy_words(prefix: str, words: str) -> str:
    return f"another fix is running in {prefix}: {words}; wait for it to finish"


def _describe(record: dict[str, Any], path: Path) -> str:
    """`tfdoctor fix --apply (pid 4242 of root on node1, started ...: argv)`; a holder on
    another host also gets the file to remove if it is gone (this host cannot tell)."""
    if not record:
        return "another tfdoctor"
    elsewhere = record.get("host") != socket.gethostname()
    return (f"{record.get('what', 'tfdoctor')} (pid {record.get('pid', '?')} of "
            f"{record.get('user', '?')} on {record.get('host', '?')}, started "
            f"{record.get('started', '?')}: {record.get('command', '')}"
            + (f"; if it is gone, remove {path}" if elsewhere else "") + ")")


def _alive(record: dict[str, Any]) -> bool | None:
    """Whether the holder still runs: None when it cannot be known (another host)."""
    if not record:
        return False  # we write a whole record before the file appears: this is debris
    if record.get("host") != socket.gethostname():
        return None
    if record.get("boot_id") and _boot_id() and record["boot_id"] != _boot_id():
        return False
    pid = record.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    start = record.get("start")
    return start is None or _start_ticks(pid) in (None, start)


def _read(fd: int) -> dict[str, Any]:
    try:
        data = json.loads(os.pread(fd, 8192, 0).decode("utf-8", "replace"))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22): tells a
    reused pid from the holder."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None
