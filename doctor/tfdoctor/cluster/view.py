"""The cluster document as the TUI shows it: plain rows of strings, no Textual, no judgement.

Every verdict here comes from the document (its findings and the node reports); this module
only picks and formats. Glyphs carry the meaning, so a screen without colour still reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any

from tfdoctor.docload import printable

NODE_STATUS = {"healthy": "✓ healthy", "problems": "✗ problems", "incomplete": "? incomplete"}
SEVERITY_GLYPH = {"error": "✗", "warning": "!", "info": "i"}
VERDICT_GLYPH = {"healthy": "✓", "problems": "✗", "incomplete": "?"}


@dataclass(frozen=True, slots=True)
class NodeRow:
    """One worker and its node: the per-node table's cells, and whether it is a straggler."""

    cells: tuple[str, ...]
    straggler: bool
    bad: bool


NODE_COLUMNS = ("node", "outcome", "TF", "CUDA", "cuDNN", "NCCL", "driver", "verdict", "step", "ratio")
SIZE_COLUMNS = ("size", "time", "algbw", "busbw", "sum")


def headline(doc: dict[str, Any]) -> str:
    """The verdict line: glyph, status, root cause."""
    v = doc["verdict"]
    cause = f"; root cause: {v['root_cause']}" if v.get("root_cause") else ""
    counts = v.get("counts") or {}
    warn = f" ({counts['warning']} warning(s))" if v["status"] == "healthy" and counts.get("warning") else ""
    return printable(f"{VERDICT_GLYPH.get(v['status'], '?')} Cluster verdict: {v['status']}{warn}{cause}")


def summary(doc: dict[str, Any]) -> str:
    """Workers, how many completed, the collective, the launcher and the time."""
    workers = doc["workers"]
    done = sum(w["outcome"] == "completed" for w in workers)
    collective = next((w["collective"] for w in workers if w.get("collective")), None)
    return printable(
        f"{len(workers)} worker(s), {done} completed | {collective or 'no'} collectives | "
        f"launcher {doc['launcher']} | {doc['seconds']:.1f} s (deadline {doc['timeout_s']:g} s)"
    )


def target(doc: dict[str, Any]) -> str:
    """The interpreter(s) the workers ran, from the node reports (their --python)."""
    pythons: list[str] = []
    for node in doc.get("nodes") or ():
        exe = (((node or {}).get("facts") or {}).get("python") or {}).get("executable")
        if exe and exe not in pythons:
            pythons.append(str(exe))
    return printable("Workers' interpreter: " + (", ".join(pythons) or "unknown"))


def stragglers(doc: dict[str, Any]) -> set[str]:
    """Tasks a cluster-straggler finding names."""
    return {
        str(f["evidence"].get("task") or f["message"].split(" ", 1)[0])
        for f in doc["findings"]
        if f["id"] == "cluster-straggler"
    }


def _ms(values: list[float]) -> str:
    return f"{median(values) * 1000:.1f} ms" if values else "-"


def _ratios(workers: list[dict[str, Any]]) -> dict[str, float]:
    """Each worker's fastest compute step over the median of the others' (judge.py's measure)."""
    best = {w["task"]: min(w["compute_seconds"]) for w in workers if w.get("compute_seconds")}
    out = {}
    for task, t in best.items():
        rest = [v for k, v in best.items() if k != task]
        if rest and median(rest) > 0:
            out[task] = t / median(rest)
    return out


def _versions(node: dict[str, Any] | None) -> tuple[str, str, str, str]:
    """CUDA, cuDNN and NCCL as TensorFlow loads them (the library found), else as it was built;
    and the driver."""
    facts = (node or {}).get("facts") or {}
    libs = {lib.get("name"): lib for lib in facts.get("libraries") or () if isinstance(lib, dict)}
    tf = facts.get("tensorflow") or {}
    driver = facts.get("driver") or {}

    def pick(lib: str, built: str) -> str:
        return str((libs.get(lib) or {}).get("version") or tf.get(built) or "-")

    return (
        pick("cudart", "cuda_version"),
        pick("cudnn", "cudnn_version"),
        pick("nccl", "nccl_version"),
        str(driver.get("driver_version") or "none"),
    )


