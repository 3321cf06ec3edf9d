"""Real venvs for the fix tests: make one, install into it, read its pip freeze, hash its tree."""

from __future__ import annotations

import hashlib
import json
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


def tfdoctor(*args: str, env: dict[str, str] | None = None,
             timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    """The real `tfdoctor` CLI in a child process (this interpreter), with extra environment."""
    return subprocess.run([sys.executable, "-m", "tfdoctor", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def diagnosis(python: str, env: dict[str, str] | None = None) -> dict[str, dict]:
    """`tfdoctor --quick --json --python PYTHON`: finding id -> finding (the JSON report's)."""
    done = tfdoctor("--quick", "--json", "--python", python, env=env, timeout=300)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return {f["id"]: f for f in json.loads(done.stdout)["findings"]}


def files_hash(root: Path, pattern: str) -> str:
    """Path and bytes of every file under root matching the glob: byte-identical check."""
    h = hashlib.sha256()
    for p in sorted(root.glob(pattern)):
        if p.is_file():
            h.update(str(p).encode())
            with open(p, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()
