"""The fix catalogue: scripts in fixes/ (read by their header) and manual recipes (manual.toml)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tfdoctor.errors import FixError
from tfdoctor.resources import data_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HEADER_KEYS = ("fix-id", "summary", "needs-root", "reversible")


@dataclass(frozen=True, slots=True)
class FixScript:
    """A fix tfdoctor can apply: a POSIX sh script with a `# key: value` header."""

    id: str
    summary: str
    needs_root: bool
    reversible: bool
    path: Path
    covers: tuple[str, ...] = ()
    """Other fix ids this script applies (the activation hook also removes LD_LIBRARY_PATH dirs)."""


@dataclass(frozen=True, slots=True)
class ManualRecipe:
    """A fix printed for a person: root, a reboot, or a platform tfdoctor cannot script."""

    id: str
    summary: str
    needs_root: bool
    runnable: bool
    """May run under `--apply --allow-root` after a confirmation that shows the commands."""
    commands: tuple[str, ...]


def parse_header(text: str, where: str) -> dict[str, str]:
    """The `# key: value` lines at the top of a script, up to the first non-comment line."""
    fields: dict[str, str] = {}
    for line in text.splitlines()[1:]:
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].strip().partition(":")
        if sep and key.strip() and " " not in key.strip():
            fields.setdefault(key.strip(), value.strip())
    missing = [k for k in HEADER_KEYS if k not in fields]
    if missing:
        raise FixError(f"{where}: header lacks {', '.join(missing)}")
    for key in ("needs-root", "reversible"):
        if fields[key] not in ("yes", "no"):
            raise FixError(f"{where}: {key} must be yes or no, not {fields[key]!r}")
    return fields


def read_script(path: Path) -> FixScript:
    """One script; its fix id must be its file name without `.sh`."""
    fields = parse_header(path.read_text(encoding="utf-8"), str(path))
    if fields["fix-id"] != path.stem:
        raise FixError(f"{path}: fix-id {fields['fix-id']!r} differs from the file name")
    return FixScript(id=fields["fix-id"], summary=fields["summary"],
                     needs_root=fields["needs-root"] == "yes",
                     reversible=fields["reversible"] == "yes", path=path,
                     covers=tuple(fields.get("covers", "").split()))


@lru_cache(maxsize=4)
def load_scripts(directory: Path | None = None) -> dict[str, FixScript]:
    """Every fixes/*.sh by fix id; files starting with "_" are shared parts (_pip.sh), not fixes."""
    root = directory or data_dir("fixes")
    paths = sorted(p for p in root.glob("*.sh") if not p.name.startswith("_"))
    return {s.id: s for s in (read_script(p) for p in paths)}


@lru_cache(maxsize=4)
def load_manual(directory: Path | None = None) -> dict[str, ManualRecipe]:
    """fixes/manual.toml by fix id."""
    path = (directory or data_dir("fixes")) / "manual.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise FixError(f"cannot read {path}: {exc}") from None
    recipes = {}
    for fix_id, row in data.items():
        try:
            recipes[fix_id] = ManualRecipe(fix_id, str(row["summary"]), bool(row["needs_root"]),
                                           bool(row["runnable"]), tuple(row["commands"]))
        except (KeyError, TypeError) as exc:
            raise FixError(f"{path}: [{fix_id}] lacks {exc}") from None
    return recipes


def script_for(fix_id: str) -> FixScript | None:
    """The script that applies this fix id, directly or through its `covers` list."""
    scripts = load_scripts()
    if fix_id in scripts:
        return scripts[fix_id]
    return next((s for s in scripts.values() if fix_id in s.covers), None)
