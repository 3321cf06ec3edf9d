"""Reading JSON documents from outside (saved facts, reports, fleet files) whatever they hold.

Every document tfdoctor reads may come from another machine, a support ticket or an attacker,
so reading is strict and bounded: at most MAX_BYTES, nesting at most MAX_DEPTH, integers at
most MAX_INT_DIGITS digits (Python's own 4,300-digit limit raises a bare ValueError deep
inside json), NaN and Infinity (not JSON, RFC 8259 section 6) read as null so nothing
non-finite reaches `--json`, and lone surrogates (valid as JSON escapes, not encodable as
UTF-8) replaced by U+FFFD. Anything wrong is a DocumentError with one line that says what.

`printable` is the other half: control characters taken from a document are escaped before
any renderer writes them to a terminal (an OSC sequence could retitle or rewrite the screen).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

MAX_BYTES = 64 * 1024 * 1024
"""A facts file is tens of kilobytes; a --json report of an 8-GPU node well under a megabyte."""
MAX_DEPTH = 64
"""The deepest tfdoctor document is under 10 levels."""
MAX_INT_DIGITS = 40
"""Far above any count, size or version number tfdoctor writes (a 64-bit value has 20)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 controls except none, DEL, and C1 controls (0x80-0x9f: 0x9b is a one-byte CSI on some
# terminals); also the Unicode line and paragraph separators and bidi overrides, which reorder
# or split what a person reads.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_CONTROL_KEEP_NEWLINES = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


class DocumentError(ValueError):
    """A document that cannot be read as strict, bounded JSON; str() is one line."""


def read_document(path: Path) -> Any:
    """The parsed JSON value of the file at `path`; DocumentError (one line) on anything wrong.

    OSError is raised as is (the caller words "cannot read" itself).
    """
    with open(path, "rb") as f:
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise DocumentError(f"larger than {MAX_BYTES // (1024 * 1024)} MiB")
    return parse_document(raw)


def parse_document(raw: bytes | str) -> Any:
    """Strict, bounded JSON from bytes (UTF-8, a BOM tolerated) or text."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DocumentError(f"not UTF-8 (byte {exc.start})") from None
    else:
        text = raw
    try:
        data = json.loads(text, parse_int=_int, parse_constant=_constant)
    except RecursionError:
        raise DocumentError(f"nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise DocumentError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:  # our _int, or a float literal Python cannot hold
        raise DocumentError(one_line(str(exc), 120)) from None
    return _clean(data)


def _int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_INT_DIGITS:
        raise DocumentError(f"an integer of {len(literal.lstrip('-'))} digits "
                            f"(at most {MAX_INT_DIGITS})")
    return int(literal)


def _constant(_name: str) -> None:
    """NaN, Infinity, -Infinity: not JSON; read as null (json.loads accepts them by default)."""
    return None


def _clean(data: Any) -> Any:
    """Depth checked, lone surrogates replaced, floats finite; iterative (no recursion limit)."""
    root = [data]
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise DocumentError(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, list):
            for i, item in enumerate(node):
                node[i] = _scalar(item)
                if isinstance(node[i], dict | list):
                    stack.append((node[i], depth + 1))
        else:  # dict
            for key in [k for k in node if _SURROGATE.search(k)]:
                node[_SURROGATE.sub("\ufffd", key)] = node.pop(key)
            for key, item in node.items():
                node[key] = _scalar(item)
                if isinstance(node[key], dict | list):
                    stack.append((node[key], depth + 1))
    return root[0]


def _scalar(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if not value.isascii() else value
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None  # a literal like 1e999 overflows to inf
    return value


def printable(text: str, keep_newlines: bool = False) -> str:
    """`text` with control characters escaped as \\xNN / \\uNNNN: safe to write to a terminal."""
    pattern = _CONTROL_KEEP_NEWLINES if keep_newlines else _CONTROL
    return pattern.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str, limit: int = 200) -> str:
    """A message for one line of stderr: printable, newlines folded, cut at `limit` chars."""
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def read_tfdoctor_document(path: Path) -> Any:
    """`read_document`, and a `schema_version` (top level or under "facts"), if present, that is
    a plain version number: "²" or "1e5" would otherwise reach int() as a digit string."""
    data = read_document(path)
    for holder in (data, data.get("facts") if isinstance(data, dict) else None):
        version = holder.get("schema_version") if isinstance(holder, dict) else None
        if version is None or isinstance(version, int) and not isinstance(version, bool):
            continue
        if not (isinstance(version, str) and re.fullmatch(r"[0-9]{1,9}", version)):
            raise DocumentError(f"schema_version {one_line(repr(version), 40)} is not a "
                                "version number")
    return data
