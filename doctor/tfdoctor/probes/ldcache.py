"""The ldconfig cache (`/etc/ld.so.cache`), read through `ldconfig -p` and parsed as pure text.

On the real machine (host root "/") the probe runs `ldconfig -p`. Under a fake root (tests, or a
captured machine) it reads `<root>/etc/ld.so.cache` with `ldconfig -C <file> -p` (the binary cache
format is glibc's; its own tool reads it), or failing that `<root>/etc/ld.so.cache.txt`, a
recorded `ldconfig -p` output. Paths in the cache are machine paths: they are mapped under the root.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass

from tfdoctor.host import Host

# `ldconfig -p` prints e.g.
# "\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda-13.0/lib/libcudart.so.13";
# hwcap and OS ABI details follow the ABI inside the parentheses.
_ENTRY = re.compile(r"^\s+(\S+)\s+\(([^)]*)\)\s+=>\s+(.+?)\s*$")

# The ABI tag ldconfig writes for 64-bit libraries of each machine (glibc elf/cache.c
# print_entry). The loader only takes cache entries of its own ABI.
_ABI_TAGS = {"x86_64": "x86-64", "aarch64": "AArch64", "ppc64le": "64bit", "s390x": "64bit"}


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One library in the ldconfig cache."""

    soname: str
    flags: str
    """The parenthesised ABI description, e.g. "libc6,x86-64"."""
    path: str


def parse_ldconfig(text: str, machine: str | None = None) -> tuple[CacheEntry, ...]:
    """Entries of `ldconfig -p` output in cache order, keeping only this machine's ABI.

    `machine` is a `platform.machine()` value; None keeps entries of every ABI.
    """
    tag = _ABI_TAGS.get(machine or "")
    entries = []
    for line in text.splitlines():
        match = _ENTRY.match(line)
        if not match:
            continue
        soname, flags, path = match.groups()
        abi = [part.strip() for part in flags.split(",")]
        if machine is not None and tag is not None and tag not in abi:
            continue
        entries.append(CacheEntry(soname, flags, path))
    return tuple(entries)


def read_cache(host: Host) -> tuple[tuple[CacheEntry, ...], str | None]:
    """The cache entries of this host (paths mapped under its root), and an error if unreadable."""
    machine = platform.machine()
    if str(host.root) == "/":
        ldconfig = _ldconfig(host)
        if ldconfig is None:
            return (), "ldconfig not found"
        return _run_ldconfig(host, [ldconfig, "-p"], machine)
    binary = host.path("/etc/ld.so.cache")
    if binary.is_file():
        ldconfig = _ldconfig(host)
        if ldconfig is None:
            return (), "ldconfig not found"
        entries, error = _run_ldconfig(host, [ldconfig, "-C", str(binary), "-p"], machine)
    else:
        text = host.read_text("/etc/ld.so.cache.txt")
        entries, error = (parse_ldconfig(text, machine), None) if text is not None else ((), None)
    return tuple(CacheEntry(e.soname, e.flags, str(host.path(e.path))) for e in entries), error


def _ldconfig(host: Host) -> str | None:
    """The ldconfig tool; it lives in /sbin, often not on an unprivileged user's PATH.

    Under a fake root this is still the running system's ldconfig: it is only a reader there.
    """
    found = host.which("ldconfig")
    if found:
        return found
    return next((c for c in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.isfile(c)), None)


def _run_ldconfig(
    host: Host, argv: list[str], machine: str
) -> tuple[tuple[CacheEntry, ...], str | None]:
    result = host.run(argv, timeout=min(host.timeout, 5.0))
    if not result.ok:
        return (), f"{' '.join(argv)}: {result.describe_failure()}"
    return parse_ldconfig(result.stdout, machine), None
