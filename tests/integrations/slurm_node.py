"""A one-node Slurm cluster (munged, slurmctld, slurmd on 127.0.0.1) running the shipped
tfdoctor-slurm.sh, for test_slurm.py (HealthCheckProgram) and test_slurm_prolog.py (Prolog).

The script is installed as the docs say, with one change: the line naming its settings file
points into the cluster's directory. Its tfdoctor replays a facts file the tests rewrite to
turn the node broken or healthy. Daemons are stopped by PID (programs.Daemons).
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

from helpers import healthy
from programs import (
    INTEGRATIONS,
    TFDOCTOR,
    Daemons,
    free_port,
    program,
    slurm_conf,
    start_munged,
    write_facts,
)

NODE = "tfdnode"
HEALTH_CHECK = """HealthCheckProgram={script}
HealthCheckInterval=2
HealthCheckNodeState=ANY"""


class Cluster:
    """A one-node cluster: scontrol / sinfo against it, and the facts its health check replays."""

    def __init__(self, root: Path):
        self.root = root
        self.conf = root / "slurm.conf"
        self.script = root / "tfdoctor-slurm.sh"
        self.facts = root / "facts.json"
        self.settings = root / "tfdoctor.default"
        self.env = {"SLURM_CONF": str(self.conf), "PATH": "/usr/bin:/bin"}
        self.daemons: Daemons | None = None
        self.auth_extra = ""

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
        """Rewrite the settings file the script sources on its next run."""
        base = {
            "TFDOCTOR": TFDOCTOR,
            "TFDOCTOR_ARGS": f"replay {self.facts}",
            "TFDOCTOR_STATE_DIR": str(self.root / "tfdoctor"),
            "SLURM_CONF": str(self.conf),
            **settings,
        }
        self.settings.write_text("".join(f"{k}='{v}'\n" for k, v in base.items()))

    def write_conf(self, extra: str) -> None:
        """slurm.conf with `extra` lines ({script} = the installed tfdoctor-slurm.sh); the
        ports are chosen once. `scontrol reconfigure` makes the daemons read it again."""
        if not hasattr(self, "_ports"):
            self._ports = (free_port(), free_port())
        self.conf.write_text(slurm_conf(self.root, self._ports[0], {NODE: self._ports[1]},
                                        extra.format(script=self.script), self.auth_extra))

    def log(self) -> str:
        return (self.root / f"slurmd-{NODE}.log").read_text(errors="replace")


@contextlib.contextmanager
def one_node_cluster(root: Path, extra: str = HEALTH_CHECK, auth_extra: str = "") -> Iterator[Cluster]:
    """Start munged, slurmctld and slurmd with slurm.conf + `extra`; stop them by PID after."""
    slurmctld, slurmd, scontrol = program("slurmctld"), program("slurmd"), program("scontrol")
    for d in ("state", "spool", f"spool/{NODE}", "tfdoctor"):
        (root / d).mkdir(mode=0o700)
    c = Cluster(root)
    script = (INTEGRATIONS / "slurm" / "tfdoctor-slurm.sh").read_text()
    assert script.count("/etc/default/tfdoctor") == 1
    c.script.write_text(script.replace("/etc/default/tfdoctor", str(c.settings)))
    c.script.chmod(0o755)
    c.auth_extra = auth_extra
    c.write_conf(extra)
    c.configure()
    write_facts(c.facts, healthy())
    with Daemons() as daemons:
        start_munged(root, daemons)
        conf = str(c.conf)
        daemons.start(
            "slurmctld",
            [slurmctld, "-D", "-i", "-f", conf],
            root / "slurmctld.out",
            ready=lambda: subprocess.run([scontrol, "ping"], env=c.env, capture_output=True).returncode == 0,
        )
        daemons.start(
            "slurmd",
            [slurmd, "-D", "-f", conf, "-N", NODE],
            root / "slurmd.out",
            ready=lambda: "State=IDLE" in c.node(),
        )
        c.daemons = daemons
        yield c
