"""The PTX a TensorFlow wheel carries, and whether CUDA's own compiler can build it for a newer GPU.

A GPU newer than every SASS target of a wheel runs TensorFlow only if the driver can JIT-compile
the wheel's PTX for it. PTX for an arch-specific target (`.target sm_90a`) cannot be compiled for
any other architecture ("Program with .target 'sm_90a' cannot be compiled to future
architecture"), so one such module among TensorFlow's kernels is enough for its first kernel to
fail there (CUDA_ERROR_INVALID_PTX). This reads every fatbin in a wheel's (or an installed
TensorFlow's) shared objects, lists the PTX `.version` / `.target` pairs with their module counts,
and, given a ptxas, compiles the smallest module of each pair for each `--arch`. The rows'
`ptx_targets` in compat_tables/tensorflow.toml come from this script; tests/compat checks them
against the installed test wheels.

    python benchmarks/wheel_ptx.py WHEEL.whl|SITE/tensorflow ... [--ptxas PATH] [--arch sm_120]

Fatbin layout: a 16-byte header (magic 0xBA55ED50, version 1, header size, payload size), then
entries (kind 1 = PTX, 2 = ELF; header size; payload size; compressed size; arch; flags, 0x2000 =
LZ4-compressed; uncompressed size). The LZ4 block decoder below keeps the script stdlib-only.
"""

from __future__ import annotations

import argparse
import json
import mmap
import re
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"\x50\xed\x55\xba"
LIBRARIES = re.compile(r"(^|/)(libtensorflow_cc\.so\.2|libtensorflow_framework\.so\.2"
                       r"|_pywrap_tensorflow_internal\.so)$")
HEAD = re.compile(rb"\.version (\d+\.\d+)\s+\.target (\w+)")


def lz4_block(src: bytes, limit: int) -> bytes:
    """Decode an LZ4 block, stopping once `limit` bytes are out (the PTX head is enough to sort)."""
    out = bytearray()
    at = 0

    def length(nibble: int) -> int:
        """A token's 4-bit length, extended by bytes of 255 and one below it."""
        nonlocal at
        if nibble == 15:
            while True:
                nibble += src[at]
                at += 1
                if src[at - 1] != 255:
                    break
        return nibble

    while at < len(src) and len(out) < limit:
        token = src[at]
        at += 1
        literals = length(token >> 4)
        out += src[at:at + literals]
        at += literals
        if at >= len(src):
            break
        offset = src[at] | src[at + 1] << 8
        at += 2
        match = length(token & 15) + 4
        start = len(out) - offset
        if offset >= match:
            out += out[start:start + match]
        else:  # an overlapping match repeats the last `offset` bytes
            for k in range(match):
                out.append(out[start + k])
    return bytes(out[:limit])


@dataclass(frozen=True)
class PtxEntry:
    data: memoryview | bytes
    compressed: bool
    size: int
    """Uncompressed size."""

    def text(self, limit: int | None = None) -> bytes:
        want = self.size if limit is None else min(limit, self.size)
        raw = lz4_block(bytes(self.data), want) if self.compressed else bytes(self.data[:want])
        return raw.rstrip(b"\0")


def ptx_entries(blob: mmap.mmap | bytes) -> Iterator[PtxEntry]:
    """Every PTX entry of every fatbin in a shared object."""
    pos = 0
    while (pos := blob.find(MAGIC, pos)) >= 0:
        _, version, header, size = struct.unpack_from("<IHHQ", blob, pos)
        if version != 1 or header != 16 or size > len(blob) - pos:
            pos += 4
            continue
        entry, end = pos + header, pos + header + size
        while entry + 64 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", blob, entry)
            if entry_header < 64 or kind not in (1, 2, 16):
                break
            compressed_size, = struct.unpack_from("<I", blob, entry + 16)
            flags, = struct.unpack_from("<Q", blob, entry + 40)
            full, = struct.unpack_from("<Q", blob, entry + 56)
            start = entry + entry_header
            if kind == 1:
                compressed = bool(flags & 0x2000)
                length = compressed_size if compressed and compressed_size else payload
                yield PtxEntry(memoryview(blob)[start:start + length], compressed,
                               full if compressed else payload)
            entry = start + payload
        pos = end


def scan_library(path: Path) -> dict[str, tuple[int, PtxEntry]]:
    """`.version .target` -> (modules, the smallest module) for one shared object."""
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as blob:
        return _kinds(blob)  # its views of the mapping are gone when it returns


def _kinds(blob: mmap.mmap) -> dict[str, tuple[int, PtxEntry]]:
    kinds: dict[str, tuple[int, PtxEntry]] = {}
    for entry in ptx_entries(blob):
        head = HEAD.search(entry.text(512))
        key = f"{head.group(1).decode()} {head.group(2).decode()}" if head else "unknown"
        count, smallest = kinds.get(key, (0, entry))
        kinds[key] = (count + 1, entry if entry.size < smallest.size else smallest)
    return {key: (count, PtxEntry(bytes(e.data), e.compressed, e.size)) for key, (count, e) in kinds.items()}


def compile_for(ptxas: str, ptx: bytes, arch: str) -> str:
    """'ok', or ptxas's last line of complaint."""
    with tempfile.NamedTemporaryFile(suffix=".ptx") as source:
        source.write(ptx)
        source.flush()
        proc = subprocess.run([ptxas, f"-arch={arch}", source.name, "-o", "/dev/null"],
                              capture_output=True, text=True, timeout=600)
    if proc.returncode == 0:
        return "ok"
    return (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]


def measure(target: Path, ptxas: str | None, arches: list[str]) -> dict[str, object]:
    """A wheel (.whl) or an installed tensorflow/ directory: its PTX kinds and what ptxas says."""
    libraries: dict[str, dict[str, tuple[int, PtxEntry]]] = {}
    if target.suffix == ".whl":
        with zipfile.ZipFile(target) as wheel, tempfile.TemporaryDirectory() as scratch:
            for name in wheel.namelist():
                if LIBRARIES.search(name):
                    libraries[name.rsplit("/", 1)[-1]] = scan_library(Path(wheel.extract(name, scratch)))
                    Path(scratch, name).unlink()
    else:
        for path in sorted(target.rglob("*.so*")):
            if LIBRARIES.search(path.as_posix()):
                libraries[path.name] = scan_library(path)
    kinds: dict[str, dict[str, object]] = {}
    for found in libraries.values():
        for key, (count, smallest) in found.items():
            row = kinds.setdefault(key, {"modules": 0})
            row["modules"] = int(row["modules"]) + count  # type: ignore[call-overload]
            if ptxas and not all(arch in row for arch in arches):
                ptx = smallest.text()
                for arch in arches:
                    row[arch] = compile_for(ptxas, ptx, arch)
    targets = sorted({key.split()[1] for key in kinds})
    return {"target": str(target), "ptx_targets": targets, "kinds": kinds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="+", type=Path, help="a TensorFlow wheel or installed tensorflow/")
    parser.add_argument("--ptxas", help="compile the smallest module of each kind with this ptxas")
    parser.add_argument("--arch", action="append", help="ptxas -arch (repeatable; default sm_100, sm_120)")
    args = parser.parse_args(argv)
    for target in args.targets:
        if not target.exists():
            parser.error(f"{target}: no such file or directory")
        print(json.dumps(measure(target, args.ptxas, args.arch or ["sm_100", "sm_120"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
