"""A cluster document (docs/cluster.md) as bars: all-reduce busbw by message size, each worker's
median step time (a straggler is the one the cluster-straggler finding names), and each
distinct node topology."""

from __future__ import annotations

from statistics import median
from typing import Any

from tfdoctor.pictures.model import Bar, ClusterPictures, TopologyMatrix
from tfdoctor.pictures.topology import topology_matrix


def cluster_pictures(doc: dict[str, Any]) -> ClusterPictures:
    """The bars and matrices of one cluster document."""
    from tfdoctor.cluster import view

    return ClusterPictures(
        busbw=_busbw(doc),
        busbw_whose=view.size_rows(doc)[0],
        steps=_steps(doc, view.stragglers(doc)),
        topologies=_topologies(doc),
    )


def size_label(n: int) -> str:
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:g} {unit}"
    return f"{n} B"


def _busbw(doc: dict[str, Any]) -> tuple[Bar, ...]:
    chief = next((w for w in doc["workers"] if w.get("allreduce")), None)
    if chief is None:
        return ()
    sizes = chief["allreduce"]
    top = max((float(r["busbw_gbs"]) for r in sizes), default=0.0)
    return tuple(
        Bar(size_label(int(r["bytes"])), float(r["busbw_gbs"]), top or None,
            f"{float(r['busbw_gbs']):.3f} GB/s" + ("" if r.get("exact", True) else ", WRONG sum"),
            None if r.get("exact", True) else "wrong")
        for r in sizes
    )


def _steps(doc: dict[str, Any], slow: set[str]) -> tuple[Bar, ...]:
    """Each worker's fastest compute step (judge.py's measure: a synchronous step waits for the
    slowest worker, so the whole step time is alike on all of them), with its median step."""
    compute = {w["task"]: min(w["compute_seconds"]) for w in doc["workers"] if w.get("compute_seconds")}
    top = max(compute.values(), default=0.0)
    bars = []
    for w in doc["workers"]:
        task = w["task"]
        label = task + (f" {w['hostname']}" if w.get("hostname") else "")
        if task not in compute:
            bars.append(Bar(label, None, top or None, f"not measured ({w['outcome']})"))
            continue
        step = f", step {median(w['step_seconds']) * 1000:.1f} ms" if w.get("step_seconds") else ""
        flag = "straggler" if task in slow else None
        bars.append(Bar(label, compute[task], top or None,
                        f"compute {compute[task] * 1000:.2f} ms{step}", flag))
    return tuple(bars)


def _topologies(doc: dict[str, Any]) -> tuple[TopologyMatrix, ...]:
    """One matrix per distinct topology, with the busbw its node's own smoke run measured."""
    from tfdoctor.share.fleet import metrics

    nodes = doc.get("nodes") or []
    seen: list[Any] = []
    out = []
    for i, topo in enumerate(doc.get("topology") or ()):
        if not topo or topo in seen:
            continue
        seen.append(topo)
        facts = ((nodes[i] if i < len(nodes) else None) or {}).get("facts") or {}
        matrix = topology_matrix(topo, metrics(facts).get("busbw_gbs"), f"worker:{i}'s node")
        if matrix is not None:
            out.append(matrix)
    return tuple(out)
