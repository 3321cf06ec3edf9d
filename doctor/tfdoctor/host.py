"""The one door to the machine: environment, commands with time limits, and the file system.

Probes take a `Host`; tests build one over a temporary root, an environment of their own and
stub libraries, so probes run their real code against a fake machine.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a child process did. `returncode` is negative for a signal, None after a time-out."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str | None = None
    """Set when the command could not start (e.g. "No such file or directory")."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def signal_name(self) -> str | None:
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"

    def describe_failure(self) -> str:
        """One line: why this command did not succeed."""
        if self.error:
            return f"could not start {self.argv[0]}: {self.error}"
        if self.timed_out:
            return "timed out"
        if self.signal_name:
            return f"killed by {self.signal_name}"
        return f"exited with status {self.returncode}"


_LIVE_GROUPS: set[int] = set()
_LIVE_LOCK = threading.Lock()


def track_group(proc: subprocess.Popen[str], live: bool = True) -> None:
    """Record (or forget) a child's process group, so `kill_all_children` can reach it."""
    with _LIVE_LOCK:
        (_LIVE_GROUPS.add if live else _LIVE_GROUPS.discard)(proc.pid)


def kill_all_children() -> None:
    """SIGKILL every child group still running: on Ctrl+C or SIGTERM, before tfdoctor exits, so
    no TensorFlow child is left holding a GPU (the children run in their own sessions)."""
    with _LIVE_LOCK:
        groups = list(_LIVE_GROUPS)
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def run_command(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    cwd: str | None = None,
) -> CommandResult:
    """Run argv in its own process group; on time-out kill the whole group (no orphans)."""
    try:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(env) if env is not None else None,
            cwd=cwd, start_new_session=True, text=True, errors="replace",
        )
    except OSError as exc:
        return CommandResult(tuple(argv), None, "", "", error=exc.strerror or str(exc))
    track_group(proc)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        return CommandResult(tuple(argv), None, out, err, timed_out=True)
    except BaseException:
        kill_group(proc)
        proc.wait()
        raise
    finally:
        track_group(proc, live=False)
    # A child that exited may have left grandchildren behind in its group.
    kill_group(proc)
    return CommandResult(tuple(argv), proc.returncode, out, err)


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the process group the child leads; it may be gone already."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def host_from_environment(python: str) -> Host:
    """The real machine. TFDOCTOR_FS_ROOT (a test seam, documented in docs/scenarios.md) moves
    /proc, /dev and the default library directories under another root."""
    return Host(env=dict(os.environ), root=Path(os.environ.get("TFDOCTOR_FS_ROOT", "/")),
                python=python)


@dataclass(frozen=True)
class Host:
    """The machine being diagnosed, as seen by probes."""

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    root: Path = Path("/")
    """File-system root for /proc, /dev, /etc and default library dirs (a temp dir in tests)."""
    python: str = sys.executable
    """The target interpreter whose TensorFlow is diagnosed (--python)."""
    own_python: str = sys.executable
    """tfdoctor's own interpreter, which has nvidia-ml-py for the NVML child."""
    timeout: float = 10.0
    """Default time limit for one probe command."""

    def path(self, absolute: str) -> Path:
        """A machine path (e.g. "/proc/modules") under this host's root."""
        return self.root / absolute.lstrip("/")

    def read_text(self, absolute: str) -> str | None:
        """File contents, or None when missing or unreadable."""
        try:
            return self.path(absolute).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def run(self, argv: Sequence[str], *, timeout: float | None = None,
            extra_env: Mapping[str, str] | None = None, input: str | None = None) -> CommandResult:
        limit = timeout or self.timeout
        env = dict(self.env)
        env["TFDOCTOR_CHILD_DEADLINE"] = str(int(limit) + 5)  # our own probe children obey it
        if extra_env:
            env.update(extra_env)
        return run_command(argv, timeout=limit, env=env, input=input)

    def which(self, name: str) -> str | None:
        """Resolve a command on this host's PATH."""
        for d in self.env.get("PATH", "").split(os.pathsep):
            if d and os.access(os.path.join(d, name), os.X_OK) and not os.path.isdir(os.path.join(d, name)):
                return os.path.join(d, name)
        return None
