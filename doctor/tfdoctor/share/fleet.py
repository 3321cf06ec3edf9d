"""The fleet view: many nodes' reports grouped by stack, with the odd, failing and slow ones.

Reports are read with `json` only and reduced to a small Node each: building full Facts and
Reports for 10,000 nodes would cost seconds we do not need (benchmarks/bench_fleet.py). Files
that are not tfdoctor reports are listed as skipped, never fatal.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfdoctor.docload import DocumentError, one_line, read_tfdoctor_document
from tfdoctor.facts import READABLE_SCHEMAS
from tfdoctor.share.stats import low_outliers

FINGERPRINT = ("driver", "cuda_driver", "cudnn", "nccl", "tensorflow", "gpu_model", "gpu_count")
"""What makes two nodes' stacks the same; "cuda_driver" is the CUDA version the driver supports."""

GPU_METRICS = ("float32_tflops", "float16_tflops", "bfloat16_tflops", "bandwidth_gbs")
"""Per-GPU figures of the smoke `throughput` recipe; a node counts with its slowest GPU."""
NODE_METRICS = ("busbw_gbs",)
"""Per-node figures of the smoke `multi-device` recipe (NCCL all-reduce bus bandwidth)."""


@dataclass(frozen=True, slots=True)
class Node:
    """One node's report, reduced to what the fleet view compares."""

    name: str
    status: str
    """healthy, problems, incomplete (from the report's verdict)."""
    root_cause: str | None
    exit_code: int | None
    fingerprint: tuple[str, ...]
    metrics: dict[str, float] = field(default_factory=dict)
    unjudged: tuple[str, ...] = ()
    """Checks that did not run, could not check or crashed, as "check (status)"."""

    @property
    def peer_class(self) -> str:
        """Nodes whose throughput is comparable: same GPU model and count."""
        fp = dict(zip(FINGERPRINT, self.fingerprint, strict=True))
        return f"{fp['gpu_count']} x {fp['gpu_model']}"


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that is not a readable tfdoctor report, and why."""

    path: str
    reason: str


def report_files(paths: Iterable[Path]) -> Iterator[Path | Skipped]:
    """Files as given, and every *.json under a directory (sorted; hidden files skipped)."""
    for path in paths:
        if path.is_dir():
            yield from sorted(
                p for p in path.rglob("*.json") if p.is_file() and not p.name.startswith(".")
            )
        elif path.exists():
            yield path
        else:
            yield Skipped(str(path), "no such file or directory")


def load_node(path: Path) -> Node | Skipped | tuple[Node | Skipped, ...]:
    """Read one report (a --json document, or a bare facts file judged now); never raises.

    Whatever a file holds, it becomes a Node or a Skipped with its reason: one hostile file in
    a directory of thousands must not stop the fleet view (docs/report-and-fleet.md).
    """
    try:
        return _load_node(path)
    except Exception as exc:  # noqa: BLE001  (a bug on odd data too: skipped and counted)
        return Skipped(str(path), f"damaged report ({type(exc).__name__}: {one_line(str(exc), 80)})")


def _load_node(path: Path) -> Node | Skipped | tuple[Node | Skipped, ...]:
    try:
        data = read_tfdoctor_document(path)
    except OSError as exc:
        return Skipped(str(path), f"cannot read: {exc.strerror or exc}")
    except DocumentError as exc:
        return Skipped(str(path), f"not a JSON document tfdoctor can read ({exc})")
    if not isinstance(data, dict):
        return Skipped(str(path), "not a tfdoctor report (not a JSON object)")
    if data.get("kind") == "cluster" and isinstance(data.get("nodes"), list):
        # `tfdoctor cluster --json`: one node per worker's report (docs/cluster.md)
        return tuple(
            _node(f"{path}#worker:{i}", n, path) if isinstance(n, dict)
            else Skipped(f"{path}#worker:{i}", "no report from this worker")
            for i, n in enumerate(data["nodes"])
        )
    return _node(str(path), data, path)


def _node(name: str, data: dict[str, Any], path: Path) -> Node | Skipped:
    nested = data.get("facts")
    facts: dict[str, Any] = nested if isinstance(nested, dict) else data
    version = data.get("schema_version", facts.get("schema_version"))
    if version is None or not isinstance(facts.get("python"), dict):
        return Skipped(name, "not a tfdoctor report (no schema_version)")
    if str(version) not in READABLE_SCHEMAS:
        return Skipped(name,
                       f"schema version {version}; this tfdoctor reads {', '.join(READABLE_SCHEMAS)}")
    try:
        verdict = data.get("verdict") if facts is not data else _judge(path)
        if not isinstance(verdict, dict) or verdict.get("status") not in (
            "healthy",
            "problems",
            "incomplete",
        ):
            return Skipped(name, "damaged report (no verdict)")
        code = verdict.get("exit_code")
        return Node(
            name,
            verdict["status"],
            _str(verdict.get("root_cause")),
            code if isinstance(code, int) else None,
            fingerprint(facts),
            metrics(facts),
            _unjudged(data.get("outcomes") if facts is not data else None),
        )
    except (AttributeError, TypeError, ValueError, KeyError) as exc:
        return Skipped(name, f"damaged report ({type(exc).__name__}: {str(exc)[:80]})")


def _unjudged(outcomes: object) -> tuple[str, ...]:
    """"check (status)" for each outcome a report left unjudged (never counted as passed)."""
    if not isinstance(outcomes, list):
        return ()
    return tuple(
        f"{o['check']} ({o['status']})" for o in outcomes
        if isinstance(o, dict) and isinstance(o.get("check"), str)
        and o.get("status") in ("not-run", "could-not-check", "crashed")
    )


def _judge(path: Path) -> dict[str, Any]:
    """A bare facts file has no verdict: judge it with today's rules (slower; rare in fleets)."""
    from tfdoctor.errors import InputFileError
    from tfdoctor.exit_codes import exit_code_for
    from tfdoctor.report import build_report, load_facts_file

    try:
        facts, config = load_facts_file(path)
    except InputFileError as exc:
        raise ValueError(str(exc)) from None
    report = build_report(facts, config)
    return report.to_dict(exit_code=int(exit_code_for(report)))["verdict"]


