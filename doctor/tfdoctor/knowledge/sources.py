"""Which TensorFlow releases print from a source file: read from their wheels, not remembered.

TensorFlow's log names the file a line comes from: glog-style lines the whole path
("E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:1032]"), Abseil-style lines
(TensorFlow >= 2.16) the file name alone ("E0000 00:00:... cuda_dnn.cc:535]"). The paths moved
between releases (tensorflow/stream_executor -> tensorflow/compiler/xla/stream_executor ->
external/local_xla/xla/stream_executor), so a path says which releases can have printed the line.
vocabulary/source_files.txt is mined from every family's wheel by benchmarks/mine_vocabulary.py.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

DATA = Path(__file__).with_name("vocabulary") / "source_files.txt"


def _key(family: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", family))


def parse(text: str) -> dict[str, tuple[str, ...]]:
    """{path: its families} from the data file's lines "<dir>/ <families>: <file> <file> ..."."""
    spans: dict[str, list[tuple[str, str]]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        head, names = line.split(": ", 1)
        directory, ranges = head.split(" ")
        for name in names.split():
            spans.setdefault(directory + name, []).extend(
                (part.split("-")[0], part.split("-")[-1]) for part in ranges.split(","))
    families = sorted({f for s in spans.values() for pair in s for f in pair}, key=_key)
    # A range names its ends; every family between them, in the data's own list, is in it.
    position = {f: i for i, f in enumerate(families)}
    expanded: dict[tuple[str, str], tuple[str, ...]] = {}
    out = {}
    for path, pairs in spans.items():
        got: list[str] = []
        for pair in pairs:
            if pair not in expanded:
                expanded[pair] = tuple(families[position[pair[0]]:position[pair[1]] + 1])
            got += expanded[pair]
        out[path] = tuple(sorted(set(got), key=position.__getitem__))
    return out


@cache
def _index() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]], tuple[str, ...]]:
    by_path = parse(DATA.read_text(encoding="utf-8"))
    by_name: dict[str, set[str]] = {}
    for path, fams in by_path.items():
        by_name.setdefault(path.rsplit("/", 1)[-1], set()).update(fams)
    every = tuple(sorted({f for fams in by_path.values() for f in fams}, key=_key))
    return by_path, {n: tuple(sorted(f, key=_key)) for n, f in by_name.items()}, every


def releases(source: str) -> tuple[str, ...]:
    """The families whose wheels name `source`: a whole path (glog-style line) or a bare file name
    (Abseil-style line: every path with that name). () for a file no wheel names."""
    by_path, by_name, _ = _index()
    if "/" not in source:
        return by_name.get(source, ())
    # TensorFlow built as another project's Bazel dependency (TensorFlow Serving, a source build)
    # prints its paths under "external/org_tensorflow/": the same files.
    while source not in by_path and source.startswith("external/") and source.count("/") > 2:
        source = source.split("/", 2)[2]
    return by_path.get(source, ())


def describe(families: tuple[str, ...]) -> str:
    """ "TF 2.0-2.10, 2.12" for the families, ranges over the releases the data covers."""
    _, _, every = _index()
    spans: list[list[str]] = []
    for fam in every:
        if fam not in families:
            continue
        prev = spans[-1][1] if spans else None
        if prev is not None and every.index(prev) + 1 == every.index(fam):
            spans[-1][1] = fam
        else:
            spans.append([fam, fam])
    return "TF " + ", ".join(a if a == b else f"{a}-{b}" for a, b in spans)


def covered() -> str:
    """The releases the data covers, "2.0-2.21"."""
    _, _, every = _index()
    return f"{every[0]}-{every[-1]}"
