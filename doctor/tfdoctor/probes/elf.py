"""Read the dynamic section of an ELF shared object: SONAME, NEEDED, RPATH and RUNPATH.

Pure Python over the file's bytes (no readelf), so the library probe can resolve what the
dynamic loader will load for TensorFlow. Only what the loader uses is read: the PT_DYNAMIC
segment and the string table it points at, located through the PT_LOAD segments.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 14, 15, 29


@dataclass(frozen=True, slots=True)
class DynamicInfo:
    """The loader-relevant entries of one shared object."""

    soname: str | None
    needed: tuple[str, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]


def read_dynamic(path: str | Path) -> DynamicInfo | None:
    """The dynamic entries of `path`, or None if it is not a readable ELF shared object."""
    # mmap, not read(): libtensorflow_framework.so.2 is 65 MB and only a few pages are needed.
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return parse_dynamic(data)
    except (OSError, ValueError, struct.error, IndexError):
        return None


def parse_dynamic(data: bytes | mmap.mmap) -> DynamicInfo | None:
    """Parse ELF bytes; None for non-ELF input. Raises struct.error on a truncated file."""
    if data[:4] != b"\x7fELF":
        return None
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        phoff, = struct.unpack_from(end + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x36)
        ph_fmt, dyn_fmt = end + "IIQQQQQQ", end + "qQ"
    else:
        phoff, = struct.unpack_from(end + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x2A)
        ph_fmt, dyn_fmt = end + "IIIIIIII", end + "iI"
    loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    dynamic: tuple[int, int] | None = None
    for i in range(phnum):
        fields = struct.unpack_from(ph_fmt, data, phoff + i * phentsize)
        if is64:
            p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = fields[:6]
        else:
            p_type, p_offset, p_vaddr, _paddr, p_filesz = fields[:5]
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return DynamicInfo(None, (), (), ())
    entries: list[tuple[int, int]] = []
    step = struct.calcsize(dyn_fmt)
    for off in range(dynamic[0], dynamic[0] + dynamic[1], step):
        tag, val = struct.unpack_from(dyn_fmt, data, off)
        if tag == DT_NULL:
            break
        entries.append((tag, val))
    strtab_vaddr = next((v for t, v in entries if t == DT_STRTAB), None)
    if strtab_vaddr is None:
        return DynamicInfo(None, (), (), ())
    strtab = _vaddr_to_offset(loads, strtab_vaddr)

    def string(offset: int) -> str:
        start = strtab + offset
        stop = data.find(b"\0", start)
        if stop < 0:
            raise ValueError("unterminated string in the dynamic string table")
        return bytes(data[start:stop]).decode("utf-8", "replace")

    def paths(tag: int) -> tuple[str, ...]:
        return tuple(p for t, v in entries if t == tag for p in string(v).split(":") if p)

    soname = next((string(v) for t, v in entries if t == DT_SONAME), None)
    needed = tuple(string(v) for t, v in entries if t == DT_NEEDED)
    return DynamicInfo(soname, needed, paths(DT_RPATH), paths(DT_RUNPATH))


def _vaddr_to_offset(loads: list[tuple[int, int, int]], vaddr: int) -> int:
    for seg_vaddr, seg_offset, filesz in loads:
        if seg_vaddr <= vaddr < seg_vaddr + filesz:
            return vaddr - seg_vaddr + seg_offset
    raise ValueError(f"address {vaddr:#x} is in no loaded segment")


def expand_origin(entries: tuple[str, ...], object_path: str | Path) -> tuple[str, ...]:
    """Substitute $ORIGIN / ${ORIGIN} with the directory of the object, as ld.so does."""
    origin = str(Path(object_path).parent)
    return tuple(e.replace("${ORIGIN}", origin).replace("$ORIGIN", origin) for e in entries)