def fingerprint(facts: dict[str, Any]) -> tuple[str, ...]:
    """The stack of one node as strings, in FINGERPRINT order; "-" for not known."""
    driver = facts.get("driver") or {}
    libs = {lib.get("name"): lib for lib in facts.get("libraries") or () if isinstance(lib, dict)}
    tf = facts.get("tensorflow") or {}
    gpus = [g for g in driver.get("gpus") or () if isinstance(g, dict)]
    models = Counter(str(g.get("name") or "?") for g in gpus)
    tf_version = tf.get("version") and str(tf["version"]) + (
        "" if tf.get("is_cuda_build") is not False else " (cpu)"
    )
    return tuple(
        _str(v) or "-"
        for v in (
            driver.get("driver_version") or driver.get("nvml_error"),
            driver.get("cuda_driver_version"),
            (libs.get("cudnn") or {}).get("version"),
            (libs.get("nccl") or {}).get("version"),
            tf_version,
            " + ".join(sorted(models)) or "no GPU",
            str(len(gpus)),
        )
    )


def metrics(facts: dict[str, Any]) -> dict[str, float]:
    """Smoke figures of one node: each GPU metric at its slowest GPU, and the all-reduce busbw."""
    out: dict[str, float] = {}
    smoke = facts.get("smoke") or {}
    for recipe in smoke.get("recipes") or ():
        if not isinstance(recipe, dict) or recipe.get("status") != "passed":
            continue
        values = recipe.get("metrics") or {}
        device = str(recipe.get("device") or "")
        if recipe.get("name") == "throughput" and device.startswith("GPU"):
            for key in GPU_METRICS:
                v = _number(values.get(key))
                if v is not None:
                    out[key] = min(out.get(key, v), v)
        elif recipe.get("name") == "multi-device":
            for key in NODE_METRICS:
                v = _number(values.get(key))
                if v is not None:
                    out[key] = v
    return out


