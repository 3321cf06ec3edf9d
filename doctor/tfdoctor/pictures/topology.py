"""The topology matrix of one node, from a cluster run's `topology[]` entry (docs/cluster.md):
`nvidia-smi topo -m` when it was captured, else NVML's NVLink states and P2P status per pair,
with the all-reduce busbw the topology predicts (cluster/topology.py) beside the one measured."""

from __future__ import annotations

import re
from typing import Any

from tfdoctor.pictures.model import Bar, TopologyMatrix

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_GPU = re.compile(r"GPU(\d+)")


def topology_matrix(
    topo: dict[str, Any] | None, measured_busbw: float | None, where: str
) -> TopologyMatrix | None:
    """The matrix of a probed topology; None when it has an error or fewer than two GPUs."""
    from tfdoctor.cluster.topology import expected_busbw

    if not topo or topo.get("error"):
        return None
    parsed = parse_smi_topo(topo.get("smi_topo"))
    if parsed is not None:
        labels, cells = parsed
        source = "nvidia-smi topo -m"
    else:
        derived = _from_nvml(topo)
        if derived is None:
            return None
        labels, cells = derived
        source = "NVML (NVLink states, P2P status)"
    if len(labels) < 2 or all(c == "?" for row in cells for c in row if c != "X"):
        return None  # nothing known about any pair: no matrix of question marks
    predicted = expected_busbw(topo)
    return TopologyMatrix(where, labels, cells, source, _busbw_bar(measured_busbw, predicted))


def parse_smi_topo(text: str | None) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]] | None:
    """(GPU labels, cells) of `nvidia-smi topo -m` output; None when it has no GPU matrix.

    Columns are tab-separated; the header names GPU0.. (then NIC0.., CPU Affinity, ...), which
    nvidia-smi underlines with escape sequences on a terminal.
    """
    if not text:
        return None
    lines = [_ANSI.sub("", line) for line in text.splitlines()]
    header = next((line for line in lines if _GPU.fullmatch(line.split("\t")[1].strip() if
                                                         "\t" in line else "")), None)
    if header is None:
        return None
    heads = [h.strip() for h in header.split("\t")]
    columns = [i for i, h in enumerate(heads) if _GPU.fullmatch(h)]
    labels = tuple(heads[i] for i in columns)
    rows: dict[str, tuple[str, ...]] = {}
    for line in lines:
        parts = [p.strip() for p in line.split("\t")]
        if parts and parts[0] in labels and len(parts) > max(columns):
            rows[parts[0]] = tuple(parts[i] or "?" for i in columns)
    if set(rows) != set(labels):
        return None
    return labels, tuple(rows[label] for label in labels)


def _from_nvml(topo: dict[str, Any]) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]] | None:
    gpus = topo.get("gpus") or []
    n = len(gpus)
    if n == 0:
        return None
    links = topo.get("nvlink") or []
    active = [sum(1 for s in (links[i] if i < len(links) else None) or () if s) for i in range(n)]
    p2p = topo.get("p2p") or {}
    read, nvlink = _square(p2p.get("read"), n), _square(p2p.get("nvlink"), n)
    cells = []
    for a in range(n):
        row = []
        for b in range(n):
            if a == b:
                row.append("X")
            elif nvlink[a][b] == "ok" and min(active[a], active[b]) > 0:
                row.append(f"NV{min(active[a], active[b])}")
            elif read[a][b] == "ok":
                row.append("PCIe")
            elif read[a][b] in (None, "unknown"):
                row.append("?")
            else:
                row.append("SYS")
        cells.append(tuple(row))
    return tuple(f"GPU{i}" for i in range(n)), tuple(cells)


def _square(matrix: Any, n: int) -> list[list[str | None]]:
    rows = matrix if isinstance(matrix, list) else []
    out: list[list[str | None]] = []
    for a in range(n):
        row = rows[a] if a < len(rows) and isinstance(rows[a], list) else []
        out.append([row[b] if b < len(row) else None for b in range(n)])
    return out


def _busbw_bar(measured: float | None, predicted: tuple[float, str] | None) -> Bar:
    if predicted is None:
        text = "the topology predicts nothing (link facts missing)"
        if measured is not None:
            text = f"{measured:.1f} GB/s measured; {text}"
        return Bar("all-reduce busbw", measured, None, text)
    expect, why = predicted
    if measured is None:
        return Bar("all-reduce busbw", None, expect,
                   f"not measured; the topology predicts ~{expect:.0f} GB/s ({why})")
    pct = 100.0 * measured / expect
    return Bar("all-reduce busbw", measured, expect,
               f"{measured:.1f} GB/s measured = {pct:.0f} % of the ~{expect:.0f} GB/s predicted "
               f"({why})", "low" if pct < 50 else None)
