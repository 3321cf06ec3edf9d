"""Resolve a soname the way glibc's dynamic loader does for a dlopen() from a given object.

Order (ld.so(8), "Finding shared libraries"; glibc elf/dl-load.c _dl_map_object):
DT_RPATH of the calling object (only if it has no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH of the
calling object, the ldconfig cache, then the default directories. A file of the wrong ELF class or
machine is skipped, as ld.so does; any other file with that name is taken (and may then fail).

Path convention: paths that come from the target process (LD_LIBRARY_PATH, TensorFlow's package
dir, site-packages) are used as they are; fixed machine locations (default dirs, /usr/local/cuda*,
/opt/cuda, /usr/lib/wsl, the ldconfig cache's entries) are mapped under `host.root`.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tfdoctor.host import Host
from tfdoctor.probes.ldcache import CacheEntry

_TRIPLETS = {
    "x86_64": "x86_64-linux-gnu",
    "aarch64": "aarch64-linux-gnu",
    "ppc64le": "powerpc64le-linux-gnu",
    "s390x": "s390x-linux-gnu",
}


@dataclass(frozen=True, slots=True)
class Step:
    """One stage of the loader's search: its name (LibraryFacts.found_via) and directories."""

    via: str
    dirs: tuple[str, ...]


def unique(items: Iterable[str]) -> tuple[str, ...]:
    """Items in first-seen order without repeats (TF's RUNPATH lists each dir dozens of times)."""
    return tuple(dict.fromkeys(items))


def split_path_list(value: str | None) -> tuple[str, ...]:
    """LD_LIBRARY_PATH entries. ld.so also splits on ";"; empty entries (the cwd) are dropped."""
    if not value:
        return ()
    return unique(p for p in value.replace(";", ":").split(":") if p)


def default_dirs(host: Host, machine: str | None = None) -> tuple[str, ...]:
    """The loader's built-in directories under the host root, multiarch ones first (Debian)."""
    triplet = _TRIPLETS.get(machine or platform.machine())
    dirs = [f"/lib/{triplet}", f"/usr/lib/{triplet}"] if triplet else []
    dirs += ["/lib64", "/usr/lib64", "/lib", "/usr/lib"]
    return tuple(str(host.path(d)) for d in dirs)


def search_steps(
    *,
    rpath: Sequence[str],
    runpath: Sequence[str],
    ld_library_path: Sequence[str],
    defaults: Sequence[str],
) -> tuple[Step, ...]:
    """The directory stages in loader order; the ldconfig cache sits before the defaults."""

    def clean(dirs: Sequence[str]) -> tuple[str, ...]:
        return unique(tidy(d) for d in dirs)

    steps = []
    if rpath and not runpath:
        steps.append(Step("rpath", clean(rpath)))
    steps.append(Step("ld_library_path", clean(ld_library_path)))
    steps.append(Step("runpath", clean(runpath)))
    steps.append(Step("ldconfig", ()))
    steps.append(Step("default_dirs", clean(defaults)))
    return tuple(steps)


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where a soname resolves, and every candidate file seen on the way (in search order)."""

    path: str | None
    found_via: str | None
    candidates: tuple[str, ...]


def resolve(
    soname: str, steps: Sequence[Step], cache: Sequence[CacheEntry], ident: tuple[int, int] | None
) -> Resolution:
    """Walk the steps like ld.so; the caller's `ident` (ELF class, machine) filters files."""
    found: tuple[str, str] | None = None
    candidates: list[str] = []
    for step in steps:
        files = (
            [e.path for e in cache if e.soname == soname]
            if step.via == "ldconfig"
            else [os.path.join(d, soname) for d in step.dirs]
        )
        for path in files:
            if not os.path.isfile(path):
                continue
            if not loadable(path, ident):
                continue
            candidates.append(path)
            if found is None:
                found = (path, step.via)
    if found is None:
        return Resolution(None, None, tuple(candidates))
    return Resolution(tidy(found[0]), found[1], tuple(candidates))


