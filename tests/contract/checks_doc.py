"""Generate docs/checks.md from the registry: `python tests/contract/checks_doc.py` rewrites it."""

from __future__ import annotations

import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def render() -> str:
    from tfdoctor.registry import all_checks

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
        if s.consequence_of:
            lines += ["", "Explained by (reported as a consequence when present): "
                      + ", ".join(f"`{c}`" for c in s.consequence_of) + "."]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    DOC.write_text(render())
    sys.stdout.write(f"wrote {DOC}\n")
