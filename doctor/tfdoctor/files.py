"""Writing files whole or not at all, with the permissions chosen before any byte is written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tfdoctor.errors import OutputFileError

DIR_MODE = 0o700
FILE_MODE = 0o600


def write_atomic(path: Path, text: str | bytes, mode: int = FILE_MODE) -> None:
    """Write to a temporary file in the same directory, then rename over `path`.

    A reader (node_exporter's textfile collector, a support upload) sees the old file or the new
    one, never half of one; rename is atomic within a file system (POSIX rename(2)). The mode is
    set on the temporary file, so neither an existing file's looser mode nor the umask survives.
    The text is encoded before the temporary file exists, and on any failure (a full disk, a
    read-only directory, Ctrl+C) the temporary file is removed: nothing half-written is left.
    """
    try:
        data = text if isinstance(text, bytes) else text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate that slipped through
        raise OutputFileError(path, f"text not encodable as UTF-8 ({exc.reason})") from None
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OutputFileError(path, exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputFileError(path, exc.strerror or str(exc)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def make_private_dir(path: Path) -> None:
    """`mkdir -p` where every directory this creates is 0700 whatever the umask (mkdir's mode
    is masked by it; the parents= form does not even pass the mode on). Existing ones are kept."""
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, DIR_MODE)


def private_file(path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_APPEND) -> int:
    """Open (create) a file readable by its owner only, whatever the umask; returns the fd."""
    fd = os.open(path, flags, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return fd
