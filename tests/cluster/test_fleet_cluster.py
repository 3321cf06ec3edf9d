"""`tfdoctor fleet` reads the cluster document (a recorded real run) as one node per worker,
through the CLI, including a worker whose report never arrived."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from tfdoctor.cli import cli
from tfdoctor.exit_codes import ExitCode

RECORDED = Path(__file__).with_name("fixtures") / "cluster-straggler.json"


def fleet(*paths: Path) -> tuple[dict, int]:
    result = CliRunner().invoke(cli, ["fleet", "--json", *map(str, paths)], catch_exceptions=False)
    return json.loads(result.stdout), result.exit_code


def test_fleet_counts_each_worker_of_a_cluster_document():
    """Two workers' node reports become two healthy nodes of one stack, named FILE#worker:i."""
    summary, code = fleet(RECORDED)
    assert code == ExitCode.OK
    assert summary["nodes"] == 2 and summary["counts"] == {"healthy": 2}
    assert summary["stacks"][0]["members"] == [f"{RECORDED}#worker:0", f"{RECORDED}#worker:1"]


def test_a_worker_without_a_report_is_skipped_not_fatal(tmp_path):
    """A null node (its report never reached the chief) is listed as skipped, exit 3 (could not
    check), and the other worker is still counted."""
    doc = json.loads(RECORDED.read_text())
    doc["nodes"][1] = None
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    summary, code = fleet(path)
    assert code == ExitCode.INCOMPLETE
    assert summary["nodes"] == 1
    assert [s["path"] for s in summary["skipped"]] == [f"{path}#worker:1"]
