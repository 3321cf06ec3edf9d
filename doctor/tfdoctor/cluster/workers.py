"""Start cluster workers (children of the target interpreter), read their events, own the clock.

Every worker runs `_worker.py` in its own session with TF_CONFIG set. The watcher never
raises: a worker that dies, hangs or never reaches its peers ends as data (`WorkerRun.outcome`),
and every worker is reaped with everything it started (children.reap) before `watch` returns.
"""

from __future__ import annotations

import json
import queue
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tfdoctor.children import exited, reap, spawn

WORKER = Path(__file__).with_name("_worker.py")
PEER_GRACE = 3.0
"""Seconds the others get to finish or fail after a worker died, before they are killed (a
collective waiting for a dead peer only ends at TF's own collective timeout)."""
EXIT_GRACE = 1.0
"""Seconds after the last worker exited that its pipes may stay open (a descendant still
writing) before the watcher stops reading and reaps whoever holds them."""
ANSWERED_GRACE = 3.0
"""Seconds a worker that sent its last event (end, or error) gets to exit (TensorFlow's own
teardown) before it is reaped: its answer is in, and a stopped or wedged exit must not hold the
run until the deadline."""
PHASES = ("hello", "import", "waiting", "strategy", "allreduce", "skew", "compute", "steps", "end")
OUTCOMES = (
    "completed",
    "error",
    "died",
    "hung",
    "blocked",
    "timeout",
    "stopped",
    "port-closed",
    "no-report",
    "could-not-start",
    "not-started",
)
"""Every worker outcome the watcher and the launchers write (docs/cluster.md; the cluster
schema's enum is generated from it)."""


