"""`tfdoctor cluster --launcher local` for real: tensorflow-cpu workers on 127.0.0.1 running
MultiWorkerMirroredStrategy with RING collectives (no GPU here: NCCL never runs in these tests).

Each test starts real worker processes (about 3 s of TensorFlow import each on this machine),
so the faults are one run each and the healthy run is shared by the tests that read it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clusterkit import gone, no_workers_left, run_cluster
from tfdoctor.cluster.document import render_text
from tfdoctor.exit_codes import ExitCode

pytestmark = pytest.mark.slow

HEALTHY_TIMEOUT = "120"
FAULT_TIMEOUT = 18.0
"""Deadline of the runs where a worker hangs or is missing: the run ends at it."""


def ids(doc: dict) -> list[str]:
    return [f["id"] for f in doc["findings"]]


@pytest.fixture(scope="module")
def healthy(tf_cpu_python):
    """Three workers, no fault: the run every other check of a good job reads."""
    mp = pytest.MonkeyPatch()
    try:
        return run_cluster("--python", tf_cpu_python, "--workers", "3", "--timeout",
                           HEALTHY_TIMEOUT, monkeypatch=mp)
    finally:
        mp.undo()


def test_three_workers_all_reduce_exactly_with_nccl_tests_bandwidths(healthy):
    """The job's figures are real and self-consistent: every size exact on every worker,
    busbw = algbw * 2(n-1)/n (nccl-tests), per-step times from every worker, RING on CPUs."""
    doc, code, _, stderr = healthy
    assert code == ExitCode.OK, (doc["findings"], stderr)
    assert doc["kind"] == "cluster" and doc["launcher"] == "local"
    assert doc["verdict"]["status"] == "healthy" and doc["verdict"]["exit_code"] == 0
    assert [w["outcome"] for w in doc["workers"]] == ["completed"] * 3
    for w in doc["workers"]:
        assert w["collective"] == "RING" and w["replicas"] == 3
        assert w["interface"] == "lo" and w["ip"] == "127.0.0.1"
        assert len(w["step_seconds"]) == 5 and all(t > 0 for t in w["step_seconds"])
        assert [r["bytes"] for r in w["allreduce"]] == [4096, 262144, 4194304]
        for r in w["allreduce"]:
            assert r["exact"] and r["expected_first"] == 6.0  # 1 + 2 + 3
            assert r["algbw_gbs"] == pytest.approx(r["bytes"] / r["seconds"] / 1e9)
            assert r["busbw_gbs"] == pytest.approx(r["algbw_gbs"] * 4 / 3)
        assert 0 <= w["clock_spread_s"] < 1.0
    assert "cluster-nccl-not-run" in ids(doc) and "cluster-allreduce-measured" in ids(doc)
    assert no_workers_left(doc)


def test_every_worker_is_diagnosed_before_the_job(healthy):
    """Each worker's static (--quick) report is in the document, in the report's schema."""
    doc = healthy[0]
    assert len(doc["nodes"]) == 3
    for node in doc["nodes"]:
        assert node["schema_version"] == doc["schema_version"]
        assert node["facts"]["tensorflow"]["version"] == "2.21.0"
        assert not node["facts"].get("smoke")  # --quick semantics: no TensorFlow import


def test_text_rendering_names_workers_sizes_and_verdict(healthy):
    """The text view is a view of the same document: one line per worker, the size table."""
    text = render_text(healthy[0], verbose=True)
    assert text.startswith("Cluster verdict: healthy\n3 worker(s), launcher local")
    assert text.count(" completed ") == 3 and "4 MiB" in text and "RING" in text
    assert "cluster-nccl-not-run" in text


def test_the_real_document_matches_the_cluster_schema(healthy):
    """docs/cluster.schema.json accepts what three real workers produced (every node report,
    topology and size table), not only the recorded fixture."""
    import json

    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "cluster.schema.json").read_text())
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(healthy[0])]
    assert errors == []


def test_fleet_reads_the_cluster_document(healthy, tmp_path):
    """`tfdoctor fleet` takes a cluster document as one node per worker."""
    import json

    from tfdoctor.share.fleet import load_node, summarise

    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(healthy[0]))
    summary = summarise([load_node(path)])
    assert summary["nodes"] == 3 and summary["counts"] == {"healthy": 3}
    assert summary["stacks"][0]["members"][2] == f"{path}#worker:2"


@pytest.mark.parametrize(
    "hook, finding, outcomes",
    [
        ("1:wrong-sum", "cluster-allreduce-wrong", ["completed", "completed"]),
        ("1:kill", "cluster-worker-died", [None, "died"]),
        ("1:hang", "cluster-worker-hung", ["blocked", "hung"]),
        ("1:absent", "cluster-port-unreachable", ["blocked", "port-closed"]),
    ],
)
def test_an_injected_fault_is_the_root_cause_in_time_and_leaves_no_process(
    tf_cpu_python, monkeypatch, hook, finding, outcomes
):
    """Each fault really happens (a wrong sum, SIGKILL, a hang, a port nothing listens on),
    becomes the named root cause with exit code 1 within the deadline, and every worker
    process is gone afterwards."""
    doc, code, seconds, stderr = run_cluster(
        "--python", tf_cpu_python, "--timeout", str(FAULT_TIMEOUT), hook=hook,
        monkeypatch=monkeypatch)
    assert code == ExitCode.PROBLEMS, stderr
    assert doc["verdict"]["root_cause"] == finding, doc["findings"]
    got = [w["outcome"] for w in doc["workers"]]
    assert [o or got[i] for i, o in enumerate(outcomes)] == got
    assert seconds < FAULT_TIMEOUT + 15
    assert no_workers_left(doc)


def test_another_tensorflow_and_a_straggler_are_named(tf_cpu_python, other_tf_python, monkeypatch):
    """Worker 1 runs an interpreter whose TensorFlow says 2.20.0 and computes slowly: the
    version mismatch is the root cause and worker 1 is named the straggler with its ratio."""
    doc, code, _, stderr = run_cluster(
        "--python", tf_cpu_python, "--worker-python", f"1={other_tf_python}", "--timeout",
        HEALTHY_TIMEOUT, hook="1:slow", monkeypatch=monkeypatch)
    assert code == ExitCode.PROBLEMS, stderr
    assert doc["verdict"]["root_cause"] == "cluster-tf-version-differs"
    assert [w["tf_version"] for w in doc["workers"]] == ["2.21.0", "2.20.0"]
    straggler = next(f for f in doc["findings"] if f["id"] == "cluster-straggler")
    assert straggler["message"].startswith("worker:1 is a straggler")
    assert float(straggler["evidence"]["ratio"]) >= 1.5
    assert no_workers_left(doc)


def _children(parent: int) -> list[int]:
    """Pids of the worker processes `parent` started (read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[-1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if stat[1] == str(parent) and b"_worker.py" in cmdline:
            found.append(int(entry))
    return found


def test_sigterm_kills_every_worker_and_exits_143(tf_cpu_python):
    """A scheduler's SIGTERM to `tfdoctor cluster` mid-job: exit 143 and no worker left."""
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([str(Path(sys.executable).parent / "tfdoctor"), "cluster", "--python",
                             tf_cpu_python, "--timeout", "120"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(workers := _children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(workers) == 2, proc.communicate(timeout=5)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == ExitCode.TERMINATED
    time.sleep(0.5)
    assert all(gone(pid) for pid in workers)


def test_a_worker_killed_from_outside_is_named_and_the_rest_are_stopped(tf_cpu_python):
    """SIGKILL from outside (an OOM killer, a scheduler), not from the worker itself: the
    killed worker is the root cause, the run ends well before its deadline, nothing is left."""
    import json
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([str(Path(sys.executable).parent / "tfdoctor"), "cluster", "--python",
                             tf_cpu_python, "--timeout", "120", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(workers := sorted(_children(proc.pid))) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(workers) == 2, proc.communicate(timeout=5)
    time.sleep(1.0)
    os.kill(workers[1], signal.SIGKILL)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == ExitCode.PROBLEMS, err
    doc = json.loads(out)
    assert doc["verdict"]["root_cause"] == "cluster-worker-died"
    died = next(w for w in doc["workers"] if w["outcome"] == "died")
    assert died["exit"] == "SIGKILL" and doc["seconds"] < 60
    assert no_workers_left(doc) and all(gone(pid) for pid in workers)