def node_rows(doc: dict[str, Any]) -> list[NodeRow]:
    """One row per worker: where, what it ran, its node's verdict, its step time and ratio."""
    slow = stragglers(doc)
    ratios = _ratios(doc["workers"])
    nodes = doc.get("nodes") or []
    rows = []
    for w in doc["workers"]:
        node = nodes[w["index"]] if w["index"] < len(nodes) else None
        status = ((node or {}).get("verdict") or {}).get("status")
        ratio = ratios.get(w["task"])
        is_slow = w["task"] in slow
        shown = "-" if ratio is None else "<0.01x" if ratio < 0.01 else f"{ratio:.2f}x"
        ratio_text = shown + (" ▲ straggler" if is_slow else "")
        where = w["task"] + (f" {w['hostname']}" if w.get("hostname") else "")
        tf = w.get("tf_version") or ((node or {}).get("facts") or {}).get("tensorflow", {}).get("version")
        ok = w["outcome"] == "completed"
        cells = (
            where,
            ("✓ " if ok else "✗ ") + w["outcome"],
            str(tf or "-"),
            *_versions(node),
            NODE_STATUS.get(str(status), "- no report"),
            _ms(w.get("step_seconds") or []),
            ratio_text,
        )
        rows.append(NodeRow(tuple(printable(c) for c in cells), is_slow, not ok or status == "problems"))
    return rows


def _size(n: int) -> str:
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:g} {unit}"
    return f"{n} B"


def size_rows(doc: dict[str, Any]) -> tuple[str, list[tuple[tuple[str, ...], bool]]]:
    """(whose figures, rows): the first completed worker's sizes, and whether every worker got
    the exact sum for that size (a wrong sum anywhere marks the row)."""
    workers = [w for w in doc["workers"] if w.get("allreduce")]
    if not workers:
        return "no worker reported an all-reduce", []
    chief = workers[0]
    rows: list[tuple[tuple[str, ...], bool]] = []
    for r in chief["allreduce"]:
        wrong = [
            (w["task"], x["wrong_elements"])
            for w in workers
            for x in w["allreduce"]
            if x["bytes"] == r["bytes"] and not x["exact"]
        ]
        sums = "✓ exact on all" if not wrong else "✗ WRONG: " + ", ".join(f"{t} ({n})" for t, n in wrong)
        rows.append(
            (
                (
                    _size(r["bytes"]),
                    f"{r['seconds'] * 1000:.2f} ms",
                    f"{r['algbw_gbs']:.3f} GB/s",
                    f"{r['busbw_gbs']:.3f} GB/s",
                    sums,
                ),
                bool(wrong),
            )
        )
    return f"{chief['task']}'s figures, {chief.get('collective') or '?'}, {len(workers)} worker(s)", rows


def root_index(doc: dict[str, Any]) -> int | None:
    """The index of the one finding that is the verdict's root cause: the first with its id and
    no cause of its own (two workers' findings may share that id; only one is the root)."""
    root = doc["verdict"].get("root_cause")
    return next((i for i, f in enumerate(doc["findings"])
                 if f["id"] == root and not f.get("caused_by")), None)


def finding_title(f: dict[str, Any], root: str | None) -> str:
    """Glyph, severity, id and its place in the causal chain (`root`: the root cause's id, given
    for the finding at root_index only)."""
    place = "  root cause" if f["id"] == root and not f.get("caused_by") else (
        f"  because of {f['caused_by']}" if f.get("caused_by") else ""
    )
    return f"{SEVERITY_GLYPH.get(f['severity'], '?')} {f['severity']:<7} {f['id']}{place}"


def worker_detail(w: dict[str, Any]) -> str:
    """One worker as plain lines: where it ran, how it ended, what it ran, its times and the
    tail of its log (the cluster screen's Enter on a node row)."""
    ended = ", ".join(str(x) for x in (w.get("outcome"), w.get("phase"), w.get("exit")) if x)
    lines = [f"address: {w.get('address') or '-'} ({w.get('hostname') or '?'}, "
             f"{w.get('interface') or '-'}), pid {w.get('pid') or '?'}",
             f"python: {w.get('python') or '?'}",
             f"ended: {ended or '?'}",
             f"TensorFlow {w.get('tf_version') or '?'}"
             + (" (CUDA build)" if w.get("is_cuda_build") else "")
             + f", collective {w.get('collective') or '-'}, {w.get('replicas') or '?'} replica(s)",
             f"step {_ms(w.get('step_seconds') or [])}, compute {_ms(w.get('compute_seconds') or [])}"]
    if w.get("error"):
        lines.append(f"error: {w['error']}")
    tail = list(w.get("log_tail") or ())[-5:]
    if tail:
        lines += ["", "log (last lines):", *(f"  {line}" for line in tail)]
    return printable("\n".join(lines), keep_newlines=True)


def finding_detail(f: dict[str, Any]) -> str:
    """Message, evidence and hint of one finding, as plain lines."""
    lines = [f["message"]]
    if f.get("evidence"):
        lines += ["", "Evidence:"] + [f"  {k}: {v}" for k, v in f["evidence"].items()]
    if f.get("hint"):
        lines += ["", f"Hint: {f['hint']}"]
    return printable("\n".join(lines), keep_newlines=True)