@dataclass
class WorkerRun:
    """One worker process: what it said (events by name), how it ended, its log tail."""

    index: int
    address: str
    python: str
    proc: subprocess.Popen[str] | None = None
    events: dict[str, dict[str, Any]] = field(default_factory=dict)
    garbage: list[str] = field(default_factory=list)
    log: deque[str] = field(default_factory=lambda: deque(maxlen=15))
    outcome: str = "not-started"
    """One of OUTCOMES."""
    exit: str | None = None
    exited_alone: bool = False
    """It exited before the watcher killed the job (a death, or an error it reported)."""
    survivors: tuple[int, ...] = ()

    @property
    def phase(self) -> str:
        """The last phase this worker reported."""
        done = [p for p in PHASES if p in self.events]
        return done[-1] if done else "started"

    def progress(self) -> int:
        return sum(p in self.events for p in PHASES)


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` distinct TCP ports free on `host` right now (held together while chosen)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind((host, 0))
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def tf_config(addresses: list[str], index: int) -> str:
    return json.dumps({"cluster": {"worker": addresses}, "task": {"type": "worker", "index": index}})


def start(run: WorkerRun, addresses: list[str], config: dict[str, Any], env: dict[str, str]) -> None:
    """Start one worker in its own session; a failure to start is its outcome."""
    child_env = dict(env)
    child_env["TF_CONFIG"] = tf_config(addresses, run.index)
    child_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    child_env["PYTHONUNBUFFERED"] = "1"
    try:
        # stdin stays open and unused: the worker exits on EOF, i.e. when we are gone.
        run.proc = spawn([run.python, str(WORKER), json.dumps(config)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env, text=True)
    except OSError as exc:
        run.outcome, run.exit = "could-not-start", exc.strerror or str(exc)
        return
    run.outcome = "running"


def watch(runs: list[WorkerRun], deadline: float) -> dict[str, bool]:
    """Read every worker until all have ended, one died (plus PEER_GRACE), or `deadline`
    (monotonic); kill every group; return {"timed_out": ...}."""
    lines: queue.Queue[tuple[int, str, str | None]] = queue.Queue()
    live = [r for r in runs if r.proc is not None]
    by_index = {r.index: r for r in runs}
    readers = {(r.index, tag): _reader(r, tag, lines) for r in live for tag in ("out", "err")}
    open_streams = len(readers)
    died_at: float | None = None
    all_done_at: float | None = None
    grace = EXIT_GRACE
    timed_out = False
    try:
        while open_streams:
            now = time.monotonic()
            if now >= deadline or (died_at is not None and now - died_at > PEER_GRACE):
                timed_out = now >= deadline
                break
            if all_done_at is not None and now - all_done_at > grace:
                break  # every worker is done; what still holds their pipes is reaped below
            _mark_exits(live)
            if all_done_at is None and all(r.exited_alone or _answered(r) for r in live):
                # Done is exited, or answered: a worker stopped (SIGSTOP) or wedged after its
                # last event would otherwise hold the run until the deadline.
                all_done_at = now
                grace = EXIT_GRACE if all(r.exited_alone for r in live) else ANSWERED_GRACE
            if died_at is None and any(_died(r) for r in live):
                died_at = now
            elif died_at is not None and not any(_died(r) for r in live):
                died_at = None  # it had exited before its last lines were read: it answered
            try:
                index, tag, line = lines.get(timeout=0.1)
            except queue.Empty:
                continue
            if line is None:
                open_streams -= 1
            else:
                _take(by_index[index], tag, line)
        _mark_exits(live)
        if timed_out:
            _probe_ports(runs)
    finally:
        survivors = {r.index: _stop(r) for r in live}
    joined_by = time.monotonic() + 2.0
    for reader in readers.values():
        reader.join(timeout=max(0.0, joined_by - time.monotonic()))
    for r in live:
        assert r.proc is not None
        for tag, stream in (("out", r.proc.stdout), ("err", r.proc.stderr)):
            # A reader still blocked (a pipe held by a process we could not kill): closing
            # its stream would wait for it, so the stream is left open.
            if stream is not None and not readers[(r.index, tag)].is_alive():
                stream.close()
    while not lines.empty():
        index, tag, line = lines.get_nowait()
        if line is not None:
            _take(by_index[index], tag, line)
    for r in live:
        _close(r, timed_out, survivors[r.index])
    _blame(runs, timed_out)
    return {"timed_out": timed_out}


def _stop(run: WorkerRun) -> tuple[int, ...]:
    """Reap the worker with everything it started; the pids that outlived SIGKILL."""
    assert run.proc is not None
    survivors = reap(run.proc)
    if run.proc.stdin is not None:
        try:
            run.proc.stdin.close()
        except OSError:
            pass
    return survivors


def _reader(run: WorkerRun, tag: str, lines: queue.Queue[tuple[int, str, str | None]]) -> threading.Thread:
    assert run.proc is not None
    stream: IO[str] | None = run.proc.stdout if tag == "out" else run.proc.stderr

    def pump() -> None:
        assert stream is not None
        for line in stream:
            lines.put((run.index, tag, line))
        lines.put((run.index, tag, None))

    thread = threading.Thread(target=pump, name=f"cluster-{run.index}-{tag}", daemon=True)
    thread.start()
    return thread


def _take(run: WorkerRun, tag: str, line: str) -> None:
    if tag == "err":
        if line.strip():
            run.log.append(line.rstrip("\n")[:400])
        return
    try:
        event = json.loads(line)
        run.events[str(event["event"])] = event
    except (ValueError, TypeError, KeyError):
        if line.strip() and len(run.garbage) < 5:
            run.garbage.append(line.rstrip("\n")[:300])


def _mark_exits(live: list[WorkerRun]) -> None:
    for r in live:
        if not r.exited_alone and r.proc is not None and exited(r.proc):
            r.exited_alone = True


def _answered(run: WorkerRun) -> bool:
    """It sent its last event: `end` (after the reports), or `error`."""
    return bool({"end", "error"} & run.events.keys())


def _died(run: WorkerRun) -> bool:
    """Exited without its end event (an error event counts as an answer, not a death)."""
    return run.proc is not None and exited(run.proc) and not ({"end", "error"} & run.events.keys())


def _close(run: WorkerRun, timed_out: bool, survivors: tuple[int, ...]) -> None:
    assert run.proc is not None
    rc = run.proc.returncode
    run.exit = _exit_text(rc) if run.exited_alone else None  # else our own signal, after its answer
    run.survivors = survivors
    if "end" in run.events:
        run.outcome = "completed"
    elif "error" in run.events:
        run.outcome = "error"
    elif run.exited_alone:
        run.outcome = "died"
    else:
        run.outcome = "timeout" if timed_out else "stopped"
        run.exit = None  # our own SIGKILL, not how the worker ended


def _blame(runs: list[WorkerRun], timed_out: bool) -> None:
    """After a timeout, the workers furthest behind hung; the others were blocked on them."""
    stuck = [r for r in runs if r.outcome == "timeout"]
    if not stuck:
        return
    if any(r.outcome == "port-closed" for r in runs):
        for r in stuck:
            r.outcome = "blocked"  # waiting for the address nothing listens on
        return
    least = min(r.progress() for r in stuck)
    others = [r.progress() for r in runs if r.outcome != "timeout" or r.progress() > least]
    for r in stuck:
        r.outcome = "hung" if r.progress() == least and (others or len(stuck) == 1) else "blocked"


def _probe_ports(runs: list[WorkerRun]) -> None:
    """While the job still stands: a worker's address that refuses connections has nothing
    listening (a worker that never started, a firewall that rejects)."""
    for r in runs:
        if r.proc is not None and not exited(r.proc) and "strategy" in r.events:
            continue
        host, _, port = r.address.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=2.0):
                continue
        except OSError as exc:
            r.exit = f"{r.address}: {exc.strerror or exc}"
            if r.proc is None:
                r.outcome = "port-closed"


def _exit_text(rc: int | None) -> str | None:
    if rc is None or rc == 0:
        return None
    if rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"status {rc}"

