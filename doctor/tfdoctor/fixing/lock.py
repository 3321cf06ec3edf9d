"""One fix at a time per target environment: an flock on `envs/<env>/lock` in the state directory.

The kernel drops an flock when its holder dies (even by kill -9), so a stale lock never blocks
anyone; the file's text only names the holder for the refusal message.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

from tfdoctor.errors import FixError, OutputFileError
from tfdoctor.files import make_private_dir
from tfdoctor.fixing.journal import env_dir


class Busy(FixError):
    """Another tfdoctor is applying or undoing a fix in the same environment."""

    reference = "fix-in-progress"


@contextmanager
def env_lock(prefix: str, what: str) -> Iterator[None]:
    """Hold the environment's lock for `what` ("fix --apply", "fix --undo", "the TUI's apply").

    Busy (one line naming the running one) when it is held; OutputFileError (exit code 2) when
    the state directory cannot be written.
    """
    directory = env_dir(prefix)
    path = directory / "lock"
    try:
        make_private_dir(directory)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise OutputFileError(path, exc.strerror or str(exc)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another tfdoctor"
            raise Busy(f"another fix is running in {prefix}: {holder}; wait for it to finish"
                       ) from None
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        line = f"{what} (pid {os.getpid()}, started {stamp}: {' '.join(sys.argv[:1] + sys.argv[1:])})"
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, line.encode() + b"\n", 0)
        except OSError as exc:
            raise OutputFileError(path, exc.strerror or str(exc)) from None
        yield
    finally:
        os.close(fd)  # releases the flock


def holder(prefix: str) -> str | None:
    """Who holds the environment's lock now (their line), or None when nobody does."""
    path = env_dir(prefix) / "lock"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another tfdoctor"
        return None
    finally:
        os.close(fd)
