"""The cluster document (docs/cluster.md): per-worker records, per-node reports, the cluster
findings and one verdict; its exit code; its text rendering."""

from __future__ import annotations

from typing import Any

from tfdoctor import __version__
from tfdoctor.cluster.judge import judge
from tfdoctor.exit_codes import ExitCode
from tfdoctor.facts import SCHEMA_VERSION
from tfdoctor.findings import Finding, Severity
from tfdoctor.report import _finding_dict


def build_document(
    launcher: str,
    workers: list[dict[str, Any]],
    nodes: list[dict[str, Any] | None],
    seconds: float,
    timeout: float,
    topologies: list[dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """One JSON-ready document; `verdict.exit_code` is filled in by `exit_code`."""
    topologies = topologies or [None] * len(nodes)
    findings = judge(workers, nodes) + _inside_nodes(workers, nodes, topologies)
    errors = [f for f in findings if f.severity is Severity.ERROR and f.caused_by is None]
    incomplete = any(((n or {}).get("verdict") or {}).get("status") == "incomplete" for n in nodes) or any(
        n is None for n in nodes
    )
    status = "problems" if errors else "incomplete" if incomplete else "healthy"
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "cluster",
        "tool_version": __version__,
        "launcher": launcher,
        "seconds": round(seconds, 3),
        "timeout_s": timeout,
        "verdict": {
            "status": status,
            "root_cause": errors[0].id if errors else None,
            "counts": {s.value: sum(f.severity is s for f in findings) for s in Severity},
            "exit_code": None,
        },
        "findings": [_finding_dict(f) for f in findings],
        "workers": workers,
        "nodes": nodes,
        "topology": topologies,
    }


def _inside_nodes(
    workers: list[dict[str, Any]], nodes: list[dict[str, Any] | None], topologies: list[Any]
) -> list[Finding]:
    """Each node's interconnect findings, once per distinct topology (workers of one machine
    share it), with the node's own multi-GPU busbw when its report ran the smoke recipe."""
    from tfdoctor.cluster.topology import judge_topology
    from tfdoctor.share.fleet import metrics

    out: list[Finding] = []
    seen: list[Any] = []
    for i, topo in enumerate(topologies):
        if not topo or topo in seen:
            continue
        seen.append(topo)
        env = workers[i]["nccl_env"] if i < len(workers) else {}
        busbw = metrics(((nodes[i] if i < len(nodes) else None) or {}).get("facts") or {}).get("busbw_gbs")
        out.extend(judge_topology(topo, env, busbw, where=f"worker:{i}'s node"))
    return out


def exit_code(doc: dict[str, Any], fail_on: str = "error") -> ExitCode:
    """The single-node rule: problems (at --fail-on) win over incomplete, else healthy."""
    threshold = Severity(fail_on).rank
    if any(Severity(f["severity"]).rank >= threshold for f in doc["findings"]):
        return ExitCode.PROBLEMS
    if any(
        ((n or {}).get("verdict") or {}).get("exit_code") == ExitCode.PROBLEMS
        and threshold <= Severity.ERROR.rank
        for n in doc["nodes"]
    ):
        return ExitCode.PROBLEMS
    return ExitCode.INCOMPLETE if doc["verdict"]["status"] == "incomplete" else ExitCode.OK


def _size(n: int) -> str:
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:g} {unit}"
    return f"{n} B"


def _ms(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[len(ordered) // 2] * 1000:.1f} ms"


def render_text(doc: dict[str, Any], verbose: bool = False, unicode: bool = True) -> str:
    """The plain-text view: verdict, one line per worker, the all-reduce table, the pictures
    (busbw by size, each worker's compute time, the node topologies; ASCII bars unless
    `unicode`), findings."""
    from tfdoctor.pictures import cluster_pictures
    from tfdoctor.pictures.text import render_cluster_pictures

    v = doc["verdict"]
    lines = [
        f"Cluster verdict: {v['status']}" + (f"; root cause: {v['root_cause']}" if v["root_cause"] else ""),
        f"{len(doc['workers'])} worker(s), launcher {doc['launcher']}, "
        f"{doc['seconds']:.1f} s (deadline {doc['timeout_s']:g} s)",
        "",
    ]
    for w in doc["workers"]:
        lines.append(
            f"{w['task']:<10} {w['address']:<21} {w['interface'] or '-':<6} {w['outcome']:<10} "
            f"TF {w['tf_version'] or '-':<8} {w['collective'] or '-':<5} "
            f"step {_ms(w['step_seconds'])}  compute {_ms(w['compute_seconds'])}"
        )
    chief = next((w for w in doc["workers"] if w["allreduce"]), None)
    if chief:
        lines += ["", f"all-reduce ({chief['task']}): size  time  algbw  busbw  exact"]
        for r in chief["allreduce"]:
            lines.append(
                f"  {_size(r['bytes']):>9}  {r['seconds'] * 1000:8.2f} ms  "
                f"{r['algbw_gbs']:.3f} GB/s  {r['busbw_gbs']:.3f} GB/s  "
                f"{'yes' if r['exact'] else 'NO'}"
            )
    seen: list[Any] = []
    lines.append("")
    lines += render_cluster_pictures(cluster_pictures(doc), unicode)
    for i, topo in enumerate(doc.get("topology") or ()):
        if topo and topo not in seen:
            seen.append(topo)
            lines.append(f"node of worker:{i}: {_topology_line(topo)}")
    shown = [f for f in doc["findings"] if verbose or f["severity"] != "info"]
    if shown and lines[-1]:
        lines.append("")
    for f in shown:
        lines.append(f"{f['severity']:<7} {f['id']}")
        lines.append(f"        {f['message']}")
        if f.get("hint"):
            lines.append(f"        hint: {f['hint']}")
    return "\n".join(lines) + "\n"


def _topology_line(topo: dict[str, Any]) -> str:
    if topo.get("error"):
        return f"GPU topology unknown ({topo['error']})"
    links = [sum(1 for s in g or () if s) for g in topo.get("nvlink") or ()]
    read = [v for row in (topo.get("p2p") or {}).get("read") or () for v in row or () if v]
    p2p = "P2P ok" if read and all(v == "ok" for v in read) else "P2P not everywhere" if read else "-"
    nvlink = f"NVLink {min(links)}-{max(links)} active link(s) per GPU" if any(links) else "no NVLink"
    return f"{len(topo.get('gpus') or ())} GPU(s), {nvlink}, {p2p}"
