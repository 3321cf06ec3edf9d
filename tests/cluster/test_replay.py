"""`tfdoctor cluster --replay FILE`: a saved cluster document judged again by today's rules,
through the CLI; bad files are one-line usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tfdoctor.cli import cli
from tfdoctor.exit_codes import ExitCode

RECORDED = Path(__file__).with_name("fixtures") / "cluster-straggler.json"


def replay(path: Path, *args: str):
    return CliRunner().invoke(cli, ["cluster", "--replay", str(path), *args])


def test_replay_of_a_recorded_run_gives_the_same_findings():
    """Today's rules on the recorded workers and node reports: the same ids, a fresh verdict,
    and the document is the cluster document again (kind, workers, nodes)."""
    result = replay(RECORDED, "--json")
    assert result.exit_code == ExitCode.OK, result.stderr
    doc, saved = json.loads(result.stdout), json.loads(RECORDED.read_text())
    assert [f["id"] for f in doc["findings"]] == [f["id"] for f in saved["findings"]]
    assert doc["kind"] == "cluster" and doc["verdict"]["exit_code"] == 0
    assert doc["workers"] == saved["workers"] and len(doc["nodes"]) == 2


def test_replay_text_and_a_problem_found_today(tmp_path):
    """Plain text off a terminal; a recorded worker on another TensorFlow is the root cause,
    exit 1, as in a live run."""
    text = replay(RECORDED)
    assert text.exit_code == 0 and text.stdout.startswith("Cluster verdict: healthy")
    doc = json.loads(RECORDED.read_text())
    doc["workers"][1]["tf_version"] = "2.20.0"
    path = tmp_path / "other-tf.json"
    path.write_text(json.dumps(doc))
    result = replay(path, "--json")
    assert result.exit_code == ExitCode.PROBLEMS
    assert json.loads(result.stdout)["verdict"]["root_cause"] == "cluster-tf-version-differs"


@pytest.mark.parametrize(
    "content, says",
    [
        ("{not json", "not a JSON document"),
        ('{"schema_version": "2", "facts": {}}', "not a tfdoctor cluster document"),
        ('{"kind": "cluster", "workers": 3}', "damaged cluster document"),
        ('{"kind": "cluster", "launcher": "local", "workers": [{"task": 1}], "nodes": [], '
         '"seconds": 1, "timeout_s": 1}', "damaged cluster document"),
    ],
    ids=["not-json", "a-report", "workers-not-a-list", "worker-missing-keys"],
)
def test_a_bad_file_is_a_one_line_usage_error(tmp_path, content, says):
    """Whatever the file holds: exit 2, one line on stderr, never a traceback."""
    path = tmp_path / "doc.json"
    path.write_text(content)
    result = replay(path)
    assert result.exit_code == ExitCode.USAGE, result.output
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_the_single_node_replay_points_at_the_cluster_one():
    """`tfdoctor replay` given a cluster document says which command reads it (exit 2)."""
    result = CliRunner().invoke(cli, ["replay", str(RECORDED)])
    assert result.exit_code == ExitCode.USAGE
    assert "tfdoctor cluster --replay" in result.stderr
