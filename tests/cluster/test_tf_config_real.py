"""`--launcher tf-config` for real: two `tfdoctor cluster` processes, each given only its own
TF_CONFIG (as a Kubernetes indexed Job or a TFJob gives it); the chief writes the document.
tensorflow-cpu, RING collectives on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clusterkit import no_workers_left
from tfdoctor.cluster.workers import free_ports, tf_config
from tfdoctor.exit_codes import ExitCode

TFDOCTOR = str(Path(sys.executable).parent / "tfdoctor")


@pytest.mark.slow
def test_two_tf_config_workers_and_the_chief_writes_the_cluster_report(tf_cpu_python):
    """Each process diagnoses its node and runs its task; worker 1's report reaches the chief
    through the job's own collectives (no extra port), and worker 1 writes nothing on stdout."""
    addresses = [f"127.0.0.1:{p}" for p in free_ports(2)]
    procs = [
        subprocess.Popen(
            [TFDOCTOR, "cluster", "--launcher", "tf-config", "--python", tf_cpu_python,
             "--timeout", "120", "--json"],
            env=dict(os.environ, TF_CONFIG=tf_config(addresses, i)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    outs = [p.communicate(timeout=200) for p in procs]
    assert [p.returncode for p in procs] == [ExitCode.OK, 0], outs
    assert outs[1][0] == "" and "the chief (worker 0) writes" in outs[1][1]
    doc = json.loads(outs[0][0])
    assert doc["launcher"] == "tf-config" and doc["verdict"]["status"] == "healthy"
    assert [w["address"] for w in doc["workers"]] == addresses
    assert [w["outcome"] for w in doc["workers"]] == ["completed", "completed"]
    assert all(w["allreduce"] and all(r["exact"] for r in w["allreduce"]) for w in doc["workers"])
    assert all(len(w["step_seconds"]) == 5 for w in doc["workers"])
    assert [n["facts"]["tensorflow"]["version"] for n in doc["nodes"]] == ["2.21.0", "2.21.0"]
    # no GPU driver here: each node says so instead of inventing a topology
    assert [t["error"] for t in doc["topology"]] == ["NVML_ERROR_LIBRARY_NOT_FOUND"] * 2
    assert no_workers_left(doc)


def test_tf_config_missing_is_a_usage_error():
    """Without TF_CONFIG the tf-config launcher has nothing to join: exit 2, one line."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    proc = subprocess.run([TFDOCTOR, "cluster", "--launcher", "tf-config"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == ExitCode.USAGE and "TF_CONFIG is not set" in proc.stderr


@pytest.mark.slow
def test_a_peer_that_never_comes_is_named_by_the_chief_within_the_deadline(tf_cpu_python):
    """TF_CONFIG names two workers and only the chief runs: at the deadline the chief probes
    worker 1's address, finds nothing listening, names it, and leaves no process behind."""
    addresses = [f"127.0.0.1:{p}" for p in free_ports(2)]
    proc = subprocess.run(
        [TFDOCTOR, "cluster", "--launcher", "tf-config", "--python", tf_cpu_python,
         "--timeout", "20", "--json"],
        env=dict(os.environ, TF_CONFIG=tf_config(addresses, 0)),
        capture_output=True, text=True, timeout=90)
    assert proc.returncode == ExitCode.PROBLEMS, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"]["root_cause"] == "cluster-port-unreachable"
    assert [w["outcome"] for w in doc["workers"]] == ["blocked", "port-closed"]
    assert doc["nodes"][1] is None and doc["seconds"] < 35
    assert no_workers_left(doc)
