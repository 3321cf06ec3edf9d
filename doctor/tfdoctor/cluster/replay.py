"""`tfdoctor cluster --replay FILE`: a saved cluster document through today's rules.

Each node report is judged again from its facts (as `tfdoctor replay` does for one machine) and
the cluster findings are judged again from the recorded workers, node reports and topologies;
what the job measured stays as it was recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfdoctor.errors import InputFileError


def load_document(path: Path) -> dict[str, Any]:
    """The re-judged document; a one-line InputFileError on anything that is not one."""
    from tfdoctor.docload import DocumentError, one_line, read_tfdoctor_document

    try:
        data = read_tfdoctor_document(path)
    except OSError as exc:
        raise InputFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    except DocumentError as exc:
        raise InputFileError(f"{path} is not a JSON document tfdoctor can read: {exc}") from None
    if not isinstance(data, dict) or data.get("kind") != "cluster":
        raise InputFileError(f"{path} is not a tfdoctor cluster document (no \"kind\": \"cluster\"); "
                             "a single node's report replays with `tfdoctor replay`")
    try:
        return _rejudge(data)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise InputFileError(f"{path} is a damaged cluster document: "
                             f"{type(exc).__name__}: {one_line(str(exc), 80)}") from None


def _rejudge(data: dict[str, Any]) -> dict[str, Any]:
    from tfdoctor.cluster.document import build_document

    workers = data["workers"]
    if not isinstance(workers, list) or not all(isinstance(w, dict) for w in workers):
        raise TypeError("workers is not a list of objects")
    nodes = [_node(n) if n is not None else None for n in data["nodes"]]
    topology = data.get("topology") or [None] * len(nodes)
    return build_document(str(data["launcher"]), workers, nodes, float(data["seconds"]),
                          float(data["timeout_s"]), list(topology))


def _node(node: Any) -> dict[str, Any]:
    """One node report judged again from its facts with its recorded config."""
    from tfdoctor.exit_codes import exit_code_for
    from tfdoctor.facts import SCHEMA_VERSION, Facts
    from tfdoctor.registry import CheckConfig
    from tfdoctor.report import build_report

    facts = Facts.from_dict({**node["facts"], "schema_version": SCHEMA_VERSION})
    expect = (node.get("config") or {}).get("expect_gpus")
    report = build_report(facts, CheckConfig(expect_gpus=expect if isinstance(expect, int) else None))
    return report.to_dict(exit_code=int(exit_code_for(report)))
