"""Fixtures for the hostile-input tests: fake interpreters, canaries, a tiny file system."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import need

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def tiny_mount(tmp_path: Path):
    """A mount point factory: a 64 KiB tmpfs (options such as "ro" added), unmounted after.

    Root ignores file modes, so only a real read-only or full file system tests those paths;
    CI runs as root here. Where mounting is impossible the test says why and skips.
    """
    mounted: list[Path] = []

    def mount(name: str, options: str = "") -> Path:
        point = tmp_path / name
        point.mkdir()
        opts = "size=64k" + (f",{options}" if options else "")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(point)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            need(False, f"cannot mount a tmpfs (needs root): {done.stderr.strip()}")
        mounted.append(point)
        return point

    yield mount
    for point in reversed(mounted):
        subprocess.run(["umount", "-l", str(point)], capture_output=True)
