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
