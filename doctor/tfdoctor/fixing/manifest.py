"""Byte-for-byte proof that a rollback or undo put the environment back.

Before a pip step the apply records every file under the target's package and script
directories (path, size, mtime, mode, symlink target). After a rollback the same walk must
give the same paths, and every file whose size or mtime moved must hash exactly like its
backup (the hash taken of it while it was zipped into dists/, or of the copy in files/).
Anything else is a mismatch, reported with its path. Bytecode caches are included: a stale
.pyc of a module the fix added would otherwise outlive the rollback.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import zipfile
from typing import Any

from tfdoctor.errors import FixError
from tfdoctor.fixing.journal import Journal, sha256

Entry = list[Any]
"""[size, mtime_ns, mode, symlink target or None, is a directory]"""

DIRS_CODE = ("import json, sys, sysconfig; print(json.dumps(sorted({sysconfig.get_path(k) "
             "for k in ('purelib', 'platlib', 'scripts')})))")


def package_dirs(python: str, run: Any) -> list[str]:
    """The target's purelib, platlib and scripts directories (`run` runs argv, returns a result)."""
    result = run([python, "-I", "-c", DIRS_CODE])
    try:
        dirs = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise FixError(f"cannot ask {python} where its packages are: "
                       f"{result.describe_failure()}") from None
    return sorted({os.path.realpath(d) for d in dirs if os.path.isdir(d)})


def snapshot(dirs: list[str]) -> dict[str, Entry]:
    """Path -> entry for every file and symlink under `dirs` (not following links)."""
    found: dict[str, Entry] = {}
    for top in dirs:
        for dirpath, dirnames, filenames in os.walk(top):
            for name in filenames + dirnames:
                path = os.path.join(dirpath, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                link = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
                is_dir = stat.S_ISDIR(st.st_mode)
                found[path] = [0 if is_dir else st.st_size, 0 if is_dir else st.st_mtime_ns,
                               st.st_mode & 0o7777, link, is_dir]
    return found


def remove_added(journal: Journal) -> list[str]:
    """Delete what appeared under the package directories since the snapshot: the files of
    distributions the apply installed, a half-written install, pip's `~name` stashes (the
    distributions they held are restored from the zips). Returns what could not be removed."""
    before = _load(journal)
    dirs = journal.data.get("manifest_dirs")
    if before is None or not dirs:
        return []
    now = snapshot(dirs)
    problems = []
    for path in sorted(set(now) - set(before), key=len, reverse=True):  # children first
        try:
            if now[path][4]:
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{path}: cannot remove ({exc.strerror or exc})")
    return problems


def _load(journal: Journal) -> dict[str, Entry] | None:
    try:
        data: dict[str, Entry] = json.loads((journal.dir / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return data


def save(journal: Journal, dirs: list[str]) -> None:
    """Record the snapshot beside the journal (manifest.json) and its directories in it."""
    from tfdoctor.files import write_atomic

    write_atomic(journal.dir / "manifest.json", json.dumps(snapshot(dirs)) + "\n")
    journal.set(manifest_dirs=dirs)


def verify(journal: Journal) -> list[str]:
    """What differs from the snapshot after a restore, one line per path; [] when identical."""
    dirs = journal.data.get("manifest_dirs")
    if not dirs:
        return []
    before = _load(journal)
    if before is None:
        return [f"{journal.dir / 'manifest.json'}: cannot read the snapshot taken before the apply"]
    now = snapshot(dirs)
    backups = _backup_hashes(journal)
    problems = [f"{p}: added" for p in sorted(set(now) - set(before))]
    problems += [f"{p}: missing" for p in sorted(set(before) - set(now))]
    for path in sorted(set(before) & set(now)):
        old, new = before[path], now[path]
        if old[4] or new[4]:
            if old[4] != new[4]:
                problems.append(f"{path}: a directory in one state, a file in the other")
        elif old[3] != new[3] or old[2] != new[2]:
            problems.append(f"{path}: mode or link target differs")
        elif old[3] is None and (old[0] != new[0] or old[1] != new[1]):
            want = backups.get(path)
            if want is None:
                problems.append(f"{path}: changed, and no backup of it to compare with")
            elif sha256(path) != want:
                problems.append(f"{path}: bytes differ from the backup")
    return problems


def _backup_hashes(journal: Journal) -> dict[str, str]:
    """sha256 of every file as backed up: edited files (files/) and removed dists (zips)."""
    hashes = {os.path.realpath(f["path"]): f["sha256_before"] for f in journal.data.get("files", ())
              if f.get("sha256_before")}
    for saved in journal.data.get("dists", {}).values():
        if "sha256" in saved:  # taken from the files themselves while zipping them
            for path, digest in saved["sha256"].items():
                hashes.setdefault(path, digest)
            continue
        try:  # journals older than the recorded hashes: the zip is the backup
            with zipfile.ZipFile(saved["zip"]) as zf:
                for info in zf.infolist():
                    h = hashlib.sha256()
                    with zf.open(info) as f:
                        for chunk in iter(lambda: f.read(1 << 20), b""):
                            h.update(chunk)
                    hashes.setdefault(os.path.realpath("/" + info.filename), h.hexdigest())
        except (OSError, zipfile.BadZipFile, KeyError):
            continue
    return hashes
