"""Where applies are recorded: one directory per apply, with its journal and its backups.

Layout (docs/fixes.md): $XDG_STATE_HOME/tfdoctor (default ~/.local/state/tfdoctor)
  envs/<name>-<sha256 of the env prefix, 12 hex>/applies/<UTC time>/
    journal.json   every change, written after each one
    files/         byte copies of edited files, taken before the first write
    dists/         zips of the distributions pip removed or replaced
    logs/          output of each script
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tfdoctor.errors import FixError
from tfdoctor.files import write_atomic

JOURNAL_VERSION = 1


def state_root() -> Path:
    """$XDG_STATE_HOME/tfdoctor, else ~/.local/state/tfdoctor (XDG Base Directory spec)."""
    home = os.path.expanduser("~")
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state")
    return Path(base, "tfdoctor")


def env_dir(prefix: str) -> Path:
    """One directory per target environment, named so a person can find theirs."""
    digest = hashlib.sha256(os.path.realpath(prefix).encode()).hexdigest()[:12]
    name = os.path.basename(os.path.normpath(prefix)) or "root"
    return state_root() / "envs" / f"{name}-{digest}"


def sha256(path: str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


class Journal:
    """The record of one apply; saved after every change so a crash leaves a usable journal."""

    def __init__(self, directory: Path, data: dict[str, Any]) -> None:
        self.dir = directory
        self.data = data

    @classmethod
    def create(cls, python: str, prefix: str, plan: dict[str, Any]) -> Journal:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
        directory = env_dir(prefix) / "applies" / stamp
        directory.mkdir(parents=True, mode=0o700)
        journal = cls(directory, {"journal_version": JOURNAL_VERSION, "python": python,
                                  "prefix": prefix, "started": stamp, "status": "applying",
                                  "plan": plan, "pip_before": None, "freeze_before": None,
                                  "dists": {}, "files": [], "steps": []})
        journal.save()
        return journal

    @classmethod
    def latest(cls, prefix: str) -> Journal | None:
        """The newest apply of this environment that is still in effect."""
        applies = env_dir(prefix) / "applies"
        for directory in sorted(applies.glob("*"), reverse=True) if applies.is_dir() else ():
            try:
                data = json.loads((directory / "journal.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if data.get("status") in ("applied", "failed-rollback"):
                return cls(directory, data)
        return None

    def save(self) -> None:
        write_atomic(self.dir / "journal.json", json.dumps(self.data, indent=2) + "\n")

    def set(self, **fields: Any) -> None:
        self.data.update(fields)
        self.save()

    def backup_file(self, path: str) -> None:
        """Copy a file before its first change in this apply (a missing file is noted as new)."""
        if any(f["path"] == path for f in self.data["files"]):
            return
        entry: dict[str, Any] = {"path": path, "backup": None, "sha256_before": sha256(path)}
        if os.path.lexists(path):
            files = self.dir / "files"
            files.mkdir(exist_ok=True)
            backup = files / f"{len(self.data['files'])}-{os.path.basename(path)}"
            shutil.copy2(path, backup)
            entry["backup"] = str(backup)
        self.data["files"].append(entry)
        self.save()

    def log_path(self, index: int, fix_id: str) -> Path:
        logs = self.dir / "logs"
        logs.mkdir(exist_ok=True)
        return logs / f"{index:02d}-{fix_id}.log"

    def step(self, fix_id: str, status: str, reason: str | None = None) -> None:
        self.data["steps"].append({"fix_id": fix_id, "status": status, "reason": reason})
        self.save()


def restore_files(journal: Journal) -> list[str]:
    """Put every edited file back byte for byte; files the apply created move to `undone/`."""
    problems = []
    for index, entry in reversed(list(enumerate(journal.data["files"]))):
        path = entry["path"]
        try:
            if entry["backup"]:
                # Copy bytes into the existing file (keeps its inode), then the saved mode.
                shutil.copyfile(entry["backup"], path)
                shutil.copymode(entry["backup"], path)
            elif os.path.lexists(path):
                undone = journal.dir / "undone"
                undone.mkdir(exist_ok=True)
                shutil.move(path, undone / f"{index}-{os.path.basename(path)}")
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")
            continue
        if sha256(path) != entry["sha256_before"]:
            problems.append(f"{path}: not identical to its backup after restore")
    return problems


def require_latest(prefix: str) -> Journal:
    journal = Journal.latest(prefix)
    if journal is None:
        raise FixError(f"nothing to undo: no apply recorded for {prefix} under {state_root()}")
    return journal