def summarise(loaded: Iterable[Node | Skipped | tuple[Node | Skipped, ...]]) -> dict[str, Any]:
    """The fleet summary as a JSON-ready dict (docs/report-and-fleet.md describes every key)."""
    items = [x for item in loaded for x in (item if isinstance(item, tuple) else (item,))]
    nodes = [n for n in items if isinstance(n, Node)]
    skipped = [s for s in items if isinstance(s, Skipped)]
    stacks = Counter(n.fingerprint for n in nodes)
    ranked = sorted(stacks, key=lambda fp: (-stacks[fp], fp))
    ids = {fp: f"S{i + 1}" for i, fp in enumerate(ranked)}
    majority = ranked[0] if ranked else None
    members: dict[tuple[str, ...], list[str]] = {fp: [] for fp in ranked}
    for n in nodes:
        members[n.fingerprint].append(n.name)
    outliers = _outliers(nodes)
    return {
        "fleet_version": "1",
        "nodes": len(nodes),
        "counts": dict(Counter(n.status for n in nodes)),
        "stacks": [
            {
                "id": ids[fp],
                "nodes": stacks[fp],
                "majority": fp == majority,
                "fingerprint": dict(zip(FINGERPRINT, fp, strict=True)),
                "differs": _differs(fp, majority),
                "members": members[fp],
            }
            for fp in ranked
        ],
        "odd_ones_out": [
            {
                "node": n.name,
                "stack": ids[n.fingerprint],
                "differs": _differs(n.fingerprint, majority),
            }
            for n in nodes
            if n.fingerprint != majority
        ],
        "failing": [_row(n) for n in nodes if n.status == "problems"],
        "incomplete": [_row(n) for n in nodes if n.status == "incomplete"],
        "outliers": outliers,
        "skipped": [{"path": s.path, "reason": s.reason} for s in skipped],
        "exit_code": _exit_code(nodes, skipped, bool(outliers)),
    }


def _outliers(nodes: list[Node]) -> list[dict[str, Any]]:
    out = []
    classes: dict[str, list[Node]] = {}
    for n in nodes:
        classes.setdefault(n.peer_class, []).append(n)
    for peer_class, peers in sorted(classes.items()):
        for metric in (*GPU_METRICS, *NODE_METRICS):
            values = {n.name: n.metrics[metric] for n in peers if metric in n.metrics}
            for o in low_outliers(values):
                out.append(
                    {
                        "node": o.name,
                        "metric": metric,
                        "value": o.value,
                        "median": o.median,
                        "robust_z": o.robust_z,
                        "peers": len(values),
                        "class": peer_class,
                    }
                )
    return out


def _differs(fp: tuple[str, ...], majority: tuple[str, ...] | None) -> dict[str, list[str]]:
    """Field -> [this stack's value, the majority's value], for the fields that differ."""
    if majority is None:
        return {}
    return {k: [a, b] for k, a, b in zip(FINGERPRINT, fp, majority, strict=True) if a != b}


def _row(n: Node) -> dict[str, Any]:
    return {
        "node": n.name,
        "status": n.status,
        "root_cause": n.root_cause,
        "exit_code": n.exit_code,
        "unjudged": list(n.unjudged),
    }


def _exit_code(nodes: list[Node], skipped: list[Skipped], slow: bool) -> int:
    """1 if a node has problems or is slow; 3 if one could not be checked or read; else 0."""
    if slow or any(n.status == "problems" for n in nodes):
        return 1
    if not nodes or skipped or any(n.status == "incomplete" for n in nodes):
        return 3
    return 0


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)
