"""Real programs for the integration tests: find them, start daemons on 127.0.0.1, stop them.

Every daemon runs in the foreground as a child of the test, in its own session, with its files
under a temporary directory; it is stopped by its PID (SIGTERM, then SIGKILL), never by name.
A missing program skips the test on a developer's machine and fails it in CI (helpers.need).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from helpers import need
from tfdoctor.facts import Facts

REPO = Path(__file__).resolve().parents[2]
INTEGRATIONS = REPO / "integrations"
TFDOCTOR = str(Path(sys.executable).parent / "tfdoctor")
"""The real tfdoctor console script of the venv running the tests."""


def program(name: str, *, extra_dirs: Sequence[str] = ()) -> str:
    """The absolute path of a real program; skip (or fail in CI) when it is not installed."""
    path = shutil.which(
        name, path=os.pathsep.join([*extra_dirs, os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    )
    need(path is not None, f"{name} is not installed (tests/envs/apt.sh installs it)")
    assert path is not None
    return path


def venv_program(name: str) -> str:
    """A console script of the test venv (ansible-playbook, check-jsonschema, ...)."""
    path = Path(sys.executable).parent / name
    need(path.exists(), f"{path} missing: ./install.sh --dev installs it")
    return str(path)


def version(argv: Sequence[str]) -> str:
    """The first line a program prints for its version flag (for the test log)."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
    return (proc.stdout or proc.stderr).strip().splitlines()[0]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Callable[[], object], timeout: float, what: str, every: float = 0.2):
    """Poll until `predicate()` is truthy and return it; fail the test with `what` otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


class Daemon:
    """One foreground daemon, its output in `log`; `stop()` ends it by PID."""

    def __init__(self, name: str, argv: Sequence[str], log: Path, env: dict[str, str] | None = None):
        self.name, self.log = name, log
        self._out = open(log, "ab")  # noqa: SIM115  (closed in stop)
        self.proc = subprocess.Popen(
            list(argv),
            stdout=self._out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def check_alive(self) -> None:
        """Fail with the daemon's log when it died."""
        if not self.alive():
            raise AssertionError(f"{self.name} exited {self.proc.returncode}:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM by PID, SIGKILL after 10 s; reaps the process and closes its log."""
        if self.alive():
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._out.close()


class Daemons:
    """Daemons started by one fixture, stopped in reverse order (a context manager)."""

    def __init__(self) -> None:
        self.started: list[Daemon] = []

    def start(
        self,
        name: str,
        argv: Sequence[str],
        log: Path,
        env: dict[str, str] | None = None,
        ready: Callable[[], object] | None = None,
        timeout: float = 30,
    ) -> Daemon:
        daemon = Daemon(name, argv, log, env)
        self.started.append(daemon)
        if ready is not None:
            wait_for(lambda: daemon.check_alive() or ready(), timeout, f"{name} to start:\n{log}")
        return daemon

    def __enter__(self) -> Daemons:
        return self

    def __exit__(self, *exc: object) -> None:
        for daemon in reversed(self.started):
            daemon.stop()


def write_facts(path: Path, facts: Facts) -> Path:
    """Write facts where a replaying tfdoctor reads them (atomically: a daemon may be reading)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(facts.to_dict()))
    tmp.replace(path)
    return path


def tfdoctor_wrapper(directory: Path) -> str:
    """A `tfdoctor` executable with the `integrations` command registered: the real CLI, until
    the main group registers that command itself (then TFDOCTOR does the same)."""
    path = directory / "tfdoctor"
    path.write_text(
        f"#!/bin/sh\nexec {sys.executable} -c 'import sys; from tfdoctor.cli import cli; "
        "from tfdoctor.integrations_cmd import integrations; cli.add_command(integrations); "
        'sys.exit(cli(prog_name="tfdoctor"))\' "$@"\n'
    )
    path.chmod(0o755)
    return str(path)


SLURM_CONF = """ClusterName=tfdoctor
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={root}/munge/socket{auth_extra}
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd-%n.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/linear
MpiDefault=none
CommunicationParameters=NoInAddrAny
ReturnToService=2
{extra}
{nodes}
PartitionName=debug Nodes={names} Default=YES MaxTime=INFINITE State=UP
"""


def slurm_conf(root: Path, ctld_port: int, node_ports: dict[str, int], extra: str = "",
               auth_extra: str = "") -> str:
    """slurm.conf of a test cluster under `root`: slurmctld and one slurmd per node (each on its
    own port) on 127.0.0.1, with `extra` lines (HealthCheckProgram, Prolog, ...). Each slurmd
    needs root/spool/<node>; its log is root/slurmd-<node>.log."""
    nodes = "\n".join(
        f"NodeName={n} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 Port={port} "
        "CPUs=1 RealMemory=100 State=UNKNOWN"
        for n, port in node_ports.items()
    )
    return SLURM_CONF.format(root=root, ctld_port=ctld_port, nodes=nodes, names=",".join(node_ports),
                             extra=extra, auth_extra=auth_extra)


def start_munged(root: Path, daemons: Daemons) -> None:
    """munged for a test Slurm cluster: a fresh key and its socket under root/munge
    (AuthInfo=socket={root}/munge/socket in the cluster's slurm.conf)."""
    m = root / "munge"
    m.mkdir(mode=0o755)  # munged wants its socket's directory reachable by clients
    key = m / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    daemons.start(
        "munged",
        [program("munged"), "-F", "-f", f"--key-file={key}", f"--socket={m}/socket", f"--pid-file={m}/pid",
         f"--log-file={m}/log", f"--seed-file={m}/seed", "--origin=127.0.0.1"],
        root / "munged.out", ready=lambda: (m / "socket").exists())


class SlurmCluster:
    """slurmctld + one slurmd per NodeName, all on 127.0.0.1 (distinct slurmd ports), under
    `root`; `env` points the Slurm clients at it. Daemons stop by PID when `daemons` exits."""

    def __init__(self, root: Path, names: Sequence[str], daemons: Daemons):
        self.root, self.names = root, list(names)
        self.conf = root / "slurm.conf"
        self.env = {"SLURM_CONF": str(self.conf), "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}
        slurmctld, slurmd, scontrol = program("slurmctld"), program("slurmd"), program("scontrol")
        for d in ("state", "spool", *(f"spool/{n}" for n in names)):
            (root / d).mkdir(mode=0o700)
        self.conf.write_text(slurm_conf(root, free_port(), {n: free_port() for n in names}))
        start_munged(root, daemons)
        daemons.start(
            "slurmctld", [slurmctld, "-D", "-i", "-f", str(self.conf)], root / "slurmctld.out",
            ready=lambda: subprocess.run([scontrol, "ping"], env=self.env,
                                         capture_output=True).returncode == 0)
        for n in names:
            daemons.start("slurmd " + n, [slurmd, "-D", "-f", str(self.conf), "-N", n],
                          root / f"slurmd-{n}.out",
                          ready=lambda n=n: "State=IDLE" in self.run(scontrol, "-o", "show", "node", n),
                          timeout=60)

    def run(self, *argv: str, timeout: float = 30) -> str:
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, check=True,
                              timeout=timeout).stdout
