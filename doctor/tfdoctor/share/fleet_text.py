"""The fleet summary as plain text: a headline, then stacks, failing, slow and skipped."""

from __future__ import annotations

from typing import Any

from tfdoctor.docload import printable
from tfdoctor.share.fleet import FINGERPRINT

LABELS = {
    "driver": "driver",
    "cuda_driver": "CUDA (driver)",
    "cudnn": "cuDNN",
    "nccl": "NCCL",
    "tensorflow": "TF",
    "gpu_model": "GPU",
    "gpu_count": "GPUs",
}


def render_fleet_text(summary: dict[str, Any], limit: int = 20) -> str:
    """Lists longer than `limit` are cut with "... and N more" (--json has everything); control
    characters from the documents are escaped."""
    counts = summary["counts"]
    lines = [
        f"Fleet: {summary['nodes']} node(s) in {len(summary['stacks'])} stack(s); "
        f"{counts.get('healthy', 0)} healthy, {counts.get('problems', 0)} with problems, "
        f"{counts.get('incomplete', 0)} incomplete, {len(summary['outliers'])} slow figure(s); "
        f"{len(summary['skipped'])} file(s) skipped",
        "",
    ]
    if summary["stacks"]:
        lines.append("Stacks (" + " | ".join(LABELS[k] for k in FINGERPRINT) + "):")
    for stack in summary["stacks"]:
        fp = stack["fingerprint"]
        tag = (
            "  (majority)"
            if stack["majority"]
            else "  differs in: "
            + ", ".join(f"{LABELS[k]} {a} vs {b}" for k, (a, b) in stack["differs"].items())
        )
        lines.append(
            f"  {stack['id']:<4} {stack['nodes']:>6} node(s)  "
            + " | ".join(fp[k] for k in FINGERPRINT)
            + tag
        )
        if not stack["majority"]:
            lines.append("         " + _cut(stack["members"], 8))
    lines += _section(
        "Failing",
        summary["failing"],
        limit,
        lambda r: f"{r['node']}  root cause: {r['root_cause'] or '-'}",
    )
    lines += _section(
        "Incomplete (not run or could not check)", summary["incomplete"], limit,
        lambda r: r["node"] + (f"  {_cut(r['unjudged'], 4)}" if r.get("unjudged") else ""),
    )
    lines += _section(
        "Slow (robust z-score below -3.5 among the same GPU model and count)",
        summary["outliers"],
        limit,
        lambda o: (
            f"{o['node']}  {o['metric']} {o['value']:.4g} vs median "
            f"{o['median']:.4g} ({100 * (o['value'] / o['median'] - 1):+.0f} %, "
            f"z {o['robust_z']}; {o['peers']} nodes with {o['class']})"
        ),
    )
    lines += _section(
        "Skipped files", summary["skipped"], limit, lambda s: f"{s['path']}: {s['reason']}"
    )
    # Every value came from a file someone else wrote: no control character reaches the terminal.
    return "\n".join(printable(line) for line in lines) + "\n"


def _section(title: str, rows: list[Any], limit: int, fmt: Any) -> list[str]:
    if not rows:
        return []
    lines = ["", f"{title} ({len(rows)}):"]
    lines += [f"  {fmt(r)}" for r in rows[:limit]]
    if len(rows) > limit:
        lines.append(f"  ... and {len(rows) - limit} more (--json lists all)")
    return lines


def _cut(names: list[str], limit: int) -> str:
    more = f", ... and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more
