"""Generate docs/checks.md from the registry: `python tests/contract/checks_doc.py` rewrites it."""

from __future__ import annotations

import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def render() -> str:
    from tfdoctor.checks import all_checks
    from tfdoctor.knowledge import catalogue

    lines = [
        "# Checks and finding ids",
        "",
        "Generated from the check registry by `python tests/contract/checks_doc.py`; a test keeps it",
        "in step with the code. Ids are a public contract: they are never renamed silently.",
        "Checks run in this order, which is also root-cause order: the first error that no other",
        "finding explains is named as the root cause.",
        "",
    ]
    for s in all_checks():
        lines += [f"## `{s.id}`", "", f"{s.title} (area: {s.area}).", "", s.doc, "",
                  "Findings: " + ", ".join(f"`{f}`" for f in s.finding_ids) + "."]
        causes = dict.fromkeys(c for f in s.finding_ids for c in catalogue().explainers(f, s.id))
        if causes:
            lines += ["", "Explained by (reported as a consequence when present; the catalogue's links): "
                      + ", ".join(f"`{c}`" for c in causes) + "."]
        lines.append("")
    lines += _cluster()
    return "\n".join(lines)


def _cluster() -> list[str]:
    """The cluster findings (tfdoctor/cluster/catalogue.py): one table per group, severity,
    when each fires and its hint."""
    from tfdoctor.cluster.catalogue import CLUSTER_CHECKS

    lines = [
        "# Cluster finding ids",
        "",
        "Reported only by `tfdoctor cluster` ([cluster.md](cluster.md)), which compares the workers",
        "and nodes of one MultiWorkerMirroredStrategy job; `tfdoctor explain ID` knows them too.",
        "",
    ]
    for c in CLUSTER_CHECKS:
        lines += [f"## `{c.id}`", "", f"{c.title} (area: {c.area}).", "", c.doc, "",
                  "| finding | severity | when | hint |", "| --- | --- | --- | --- |"]
        for f in c.findings:
            cells = [f.when, f.hint]
            when, hint = (x.replace("|", "\\|") for x in cells)
            lines.append(f"| `{f.id}` | {f.severity.value} | {when} | {hint} |")
        lines.append("")
    return lines


if __name__ == "__main__":
    DOC.write_text(render())
    sys.stdout.write(f"wrote {DOC}\n")
