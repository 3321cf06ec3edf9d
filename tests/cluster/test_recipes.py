"""The cluster recipes in integrations/cluster: the Kubernetes Indexed Job against
kubernetes-validate, and its entry script run for real as two "pods" on 127.0.0.1 (the sbatch
script runs under real Slurm in test_slurm_real.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from integrations.programs import INTEGRATIONS, venv_program
from tfdoctor.cluster.workers import free_ports
from tfdoctor.exit_codes import ExitCode

CLUSTER = INTEGRATIONS / "cluster"


def validate(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([venv_program("kubernetes-validate"), "--strict", "-k", "1.30.0",
                           *map(str, paths)], capture_output=True, text=True)


def test_indexed_job_passes_kubernetes_validate_and_a_damaged_one_does_not(tmp_path):
    """The Service and the Indexed Job are valid 1.30 objects; a misspelt field fails."""
    run = validate(CLUSTER / "job.yaml")
    assert run.returncode == 0 and run.stdout.count("passed") == 2, run.stdout + run.stderr
    service, job = yaml.safe_load_all((CLUSTER / "job.yaml").read_text())
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["template"]["spec"]["subdomain"] == service["metadata"]["name"]
    job["spec"]["template"]["spec"]["subdomian"] = "x"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(job))
    assert validate(bad).returncode != 0


@pytest.mark.slow
def test_job_entry_script_runs_two_workers_and_the_chief_reports(tf_cpu_python):
    """Two processes of tfdoctor-tf-config.sh with JOB_COMPLETION_INDEX 0 and 1, as the Job's
    pods run it (hosts from the pattern, here 127.0.0.1 with one port per worker)."""
    base = free_ports(1)[0]
    env = dict(os.environ, TFDOCTOR_WORKERS="2", TFDOCTOR_HOST_PATTERN="127.0.0.1",
               TFDOCTOR_PORT=str(base), TFDOCTOR_PORT_STEP="1", TFDOCTOR_TIMEOUT="120",
               TFDOCTOR=str(Path(sys.executable).parent / "tfdoctor"), TFDOCTOR_PYTHON=tf_cpu_python)
    procs = [subprocess.Popen([str(CLUSTER / "tfdoctor-tf-config.sh")],
                              env=dict(env, JOB_COMPLETION_INDEX=str(i)), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [p.communicate(timeout=200) for p in procs]
    assert [p.returncode for p in procs] == [ExitCode.OK, 0], outs
    doc = json.loads(outs[0][0])
    assert [w["address"] for w in doc["workers"]] == [f"127.0.0.1:{base}", f"127.0.0.1:{base + 1}"]
    assert doc["verdict"]["status"] == "healthy" and doc["launcher"] == "tf-config"