def elf_ident(path: str) -> tuple[int, int] | None:
    """(EI_CLASS, e_machine) of an ELF file, None for anything else."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    order: Literal["little", "big"] = "little" if head[5] == 1 else "big"
    return head[4], int.from_bytes(head[18:20], order)


def loadable(path: str, ident: tuple[int, int] | None) -> bool:
    """False only for an ELF file of another class or machine: ld.so skips those silently.

    A file that is not ELF at all stops the search with "invalid ELF header" (glibc open_verify),
    so it counts as found; loading it then fails, and the version probe reports why.
    """
    if ident is None:
        return True
    theirs = elf_ident(path)
    return theirs is None or theirs == ident


def tidy(path: str) -> str:
    """`path` with ".." folded, unless a symlinked directory before it makes that another place."""
    norm = os.path.normpath(path)
    return norm if norm == path or os.path.realpath(norm) == os.path.realpath(path) else path


def extra_dirs(
    host: Host, site_packages: Sequence[str], conda_prefixes: Sequence[str]
) -> tuple[str, ...]:
    """Where CUDA libraries live outside the search path: pip, toolkits, conda, WSL."""
    dirs: list[str] = []
    for site in site_packages:
        dirs += sorted(str(p) for p in Path(site).glob("nvidia/*/lib"))
    for base in (host.path("/usr/local"), host.path("/opt")):
        # Real toolkit dirs before symlinks to them (/usr/local/cuda -> cuda-12.5), so that a
        # file reached both ways is reported under its versioned path.
        for root in sorted(base.glob("cuda*"), key=lambda p: (p.is_symlink(), p.name)):
            dirs += [str(root / "lib64"), str(root / "lib")]
            dirs += sorted(str(p) for p in root.glob("targets/*/lib"))
    dirs += [os.path.join(prefix, "lib") for prefix in conda_prefixes]
    dirs.append(str(host.path("/usr/lib/wsl/lib")))
    return unique(d for d in dirs if os.path.isdir(d))


def real(path: str) -> str:
    return os.path.realpath(path)


def copies_and_versions(
    soname: str,
    loaded: str | None,
    seen: Sequence[str],
    dirs: Sequence[str],
    cache: Sequence[CacheEntry],
    listing: dict[str, tuple[str, ...]],
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Other files with this soname (`seen` first, then `dirs`), and files of the same library
    with another major version (e.g. libcudnn.so.8 when TF needs libcudnn.so.9)."""
    stem, _, version = soname.partition(".so.")
    major = version.split(".")[0]
    taken = {real(loaded)} if loaded else set()
    copies: list[str] = []
    others: list[str] = []
    for path in [*seen, *(os.path.join(d, soname) for d in dirs)]:
        if os.path.isfile(path) and real(path) not in taken:
            taken.add(real(path))
            copies.append(tidy(path))
    prefix = stem + ".so."
    # The cache first: it names files by their canonical paths, not through symlinked dirs.
    names = [e.path for e in cache if e.soname.startswith(prefix)]
    names += [
        os.path.join(d, n) for d in dirs for n in _listdir(d, listing) if n.startswith(prefix)
    ]
    for path in names:
        other_major = os.path.basename(path)[len(prefix) :].split(".")[0]
        if other_major == major or not os.path.isfile(path) or real(path) in taken:
            continue
        taken.add(real(path))
        others.append(tidy(path))
    return tuple(copies), tuple(others)


def _listdir(directory: str, listing: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Directory entries, listed once per probe run."""
    if directory not in listing:
        try:
            listing[directory] = tuple(sorted(os.listdir(directory)))
        except OSError:
            listing[directory] = ()
    return listing[directory]


def machine_path(host: Host, path: str) -> str:
    """The path as the machine sees it: under a fake root, relative to that root."""
    root = str(host.root)
    if root == "/" or not (path == root or path.startswith(root.rstrip("/") + "/")):
        return path
    return "/" + os.path.relpath(path, root)


def origin_of(host: Host, path: str, conda_prefixes: Sequence[str]) -> str:
    """pip, conda, cuda-toolkit, wsl or system: who installed the file at `path`."""
    seen = machine_path(host, path)
    parts = Path(seen).parts
    if "nvidia" in parts and any(p in ("site-packages", "dist-packages") for p in parts):
        return "pip"
    directory = os.path.dirname(path)
    for prefix in conda_prefixes:
        if directory == os.path.join(prefix, "lib"):
            return "conda"
    if os.path.isdir(os.path.join(os.path.dirname(directory), "conda-meta")):
        return "conda"
    if len(parts) > 3 and parts[1:3] == ("usr", "local") and parts[3].startswith("cuda"):
        return "cuda-toolkit"
    if len(parts) > 2 and parts[1] == "opt" and parts[2].startswith("cuda"):
        return "cuda-toolkit"
    if seen.startswith("/usr/lib/wsl/"):
        return "wsl"
    return "system"
