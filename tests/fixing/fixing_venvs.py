"""Real venvs for the fix tests: make one, install into it, read its pip freeze, hash its tree."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path


def make_venv(path: Path) -> str:
    """A real venv with pip (no system site-packages); returns its python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return str(path / "bin" / "python")


def pip(python: str, *args: str) -> None:
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def freeze(python: str) -> str:
    return subprocess.run([python, "-m", "pip", "freeze", "--all"], check=True,
                          capture_output=True, text=True).stdout


def tree_hash(root: Path) -> str:
    """Every path, mode and byte under root: any change at all alters it."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath, name)
            h.update(str(p).encode() + oct(p.lstat().st_mode).encode())
            if not p.is_symlink():
                h.update(p.read_bytes())
    return h.hexdigest()
