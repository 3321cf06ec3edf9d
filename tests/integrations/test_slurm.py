"""The Slurm health check against a real slurmctld + slurmd + munge on 127.0.0.1.

slurmd runs the shipped script as its HealthCheckProgram every 2 s, in its own bare environment
(only SLURMD_NODENAME): the settings come from the settings file, whose path is the one line of
the script the test changes. The script runs the real tfdoctor, replaying a facts file the test
rewrites to turn the node broken or healthy.
"""

from __future__ import annotations

import pytest
from helpers import change, healthy
from programs import program, version, wait_for, write_facts
from slurm_node import NODE, one_node_cluster

CAUSE = "cuda-visible-devices-hides-all"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with one_node_cluster(tmp_path_factory.mktemp("slurm")) as c:
        yield c


def test_bad_verdict_drains_with_the_root_cause_and_a_good_one_resumes(cluster):
    """The whole loop under real slurmd: broken -> drained, reason = root cause; healthy ->
    resumed. The health check gets no PATH and no TFDOCTOR_* variables from slurmd."""
    print(version([program("slurmd"), "-V"]), version([program("munged"), "-V"]))
    write_facts(cluster.facts, change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    line = wait_for(lambda: "DRAIN" in (n := cluster.node()) and n, 30, "the node to drain")
    assert f"Reason={CAUSE} [root@" in line
    assert cluster.reason() == CAUSE[:20]  # sinfo -R's 20 columns: the cause, no prefix
    assert (cluster.root / "tfdoctor" / "drained-reason").read_text().strip() == CAUSE
    write_facts(cluster.facts, healthy())
    wait_for(lambda: "DRAIN" not in cluster.node(), 30, "the node to resume")
    assert not (cluster.root / "tfdoctor" / "drained-reason").exists()


def test_a_node_drained_by_someone_else_stays_drained(cluster):
    """An operator's drain is theirs: a healthy verdict never resumes it, a bad one keeps
    their reason."""
    scontrol = program("scontrol")
    cluster.run(scontrol, "update", f"NodeName={NODE}", "State=DRAIN", "Reason=disk-swap")
    try:
        write_facts(cluster.facts, change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
        runs = cluster.log().count("health_check")
        wait_for(lambda: _checks_run(cluster) >= 2, 30, "two health checks")
        assert "Reason=disk-swap" in cluster.node()
        write_facts(cluster.facts, healthy())
        wait_for(lambda: _checks_run(cluster) >= 4, 30, "two more health checks")
        assert "Reason=disk-swap" in cluster.node() and "DRAIN" in cluster.node()
        assert cluster.log().count("health_check") == runs  # none failed
    finally:
        cluster.run(scontrol, "update", f"NodeName={NODE}", "State=RESUME")


@pytest.mark.parametrize(
    "settings, words",
    [
        ({"TFDOCTOR": "/nonexistent/tfdoctor"}, "cannot run tfdoctor '/nonexistent/tfdoctor' (exit 127)"),
        ({"TFDOCTOR_ARGS": "replay /nonexistent.json"}, "refused its arguments or input (exit 2"),
    ],
)
def test_a_tfdoctor_that_cannot_run_is_an_error_in_slurmds_log(cluster, settings, words):
    """127 and 2 are never read as healthy: slurmd logs "health_check failed" with the reason,
    and a node drained by tfdoctor stays drained."""
    write_facts(cluster.facts, change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    wait_for(lambda: "DRAIN" in cluster.node(), 30, "the node to drain")
    cluster.configure(**settings)
    try:
        write_facts(cluster.facts, healthy())
        wait_for(lambda: words in cluster.log(), 30, f"slurmd to log {words!r}")
        assert "error: health_check failed: rc:1" in cluster.log()
        assert f"Reason={CAUSE}" in cluster.node()
    finally:
        cluster.configure()
    wait_for(lambda: "DRAIN" not in cluster.node(), 30, "the node to resume")


def _checks_run(cluster) -> int:
    """Health checks run since the counter file was last reset (the state dir's last.json
    is rewritten on every run: count its modifications)."""
    path = cluster.root / "tfdoctor" / "last.json"
    mtime = path.stat().st_mtime_ns
    seen = getattr(cluster, "_seen", [])
    if not seen or seen[-1] != mtime:
        seen.append(mtime)
    cluster._seen = seen
    return len(seen)
