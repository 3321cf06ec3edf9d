"""Before a pip step changes anything: would it make things worse, and is there room for it?

A fix never leaves the environment worse (issue 12). pip's own dry run (`--dry-run --report`)
says what it would install; a step is refused when that adds a second TensorFlow distribution
(e.g. `tf-keras` pulling the full `tensorflow` into a `tensorflow-cpu` venv) or moves an
installed package the step does not name. Free space is checked for the backup and the install.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from tfdoctor.errors import FixError
from tfdoctor.fixing.pipstate import canonical
from tfdoctor.probes._target_child import TF_DISTRIBUTIONS

INSTALL_HEADROOM = 64 * 1024 * 1024
"""pip's dry run does not say how big the new wheels are: the replaced files' size plus this."""


def named(install_args: tuple[str, ...]) -> set[str]:
    """Distribution names the step's pip arguments mention (`'protobuf<8,>=6.31.1'` -> protobuf)."""
    names = set()
    for arg in install_args:
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", arg)
        if match and not arg.startswith("-"):
            names.add(canonical(match.group(0)))
    return names


def worse_reason(install_args: tuple[str, ...], removes: set[str], planned: list[tuple[str, str]],
                 have: dict[str, str]) -> str | None:
    """Why pip's plan would make things worse (one sentence), or None when it would not."""
    mine = named(install_args)
    kept_tf = sorted(n for n in have if n in TF_DISTRIBUTIONS and n not in removes)
    for name, version in planned:
        if name in TF_DISTRIBUTIONS and name not in have and kept_tf and name not in mine:
            return (f"pip would install {name} {version} beside {', '.join(kept_tf)}: a second "
                    "TensorFlow distribution (its files would overwrite the installed one's)")
    if mine & set(TF_DISTRIBUTIONS):
        return None  # installing TensorFlow itself: its own requirements may move packages
    moved = [f"{name} {have[name]} -> {version}" for name, version in planned
             if name in have and have[name] != version and name not in mine | removes]
    if moved:
        return (f"pip would also change {', '.join(moved)}, which this fix does not name "
                "(pinned by what is installed)")
    return None


def check_space(backup_bytes: int, install_bytes: int, state_dir: Path, env_dir: str) -> None:
    """FixError (before anything changes) when the backup or the install would not fit."""
    need_install = install_bytes + INSTALL_HEADROOM
    state_free, env_free = _free(state_dir), _free(Path(env_dir))
    same = _device(state_dir) == _device(Path(env_dir))
    if same and backup_bytes + need_install > state_free:
        raise FixError(f"not enough free space in {env_dir}: the backup and the install need "
                       f"about {_mb(backup_bytes + need_install)}, {_mb(state_free)} free")
    if backup_bytes > state_free:
        raise FixError(f"not enough free space for the backup in {state_dir}: "
                       f"{_mb(backup_bytes)} needed, {_mb(state_free)} free")
    if need_install > env_free:
        raise FixError(f"not enough free space in {env_dir} for the install: about "
                       f"{_mb(need_install)} needed, {_mb(env_free)} free")


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _free(path: Path) -> int:
    return shutil.disk_usage(_existing(path)).free


def _device(path: Path) -> int:
    return os.stat(_existing(path)).st_dev


def _mb(n: int) -> str:
    return f"{n / 1e6:.0f} MB"
