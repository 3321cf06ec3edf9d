"""`--launcher slurm` under a real Slurm: slurmctld, munged and two slurmd with distinct
NodeNames on 127.0.0.1 (tests/integrations/programs.py), `salloc -N2` around
`tfdoctor cluster --launcher slurm`, which runs `srun` with one task per node. Each task
builds its TF_CONFIG from SLURM_* and scontrol's NodeAddr; tensorflow-cpu, RING collectives."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from clusterkit import no_workers_left
from integrations.programs import Daemons, SlurmCluster, program, wait_for
from tfdoctor.exit_codes import ExitCode


def _two_free_ports() -> int:
    """A port p with p and p + 1 both free on 127.0.0.1 now (task i listens on p + i)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            base = a.getsockname()[1]
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", base + 1))
                except OSError:
                    continue
                return int(base)
    raise AssertionError("no two consecutive free ports")


def _ended(slurm: SlurmCluster, job_id: str) -> str | None:
    """The job's final state (COMPLETED, FAILED, ...), or None while it is pending or running."""
    line = slurm.run(program("scontrol"), "-o", "show", "job", job_id)
    state = line.split("JobState=", 1)[1].split()[0]
    return None if state in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING") else state


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    with Daemons() as daemons:
        yield SlurmCluster(tmp_path_factory.mktemp("slurm"), ["tfd1", "tfd2"], daemons)


@pytest.mark.slow
def test_srun_two_nodes_runs_the_job_and_the_chief_reports(slurm, tf_cpu_python):
    """The real srun path: two Slurm nodes, one task each, the chief's document on stdout."""
    env = {**os.environ, **slurm.env,
           "PATH": f"{Path(sys.executable).parent}:{slurm.env['PATH']}"}
    base = _two_free_ports()
    proc = subprocess.run(
        [program("salloc"), "-N2", sys.executable, "-m", "tfdoctor", "cluster", "--launcher",
         "slurm", "--python", tf_cpu_python, "--port", str(base), "--timeout", "120", "--json"],
        env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == ExitCode.OK, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["launcher"] == "slurm" and doc["verdict"]["status"] == "healthy"
    assert [w["address"] for w in doc["workers"]] == [f"127.0.0.1:{base}", f"127.0.0.1:{base + 1}"]
    assert [w["outcome"] for w in doc["workers"]] == ["completed", "completed"]
    assert all(r["exact"] for w in doc["workers"] for r in w["allreduce"])
    assert len(doc["nodes"]) == 2 and all(n["verdict"]["status"] == "healthy" for n in doc["nodes"])
    assert no_workers_left(doc)
    assert "tfd1" in slurm.run(program("sinfo"), "-h", "-N", "-t", "idle", "-o", "%N")


@pytest.mark.slow
def test_the_sbatch_recipe_writes_the_cluster_report(slurm, tf_cpu_python, tmp_path):
    """integrations/cluster/tfdoctor-cluster.sbatch as shipped, through `sbatch --wait -N2`:
    the batch step runs the slurm launcher and leaves the report next to the job's log."""
    script = Path(__file__).resolve().parents[2] / "integrations" / "cluster" / "tfdoctor-cluster.sbatch"
    env = {**os.environ, **slurm.env, "TFDOCTOR": str(Path(sys.executable).parent / "tfdoctor"),
           "TFDOCTOR_PYTHON": tf_cpu_python, "TFDOCTOR_PORT": str(_two_free_ports()),
           "TFDOCTOR_TIMEOUT": "120", "TFDOCTOR_OUT": str(tmp_path / "cluster.json")}
    job = subprocess.run([program("sbatch"), "--parsable", f"--chdir={tmp_path}", str(script)],
                         env=env, capture_output=True, text=True, timeout=60, check=True)
    job_id = job.stdout.strip().split(";")[0]
    # polled here every 0.5 s: `sbatch --wait` backs off to 10 s between its own polls
    state = wait_for(lambda: _ended(slurm, job_id), 240, f"job {job_id} to end", every=0.5)
    log = "".join(p.read_text() for p in tmp_path.glob("tfdoctor-cluster-*.log"))
    assert state == "COMPLETED", state + log
    doc = json.loads((tmp_path / "cluster.json").read_text())
    assert doc["launcher"] == "slurm" and len(doc["workers"]) == 2
    assert doc["verdict"]["exit_code"] == ExitCode.OK and "exit 0" in log


def test_slurm_launcher_outside_an_allocation_is_a_usage_error():
    """No SLURM_JOB_ID: nothing to srun into; exit 2 with one line, no srun started."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    proc = subprocess.run([sys.executable, "-m", "tfdoctor", "cluster", "--launcher", "slurm"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == ExitCode.USAGE and "inside an allocation" in proc.stderr
