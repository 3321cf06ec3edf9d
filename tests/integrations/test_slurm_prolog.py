"""The Slurm Prolog recipe against a real slurmctld + slurmd + munge on 127.0.0.1, with real jobs.

slurm.conf gets the Prolog lines of integrations/slurm/slurm.conf.example as a user would
uncomment them (only the script's path changes), and later its HealthCheckProgram lines (the
interval cut from 600 s to 2 s). Jobs are submitted with the real sbatch and srun; the Prolog's
tfdoctor replays a facts file the tests rewrite to make the node broken or healthy.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from helpers import change, healthy
from programs import INTEGRATIONS, program, version, wait_for, write_facts
from slurm_node import NODE, Cluster, one_node_cluster

CAUSE = "cuda-visible-devices-hides-all"
EXAMPLE = INTEGRATIONS / "slurm" / "slurm.conf.example"
SHIPPED_PATH = "/usr/local/sbin/tfdoctor-slurm.sh"
# Slurm delays a requeued job's start by the credential lifetime (AuthInfo cred_expire, 120 s by
# default, slurm.conf(5)): shortened so the requeued job runs within the test.
CRED_EXPIRE = ",cred_expire=5"


def recipe(*keys: str) -> str:
    """The lines of slurm.conf.example setting `keys`, uncommented, pointing at the test's copy
    of the script ({script}), health checks every 2 s instead of 600 s."""
    lines = []
    for line in EXAMPLE.read_text().splitlines():
        bare = line.lstrip("#").strip()
        if bare.split("=", 1)[0] in keys:
            lines.append(bare.replace(SHIPPED_PATH, "{script}").replace("Interval=600", "Interval=2"))
    assert len(lines) >= len(keys), f"{keys} not all in {EXAMPLE}"
    return "\n".join(lines)


PROLOG = recipe("Prolog", "SchedulerParameters")
HEALTH_CHECK = recipe("HealthCheckProgram", "HealthCheckInterval", "HealthCheckNodeState")


def job(cluster: Cluster, job_id: str) -> dict[str, str]:
    """`scontrol show job` as a dict (the fields the tests read have no spaces)."""
    text = cluster.run(program("scontrol"), "-o", "show", "job", job_id)
    return dict(re.findall(r"(\w+)=(\S*)", text))


def sbatch(cluster: Cluster, name: str) -> tuple[str, Path]:
    """Submit a batch job that appends one line to a file; returns its id and that file."""
    out = cluster.root / f"{name}.out"
    script = cluster.root / f"{name}.sh"
    script.write_text(f'#!/bin/sh\necho "ran on $SLURMD_NODENAME" >> {out}\n')
    script.chmod(0o755)
    job_id = cluster.run(
        program("sbatch"),
        "--parsable",
        "-J",
        name,
        "-D",
        str(cluster.root),
        "-o",
        str(cluster.root / f"{name}.slurm-%j"),
        str(script),
    ).strip()
    return job_id, out


def reconfigure(cluster: Cluster, extra: str) -> None:
    cluster.write_conf(extra)
    cluster.run(program("scontrol"), "reconfigure")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with one_node_cluster(tmp_path_factory.mktemp("prolog"), PROLOG, CRED_EXPIRE) as c:
        print(version([program("slurmd"), "-V"]))
        yield c


@pytest.fixture
def prolog_only(cluster):
    """Each test starts from the Prolog recipe alone, a healthy node, an empty queue."""
    reconfigure(cluster, PROLOG)
    write_facts(cluster.facts, healthy())
    yield cluster
    cluster.run(program("scancel"), "--full", "-u", "root")
    write_facts(cluster.facts, healthy())
    if "DRAIN" in cluster.node():
        cluster.run(program("scontrol"), "update", f"NodeName={NODE}", "State=RESUME")
    (cluster.root / "tfdoctor" / "drained-reason").unlink(missing_ok=True)


def test_a_healthy_node_runs_batch_and_interactive_jobs(prolog_only):
    """The Prolog passes a healthy node: an sbatch job completes, an srun step prints, and
    tfdoctor did run for them (its report is fresh)."""
    cluster = prolog_only
    report = cluster.root / "tfdoctor" / "last.json"
    report.unlink(missing_ok=True)
    job_id, out = sbatch(cluster, "healthy")
    wait_for(lambda: job(cluster, job_id)["JobState"] == "COMPLETED", 60, "the job to complete")
    assert out.read_text() == f"ran on {NODE}\n"
    assert '"status": "healthy"' in report.read_text()
    said = cluster.run(program("srun"), "-N1", "-D", str(cluster.root), "/bin/echo", "step ran")
    assert said == "step ran\n"
    assert "DRAIN" not in cluster.node()


def test_a_broken_node_requeues_the_job_drains_with_the_cause_and_the_health_check_resumes(prolog_only):
    """With nohold_on_prolog_fail (the recipe) a job that meets a broken node goes back to the
    queue, not held; the node is drained with tfdoctor's root cause, which Slurm keeps. No job
    means no Prolog on a drained node, so the recipe keeps the HealthCheckProgram: with it the
    node is resumed once healthy and the requeued job runs there, once."""
    cluster = prolog_only
    write_facts(cluster.facts, change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    job_id, out = sbatch(cluster, "broken")
    # a requeued job passes through COMPLETING (its epilog) before it is PENDING again
    state = wait_for(lambda: (j := job(cluster, job_id))["Restarts"] == "1"
                     and j["JobState"] != "COMPLETING" and j, 60, "the requeue")
    assert state["JobState"] == "PENDING"
    assert state["Reason"] != "launch_failed_requeued_held" and state["Priority"] != "0"
    assert f"[job {job_id}] prolog failed status=1:0" in cluster.log()
    node = cluster.node()
    assert "DRAIN" in node and f"Reason={CAUSE} [root@" in node
    assert cluster.reason() == CAUSE[:20]  # sinfo -R: the cause, no prefix
    assert not out.exists()

    write_facts(cluster.facts, healthy())
    reconfigure(cluster, PROLOG + "\n" + HEALTH_CHECK)
    wait_for(lambda: "DRAIN" not in cluster.node(), 60, "the health check to resume the node")
    wait_for(lambda: job(cluster, job_id)["JobState"] == "COMPLETED", 90, "the requeued job to run")
    assert out.read_text() == f"ran on {NODE}\n"


def test_without_nohold_on_prolog_fail_the_job_is_held(prolog_only):
    """What the recipe warns of, shown: without SchedulerParameters=nohold_on_prolog_fail the
    same failure holds the job ("launch failed requeued held", priority 0) until released."""
    cluster = prolog_only
    reconfigure(cluster, recipe("Prolog"))
    write_facts(cluster.facts, change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    job_id, out = sbatch(cluster, "held")
    # a requeued job passes through COMPLETING (its epilog) before it is PENDING again
    state = wait_for(lambda: (j := job(cluster, job_id))["Restarts"] == "1"
                     and j["JobState"] != "COMPLETING" and j, 60, "the requeue")
    assert state["JobState"] == "PENDING"
    assert state["Reason"] == "launch_failed_requeued_held" and state["Priority"] == "0"
    assert f"Reason={CAUSE} [root@" in cluster.node()


def test_an_interactive_step_on_a_broken_node_fails(prolog_only):
    """srun has nothing to requeue: its step fails, the node is drained with the cause."""
    cluster = prolog_only
    write_facts(cluster.facts, change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    proc = subprocess.run(
        [program("srun"), "-N1", "-D", str(cluster.root), "/bin/echo", "step ran"],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "step ran" not in proc.stdout, proc
    assert "Job prolog failed" in proc.stderr
    assert f"Reason={CAUSE} [root@" in cluster.node()


def test_a_tfdoctor_that_cannot_run_does_not_stop_jobs(prolog_only):
    """A missing tfdoctor (exit 127) is the doctor's failure, not the node's: the Prolog lets
    the job run and leaves the node alone (the HealthCheckProgram reports it loudly)."""
    cluster = prolog_only
    cluster.configure(TFDOCTOR="/nonexistent/tfdoctor")
    try:
        job_id, out = sbatch(cluster, "no-doctor")
        wait_for(lambda: job(cluster, job_id)["JobState"] == "COMPLETED", 60, "the job to complete")
    finally:
        cluster.configure()
    assert out.read_text() == f"ran on {NODE}\n"
    assert "/nonexistent/tfdoctor" in (cluster.root / "tfdoctor" / "last.stderr").read_text()
    assert "DRAIN" not in cluster.node()
