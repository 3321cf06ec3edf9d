"""Read ticket text: files or stdin, bounded, text only; one-line errors for anything else."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from tfdoctor.errors import InputFileError

MAX_BYTES = 8 * 1024 * 1024
"""Per input, and for all inputs together: a ticket is never larger; a bigger file is a mistake."""


def read_inputs(names: list[str], stdin: BinaryIO) -> list[str]:
    """The decoded text of each input ("-" is stdin), in order; raises InputFileError."""
    texts: list[str] = []
    total = 0
    for name in names or ["-"]:
        label = "standard input" if name == "-" else name
        data = _read(name, stdin, label)
        total += len(data)
        if total > MAX_BYTES:
            raise InputFileError(f"{label}: the input is larger than {MAX_BYTES // (1024 * 1024)} MiB; "
                                 "paste the relevant part of the log")
        texts.append(decode(data, label))
    return texts


def _read(name: str, stdin: BinaryIO, label: str) -> bytes:
    try:
        if name == "-":
            return stdin.read(MAX_BYTES + 1)
        with Path(name).open("rb") as handle:
            return handle.read(MAX_BYTES + 1)
    except IsADirectoryError:
        raise InputFileError(f"{label}: is a directory, not a text file") from None
    except OSError as exc:
        raise InputFileError(f"cannot read {label}: {exc.strerror or exc}") from None


def decode(data: bytes, label: str) -> str:
    """UTF-8 or UTF-16 text (with a BOM, as PowerShell writes it, or without one, as some Windows
    tools save "Unicode"); binary is refused."""
    if len(data) > MAX_BYTES:
        raise InputFileError(f"{label}: the input is larger than {MAX_BYTES // (1024 * 1024)} MiB; "
                             "paste the relevant part of the log")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise InputFileError(f"{label}: is binary, not text") from None
    if b"\x00" in data[:65536]:
        text = _utf16_without_bom(data)
        if text is not None:
            return text
        raise InputFileError(f"{label}: is binary, not text (a log, nvidia-smi or pip list is)")
    text = data.decode("utf-8", errors="replace")
    sample = text[:65536]
    if sample and sample.count("\ufffd") > len(sample) // 20:
        raise InputFileError(f"{label}: is binary or not UTF-8 text")
    return text


TEXT_CONTROLS = frozenset("\t\n\r\f\x1b")
"""The control characters a log may hold (\\x1b: colour escapes); any other means not text."""


def _utf16_without_bom(data: bytes) -> str | None:
    """The text of UTF-16 LE or BE without a BOM, or None. A ticket is mostly ASCII, so one byte
    of every pair is NUL at least half the time and the other almost never; and it must decode
    strictly to characters text holds. Binary with NULs fails one or the other."""
    sample = data[:65536]
    if len(data) % 2 or not sample:
        return None
    pairs = len(sample) // 2
    low_zero, high_zero = sample[0::2].count(0), sample[1::2].count(0)
    if high_zero * 2 >= pairs and low_zero * 100 <= pairs:
        codec = "utf-16-le"
    elif low_zero * 2 >= pairs and high_zero * 100 <= pairs:
        codec = "utf-16-be"
    else:
        return None
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:  # a lone surrogate
        return None
    if any(c < " " and c not in TEXT_CONTROLS for c in text[:32768]):
        return None
    return text
