"""Writing files whole or not at all, with the permissions chosen before any byte is written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tfdoctor.errors import OutputFileError


def write_atomic(path: Path, text: str, mode: int = 0o600) -> None:
    """Write to a temporary file in the same directory, then rename over `path`.

    A reader (node_exporter's textfile collector, a support upload) sees the old file or the new
    one, never half of one; rename is atomic within a file system (POSIX rename(2)). The mode is
    set on the temporary file, so an existing file's looser mode does not survive.
    """
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OutputFileError(path, exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), mode)
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputFileError(path, exc.strerror or str(exc)) from None
