"""Where applies are recorded: one directory per apply, with its journal and its backups.

Layout (docs/fixes.md): $XDG_STATE_HOME/tfdoctor (default ~/.local/state/tfdoctor)
  envs/<name>-<sha256 of the env prefix, 12 hex>/applies/<UTC time>/
    journal.json   every change, written after each one
    files/         byte copies of edited files, taken before the first write
    dists/         zips of the distributions pip removed or replaced
    logs/          output of each script

Directories are 0700 and files 0600 whatever the umask: backups hold copies of the user's
files. A state directory that cannot be written (read-only, full) is an OutputFileError
(exit code 2), and the apply directory being written is removed, so no truncated backup and
no journal stuck at "applying" is left behind (`discard`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Collection
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tfdoctor.errors import FixError, OutputFileError
from tfdoctor.files import make_private_dir, private_file, write_atomic

JOURNAL_VERSION = 1
UNFINISHED = ("applying", "rolling-back", "undoing")
"""Statuses a journal keeps only while its tfdoctor runs: found later, they mean it was killed."""


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
        try:
            make_private_dir(directory)
        except OSError as exc:
            raise OutputFileError(state_root(), exc.strerror or str(exc)) from None
        journal = cls(directory, {"journal_version": JOURNAL_VERSION, "python": python,
                                  "prefix": prefix, "started": stamp, "status": "applying",
                                  "pid": os.getpid(),
                                  "plan": plan, "pip_before": None, "freeze_before": None,
                                  "dists": {}, "files": [], "steps": []})
        try:
            journal.save()
        except OutputFileError:
            journal.discard()
            raise
        return journal

    @classmethod
    def latest(cls, prefix: str) -> Journal | None:
        """The newest apply of this environment that is still in effect."""
        return cls._newest(prefix, ("applied", "failed-rollback"))

    @classmethod
    def unfinished(cls, prefix: str) -> Journal | None:
        """The newest apply of this environment that never finished (tfdoctor was killed with
        kill -9, or the machine lost power, while it applied or rolled back)."""
        return cls._newest(prefix, UNFINISHED)

    @classmethod
    def _newest(cls, prefix: str, statuses: Collection[str]) -> Journal | None:
        """The newest readable journal of this environment with one of these statuses."""
        applies = env_dir(prefix) / "applies"
        for directory in sorted(applies.glob("*"), reverse=True) if applies.is_dir() else ():
            try:
                data = json.loads((directory / "journal.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if data.get("status") in statuses:
                return cls(directory, data)
        return None

    def save(self) -> None:
        write_atomic(self.dir / "journal.json", json.dumps(self.data, indent=2) + "\n")

    def subdir(self, name: str) -> Path:
        """files/, dists/, logs/ or undone/ of this apply, created 0700."""
        path = self.dir / name
        try:
            make_private_dir(path)
        except OSError as exc:
            raise OutputFileError(path, exc.strerror or str(exc)) from None
        return path

    def discard(self) -> None:
        """Remove this apply's directory: used when the state directory failed before anything
        was changed (or after a complete rollback), so nothing half-written stays behind."""
        shutil.rmtree(self.dir, ignore_errors=True)

    def set(self, **fields: Any) -> None:
        self.data.update(fields)
        self.save()

    def backup_file(self, path: str) -> None:
        """Copy a file before its first change in this apply (a missing file is noted as new)."""
        if any(f["path"] == path for f in self.data["files"]):
            return
        entry: dict[str, Any] = {"path": path, "backup": None, "sha256_before": sha256(path)}
        if os.path.lexists(path):
            backup = self.subdir("files") / f"{len(self.data['files'])}-{os.path.basename(path)}"
            try:
                shutil.copy2(path, backup)
            except OSError as exc:
                backup.unlink(missing_ok=True)
                raise OutputFileError(backup, exc.strerror or str(exc)) from None
            os.chmod(backup, 0o600)  # a copy of the user's file, for the user only; undo puts
            entry["backup"] = str(backup)  # the original mode back (sha256 + copymode below)
            entry["mode_before"] = os.stat(path).st_mode & 0o7777
        self.data["files"].append(entry)
        self.save()

    def log_path(self, index: int, fix_id: str) -> Path:
        """The log file of one step, created 0600 (scripts' output may quote the user's env)."""
        path = self.subdir("logs") / f"{index:02d}-{fix_id}.log"
        try:
            os.close(private_file(path))
        except OSError as exc:
            raise OutputFileError(path, exc.strerror or str(exc)) from None
        return path

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
                # Copy bytes into the existing file (keeps its inode), then the saved mode (the
                # backup itself is 0600; journals before mode_before carry it on the backup).
                shutil.copyfile(entry["backup"], path)
                if entry.get("mode_before") is not None:
                    os.chmod(path, entry["mode_before"])
                else:
                    shutil.copymode(entry["backup"], path)
            elif os.path.lexists(path):
                undone = journal.dir / "undone"
                make_private_dir(undone)
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
