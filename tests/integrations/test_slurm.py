"""The Slurm health check against a real slurmctld + slurmd + munge on 127.0.0.1.

slurmd runs the shipped script as its HealthCheckProgram every 2 s, in its own bare environment
(only SLURMD_NODENAME): the settings come from the settings file, whose path is the one line of
the script the test changes. The script runs the real tfdoctor, replaying a facts file the test
rewrites to turn the node broken or healthy.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest
from helpers import change, healthy
from programs import INTEGRATIONS, TFDOCTOR, Daemons, program, version, wait_for, write_facts

NODE = "tfdnode"
CAUSE = "cuda-visible-devices-hides-all"
SLURM_CONF = """ClusterName=tfdoctor
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={root}/munge/socket
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/linear
MpiDefault=none
CommunicationParameters=NoInAddrAny
ReturnToService=2
HealthCheckProgram={root}/tfdoctor-slurm.sh
HealthCheckInterval=2
HealthCheckNodeState=ANY
NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


class Cluster:
    """A one-node cluster: scontrol / sinfo against it, and the facts its health check replays."""

    def __init__(self, root: Path):
        self.root = root
        self.facts = root / "facts.json"
        self.settings = root / "tfdoctor.default"
        self.env = {"SLURM_CONF": str(root / "slurm.conf"), "PATH": "/usr/bin:/bin"}

    def run(self, *argv: str) -> str:
        return subprocess.run(
            argv, env=self.env, capture_output=True, text=True, check=True, timeout=30
        ).stdout

    def node(self) -> str:
        return self.run(program("scontrol"), "-o", "show", "node", NODE)

    def reason(self) -> str:
        """sinfo -R's REASON column exactly as an operator sees it (default format)."""
        lines = self.run(program("sinfo"), "-R", "-h", "-o", "%20E").splitlines()
        return lines[0].rstrip() if lines else ""

    def configure(self, **settings: str) -> None:
        """Rewrite the settings file the health check sources on its next run."""
        base = {
            "TFDOCTOR": TFDOCTOR,
            "TFDOCTOR_ARGS": f"replay {self.facts}",
            "TFDOCTOR_STATE_DIR": str(self.root / "tfdoctor"),
            "SLURM_CONF": str(self.root / "slurm.conf"),
            **settings,
        }
        self.settings.write_text("".join(f"{k}='{v}'\n" for k, v in base.items()))

    def log(self) -> str:
        return (self.root / "slurmd.log").read_text(errors="replace")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    munged, slurmctld, slurmd = program("munged"), program("slurmctld"), program("slurmd")
    program("scontrol")
    root = tmp_path_factory.mktemp("slurm")
    for d in ("munge", "state", "spool", "tfdoctor"):
        (root / d).mkdir(mode=0o700)
    (root / "munge").chmod(0o755)  # munged wants its socket's directory reachable by clients
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    script = (INTEGRATIONS / "slurm" / "tfdoctor-slurm.sh").read_text()
    assert script.count("/etc/default/tfdoctor") == 1
    hc = root / "tfdoctor-slurm.sh"
    hc.write_text(script.replace("/etc/default/tfdoctor", str(root / "tfdoctor.default")))
    hc.chmod(0o755)
    from programs import free_port

    (root / "slurm.conf").write_text(
        SLURM_CONF.format(
            root=root, node=NODE, host=socket.gethostname(), ctld_port=free_port(), d_port=free_port()
        )
    )
    c = Cluster(root)
    c.configure()
    write_facts(c.facts, healthy())
    m = root / "munge"
    with Daemons() as daemons:
        daemons.start(
            "munged",
            [
                munged,
                "-F",
                "-f",
                f"--key-file={key}",
                f"--socket={m}/socket",
                f"--pid-file={m}/pid",
                f"--log-file={m}/log",
                f"--seed-file={m}/seed",
                "--origin=127.0.0.1",
            ],
            root / "munged.out",
            ready=lambda: (m / "socket").exists(),
        )
        conf = str(root / "slurm.conf")
        daemons.start(
            "slurmctld",
            [slurmctld, "-D", "-i", "-f", conf],
            root / "slurmctld.out",
            ready=lambda: (
                subprocess.run([program("scontrol"), "ping"], env=c.env, capture_output=True).returncode == 0
            ),
        )
        d = daemons.start(
            "slurmd",
            [slurmd, "-D", "-f", conf, "-N", NODE],
            root / "slurmd.out",
            ready=lambda: "State=IDLE" in c.node(),
        )
        c.daemons = daemons  # type: ignore[attr-defined]
        c.slurmd = d  # type: ignore[attr-defined]
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
