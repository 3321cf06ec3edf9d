"""The target environment's packages: snapshot, backup of what pip will remove, exact restore.

Undo needs no network for anything pip removed or replaced: before a pip step those
distributions' files (their RECORD) are copied into a zip in the apply's backup directory, and
undo puts them back byte for byte. Only distributions with no backup are reinstalled by version.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from tfdoctor.errors import FixError, OutputFileError
from tfdoctor.files import make_private_dir, private_file
from tfdoctor.fixing.proc import CancelToken, run_guarded
from tfdoctor.host import CommandResult

CHILD = Path(__file__).with_name("_dists_child.py")
PIP_TIMEOUT = 1800.0
"""Installing tensorflow[and-cuda] downloads about 3 GB."""


def canonical(name: str) -> str:
    """PEP 503 normalised name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _child(python: str, names: list[str], cancel: CancelToken | None = None) -> dict:
    result = run_guarded([python, "-I", str(CHILD), *names], timeout=120, cancel=cancel)
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        why = result.describe_failure()
        raise FixError(f"cannot list the packages of {python}: {why}") from None


def installed(python: str, cancel: CancelToken | None = None, *,
              whole: bool = False) -> dict[str, str]:
    """Canonical name -> version of every distribution the target interpreter sees.

    whole: FixError naming them when some have no name or version in their metadata (another
    pip installing right now, or an install cut short): pip's resolver would die on them with
    "TypeError: expected string or bytes-like object".
    """
    listing = _child(python, [], cancel)
    broken = listing.get("broken") or []
    if whole and broken:
        raise FixError(f"{', '.join(map(str, broken[:3]))} has no name or version in its metadata "
                       "(another pip is installing into this environment now, or an install was "
                       "cut short): pip cannot run here until it finishes or that directory is "
                       "removed; nothing was changed")
    return dict(listing["dists"])


def freeze(python: str, cancel: CancelToken | None = None) -> str:
    """`pip freeze --all` of the target, as recorded in the journal."""
    result = pip(python, "freeze", "--all", timeout=120, cancel=cancel)
    if not result.ok:
        raise FixError(f"pip freeze failed in {python}: {result.describe_failure()}")
    return result.stdout


def pip(python: str, *args: str, timeout: float = PIP_TIMEOUT,
        cancel: CancelToken | None = None) -> CommandResult:
    """pip of the target interpreter, never a bare pip; stoppable, never outliving tfdoctor."""
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return run_guarded([python, "-m", "pip", *args], timeout=timeout, env=env, cancel=cancel)


def dry_run(python: str, install_args: tuple[str, ...],
            cancel: CancelToken | None = None) -> list[tuple[str, str]] | None:
    """(name, version) of what pip would install for these arguments (`--dry-run --report`);
    None when pip cannot say (no network, a resolver error)."""
    if not install_args:
        return []
    with tempfile.TemporaryDirectory(prefix="tfdoctor-report-") as tmp:
        report = Path(tmp, "report.json")
        result = pip(python, "install", "--dry-run", "--quiet", "--report", str(report),
                     *install_args, cancel=cancel)
        if not result.ok or not report.exists():
            return None
        data = json.loads(report.read_text(encoding="utf-8"))
    return [(canonical(item["metadata"]["name"]), str(item["metadata"]["version"]))
            for item in data.get("install", ())]


def will_replace(python: str, install_args: tuple[str, ...]) -> list[str] | None:
    """Names pip would install for these arguments (`--dry-run --report`); None if unknown."""
    planned = dry_run(python, install_args)
    return None if planned is None else [name for name, _version in planned]


def dist_bytes(python: str, names: list[str]) -> int:
    """Bytes on disk of the files of these installed distributions (what a backup needs)."""
    if not names:
        return 0
    found = _child(python, sorted(set(names)))["files"]
    total = 0
    for info in found.values():
        for path in dict.fromkeys(os.path.normpath(p) for p in info["paths"]):
            try:
                total += os.lstat(path).st_size
            except OSError:
                continue
    return total


def backup_dists(python: str, names: list[str], directory: Path,
                 cancel: CancelToken | None = None) -> dict[str, dict[str, Any]]:
    """Zip the files of each installed distribution named; name -> {version, zip, sha256}."""
    if not names:
        return {}
    found = _child(python, sorted(set(names)), cancel)["files"]
    try:
        make_private_dir(directory)
    except OSError as exc:
        raise OutputFileError(directory, exc.strerror or str(exc)) from None
    saved: dict[str, dict[str, Any]] = {}
    for name, info in found.items():
        hashes: dict[str, str] = {}  # of the files as they were: what a restore must give back
        archive = directory / f"{name}-{info['version']}.zip"
        try:  # 0600 whatever the umask; a full disk leaves no truncated zip behind
            with os.fdopen(private_file(archive, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as f, \
                    zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
                for real in dict.fromkeys(os.path.normpath(p) for p in info["paths"]):
                    if os.path.isfile(real) and not os.path.islink(real):
                        zf.write(real, real.lstrip("/"))
                        hashes[os.path.realpath(real)] = _sha256(real)
        except OSError as exc:
            archive.unlink(missing_ok=True)
            raise OutputFileError(archive, exc.strerror or str(exc)) from None
        saved[name] = {"version": info["version"], "zip": str(archive), "sha256": hashes}
    return saved


def _intact(saved: dict[str, Any]) -> bool:
    """Every file of a backed-up distribution is there with the bytes it had when zipped."""
    for path, digest in saved.get("sha256", {}).items():
        try:
            if _sha256(path) != digest:
                return False
        except OSError:
            return False
    return True


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def extract(archive: str) -> None:
    """Put a backed-up distribution's files back where they were, with their modes."""
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            target = Path("/", info.filename)
            target.parent.mkdir(parents=True, exist_ok=True)
            # A new inode, as pip does: a process may have the old .so mapped, and the old file
            # may be a hard link shared with another environment.
            target.unlink(missing_ok=True)
            with zf.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)  # in chunks: a CUDA .so can be 1 GB
            mode = (info.external_attr >> 16) & 0o7777
            if mode:
                os.chmod(target, mode)


def restore(python: str, before: dict[str, str], backups: dict[str, dict[str, Any]]) -> list[str]:
    """Make the target's distributions equal `before`; returns what could not be restored."""
    now = installed(python)
    extra = sorted(n for n in now if before.get(n) != now[n])
    if extra:
        result = pip(python, "uninstall", "-y", *extra)
        if not result.ok:
            return [f"pip uninstall {' '.join(extra)}: {result.describe_failure()}"]
        now = installed(python)
    # A distribution listed at the right version may still be half put back (an earlier
    # restore stopped by a full disk): its files must hash as they did when they were zipped.
    missing = sorted(n for n in before if now.get(n) != before[n]
                     or (n in backups and not _intact(backups[n])))
    problems = []
    again = []
    for name in missing:
        saved = backups.get(name)
        if saved and saved["version"] == before[name] and Path(saved["zip"]).exists():
            try:
                extract(saved["zip"])
            except (OSError, zipfile.BadZipFile) as exc:  # a full disk: say so, go on
                where = getattr(exc, "filename", None) or saved["zip"]
                problems.append(f"{where}: cannot restore {name} {before[name]} from its "
                                f"backup ({getattr(exc, 'strerror', None) or exc})")
        else:
            again.append(f"{name}=={before[name]}")
    if again:
        result = pip(python, "install", "--no-deps", *again)
        if not result.ok:
            problems.append(f"pip install {' '.join(again)}: {result.describe_failure()}")
    return problems
