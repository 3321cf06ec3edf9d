"""Read and write the vocabulary's TOML (a writer small enough to keep the output stable and sorted)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

FIELDS = ("text", "level", "source_file", "releases", "cause", "benign", "doc", "origin")


def load_toml(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    with path.open("rb") as f:
        return tomllib.load(f)


def _value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    return json.dumps(v, ensure_ascii=False)


def dump_entries(header: str, entries: list[dict[str, Any]]) -> str:
    """`[[template]]` tables, one per entry, fields in a fixed order, None left out."""
    out = [header]
    for e in entries:
        out.append("\n[[template]]")
        for k in FIELDS:
            if e.get(k) is not None:
                out.append(f"{k} = {_value(e[k])}")
    return "\n".join(out) + "\n"
