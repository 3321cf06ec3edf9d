"""Run the smoke child in the target interpreter, watch its stream, enforce the time limits.

TensorFlow is imported once, in one child, which runs every recipe and reports each on a line
of its stdout. The parent owns the clock: a recipe over `per_recipe` seconds or a run over
`budget` stops the child with everything it started (children.reap: its group, and descendants
that left it but carry its token or hold its pipes), and the recipes not reached are reported
as not run. `run_smoke` never raises and may run in a thread; `start_smoke` starts the child
at once, in the caller's thread, and leaves the watching to a thread.

The child is spawned before this module's heavier imports (the log map, the facts, NVML): they
load while the child imports TensorFlow, not before it starts.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tfdoctor.children import dismiss, exited, reap, spawn, watchdog
from tfdoctor.facts_smoke import RecipeResult, SmokeFacts
from tfdoctor.host import Host
from tfdoctor.smoke.recipes import recipe_names

if TYPE_CHECKING:
    from tfdoctor.smoke import assemble
    from tfdoctor.smoke.nvml import NvmlSampler

CHILD = Path(__file__).with_name("_child.py")
GRACE = 1.0
"""Seconds to collect the last lines after the child exits before its group is killed."""
MAX_GARBAGE = 5

# VLOG(1) of these modules names the library that failed to dlopen, the driver diagnosis and
# cuDNN's version check; TF_CPP_MAX_VLOG_LEVEL=1 would add ~1,000 lines per op (measured).
VMODULE = "dso_loader=1,cuda_diagnostics=1,cuda_dnn=1,gpu_device=1,cuda_executor=1"


def child_env(host: Host) -> dict[str, str]:
    """The user's environment with TF logging turned up and GPU memory growth forced on."""
    env = dict(host.env)
    env["TF_CPP_MIN_LOG_LEVEL"] = "0"
    user_vmodule = env.get("TF_CPP_VMODULE")
    env["TF_CPP_VMODULE"] = f"{user_vmodule},{VMODULE}" if user_vmodule else VMODULE
    # Belt and braces with the child's set_memory_growth: never grab a shared GPU's memory.
    env["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONSTARTUP", None)
    return env


def run_smoke(
    host: Host,
    *,
    only: tuple[str, ...] | None = None,
    budget: float = 120.0,
    per_recipe: float = 60.0,
    progress: Callable[[str, float], None] | None = None,
    cancel: threading.Event | None = None,
) -> SmokeFacts:
    """Run the smoke recipes (all, or `only`) in host.python; never raises."""
    return start_smoke(host, only=only, budget=budget, per_recipe=per_recipe, progress=progress,
                       cancel=cancel)()


def start_smoke(
    host: Host,
    *,
    only: tuple[str, ...] | None = None,
    budget: float = 120.0,
    per_recipe: float = 60.0,
    progress: Callable[[str, float], None] | None = None,
    cancel: threading.Event | None = None,
) -> Callable[[], SmokeFacts]:
    """Start the smoke child now, in this thread; the returned function (call it once, in any
    thread) watches it to the end and gives the facts. Neither raises."""
    started = time.monotonic()
    try:
        run = _Run(host, recipe_names(only), budget, per_recipe, progress, cancel)
        run.start()
    except Exception as exc:  # noqa: BLE001  (the doctor must survive its own runner)
        failed = _internal_error(host, exc, started)
        return lambda: failed

    def finish() -> SmokeFacts:
        try:
            return run.finish()
        except Exception as exc:  # noqa: BLE001
            return _internal_error(host, exc, started)

    return finish


def _internal_error(host: Host, exc: Exception, started: float) -> SmokeFacts:
    where = traceback.extract_tb(exc.__traceback__)[-1]
    return SmokeFacts(
        python=host.python,
        outcome="internal-error",
        exit=f"{type(exc).__name__}: {exc} ({where.name}:{where.lineno})",
        seconds=time.monotonic() - started,
    )


OUTPUT_CAP = 8 * 1024 * 1024
"""Characters of each of the child's streams that are kept; the rest is read and dropped."""
MAX_LINE = 64 * 1024
"""Longest line kept whole; a longer one arrives in pieces."""

class _Run:
    """One smoke run: the child process, its two reader threads and the event loop."""

    logs: assemble.LogSplitter
    nvml: NvmlSampler

    def __init__(
        self,
        host: Host,
        names: tuple[str, ...],
        budget: float,
        per_recipe: float,
        progress: Callable[[str, float], None] | None,
        cancel: threading.Event | None,
    ):
        self.host, self.names, self.budget, self.per_recipe = host, names, budget, per_recipe
        self.progress, self.cancel = progress, cancel
        self.lines: queue.Queue[tuple[str, str | None]] = queue.Queue()
        self.results: list[RecipeResult] = []
        self.garbage: list[str] = []
        self.info: dict[str, Any] = {}
        self.devices: tuple = ()
        self.current: tuple[str, str | None, float, float | None] | None = None
        self.protocol = False
        self.ended = False
        self.dropped = 0
        self.start_time = 0.0
        self.proc: subprocess.Popen[str] | None = None
        self.guard: subprocess.Popen[bytes] | None = None
        self.spawn_error: OSError | None = None

    def start(self) -> None:
        """Spawn the child; then load what watching it needs while it imports TensorFlow."""
        self.start_time = time.monotonic()
        argv = [self.host.python, str(CHILD), json.dumps({"recipes": list(self.names)})]
        try:
            # stdin stays open and unused: the child's watch thread exits when it reads EOF, i.e.
            # when tfdoctor is gone, even by SIGKILL (no orphan TensorFlow holding a GPU); the
            # watchdog process does the same at once, while that thread may wait seconds for the
            # child's interpreter lock (held through the dlopen of TensorFlow's libraries)
            self.proc = spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=child_env(self.host), text=True)
            self.guard = watchdog(self.proc)
        except OSError as exc:
            self.spawn_error = exc
        try:
            from tfdoctor.smoke import assemble
            from tfdoctor.smoke.nvml import NvmlSampler

            self.logs = assemble.LogSplitter()
            self.nvml = NvmlSampler(self.host)
        except BaseException:
            if self.proc is not None:
                reap(self.proc)  # nobody will watch it: stop it now
                dismiss(self.guard)
            raise

    def finish(self) -> SmokeFacts:
        start, proc = self.start_time, self.proc
        if proc is None:
            exc = self.spawn_error
            return SmokeFacts(
                python=self.host.python,
                outcome="could-not-start",
                exit=(exc.strerror or str(exc)) if exc else "not started",
                recipes=self._not_run("could not start"),
            )
        readers = [self._reader(proc.stdout, "out"), self._reader(proc.stderr, "err")]
        survivors: tuple[int, ...] = ()
        try:
            outcome, limit = self._loop(proc, start)
        finally:
            # The child, its group and whatever escaped them (setsid daemons holding our pipes
            # or carrying its token): once they are gone the pipes reach end-of-file.
            survivors = reap(proc)
            dismiss(self.guard)
            _close(proc.stdin)
            self.nvml.stop()
        joined_by = time.monotonic() + 2.0
        for reader in readers:
            reader.join(timeout=max(0.0, joined_by - time.monotonic()))
        for stream, reader in zip((proc.stdout, proc.stderr), readers, strict=True):
            if not reader.is_alive():  # closing under a blocked readline would wait for it
                _close(stream)
        self._drain()
        return self._facts(proc, outcome, limit, time.monotonic() - start, survivors)

    def _reader(self, stream: IO[str] | None, tag: str) -> threading.Thread:
        def pump() -> None:
            assert stream is not None
            kept = 0
            while True:
                # Bounded reads: a child that prints without end (or one endless line) is
                # drained, so it never blocks, but only OUTPUT_CAP characters are kept.
                line = stream.readline(MAX_LINE)
                if not line:
                    break
                if kept >= OUTPUT_CAP:
                    self.dropped += len(line)
                    continue
                kept += len(line)
                self.lines.put((tag, line))
            self.lines.put((tag, None))

        thread = threading.Thread(target=pump, name=f"smoke-{tag}", daemon=True)
        thread.start()
        return thread

    def _loop(self, proc: subprocess.Popen[str], start: float) -> tuple[str, float | None]:
        """Consume the stream until the child is done; return (outcome, limit that was hit)."""
        recipe_deadline = start + self.per_recipe
        total_deadline = start + self.budget
        open_streams, exited_at = 2, None
        while open_streams:
            now = time.monotonic()
            if self.cancel is not None and self.cancel.is_set():
                return "cancelled", None
            if now >= min(recipe_deadline, total_deadline):
                if recipe_deadline <= total_deadline:
                    return "timeout", self.per_recipe
                return "budget", self.budget
            if exited_at is None and exited(proc):
                exited_at = now
            if exited_at is not None and now - exited_at > GRACE:
                break  # a descendant holds the pipes open; reap stops it and they close
            try:
                tag, line = self.lines.get(
                    timeout=min(0.1, max(0.0, min(recipe_deadline, total_deadline) - now))
                )
            except queue.Empty:
                continue
            if line is None:
                open_streams -= 1
            elif tag == "err":
                self.logs.add(line)
            elif self._event(line):
                recipe_deadline = time.monotonic() + self.per_recipe
        return "ended", None

    def _drain(self) -> None:
        while True:
            try:
                tag, line = self.lines.get_nowait()
            except queue.Empty:
                return
            if line is None:
                continue
            if tag == "err":
                self.logs.add(line)
            else:
                self._event(line)

    def _event(self, line: str) -> bool:
        """Handle one stdout line; True when a new recipe began (its clock starts)."""
        try:
            event = json.loads(line)
            kind = event["event"]
        except (ValueError, TypeError, KeyError):
            if line.strip() and len(self.garbage) < MAX_GARBAGE:
                self.garbage.append(line.rstrip("\n")[:300])
            return False
        self.protocol = True
        if kind == "begin":
            name, device = str(event.get("recipe")), event.get("device")
            self.current = (name, device, time.monotonic(), event.get("t"))
            self._report(f"{name} on {device}" if device else name)
            if (
                device
                and str(device).startswith("GPU")
                or (name == "multi-device" and self._gpus())
            ):
                self.nvml.start()
            return True
        if kind == "result":
            from tfdoctor.smoke import assemble

            begin_t = self.current[3] if self.current else None
            result = assemble.recipe_result(event, self.logs, self.nvml.samples(), begin_t)
            self.results.append(result)
            self.current = None
            if result.name == "import":
                self.info.update(result.info)
            if result.name == "devices":
                self.devices = assemble.devices_from(event)
        elif kind == "end":
            self.ended = True
        return False

    def _gpus(self) -> bool:
        return any(d.device_type == "GPU" for d in self.devices)

    def _report(self, what: str) -> None:
        if self.progress is None:
            return
        done = len({r.name for r in self.results})
        try:
            self.progress(f"smoke: {what}", min(done / (len(self.names) + 1), 1.0))
        except Exception:  # noqa: BLE001  (a broken progress callback must not stop the run)
            self.progress = None

    def _not_run(self, why: str) -> tuple[RecipeResult, ...]:
        ran = {r.name for r in self.results} | ({self.current[0]} if self.current else set())
        return tuple(
            RecipeResult(name=n, status="not-run", detail=why)
            for n in ("import", *self.names)
            if n not in ran
        )

    def _facts(
        self, proc: subprocess.Popen[str], outcome: str, limit: float | None, seconds: float,
        survivors: tuple[int, ...],
    ) -> SmokeFacts:
        exit_text, why = _exit_text(proc.returncode, outcome, limit, self.current)
        if outcome == "ended":
            outcome = _ended_outcome(proc.returncode, self.ended, self.protocol, self.garbage)
        results = list(self.results)
        if self.current is not None:
            from tfdoctor.smoke import assemble

            name, device, began, _ = self.current
            status = {"timeout": "timeout", "budget": "timeout", "cancelled": "not-run"}.get(
                outcome, "crashed"
            )
            results.append(
                assemble.unfinished(
                    name, device, status, why, self.logs, round(time.monotonic() - began, 3)
                )
            )
        results.extend(self._not_run(why or "the child stopped before it"))
        tf_build = self.info.get("is_cuda_build")
        return SmokeFacts(
            python=self.host.python,
            outcome=outcome,
            exit=exit_text,
            seconds=round(seconds, 3),
            limit_seconds=limit,
            tf_version=self.info.get("version"),
            is_cuda_build={"True": True, "False": False}.get(tf_build) if tf_build else None,
            devices=self.devices,
            recipes=tuple(results),
            causes=tuple(self.logs.run.causes),
            log_tail=tuple(self.logs.run.tail),
            log_lines=self.logs.run.count,
            garbage=tuple(self.garbage),
            nvml_error=self.nvml.error,
            survivors=survivors,
            output_dropped=self.dropped,
        )


def _close(stream: IO[str] | None) -> None:
    if stream is not None:
        try:
            stream.close()
        except OSError:  # a write end whose reader is gone
            pass


def _exit_text(
    rc: int | None,
    outcome: str,
    limit: float | None,
    current: tuple[str, str | None, float, float | None] | None,
) -> tuple[str | None, str]:
    """(how the child ended, why the current recipe did not finish)."""
    where = f" in {current[0]}" + (f" on {current[1]}" if current[1] else "") if current else ""
    if outcome in ("timeout", "budget"):
        kind = "time limit" if outcome == "timeout" else "total smoke budget"
        return f"killed after the {kind} of {limit:g} s{where}", f"{kind} of {limit:g} s reached"
    if outcome == "cancelled":
        return "cancelled", "cancelled"
    if rc is not None and rc < 0:
        import signal

        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return name, f"the child was killed by {name}{where}"
    if rc:
        return f"status {rc}", f"the child exited with status {rc}{where}"
    return None, ""


def _ended_outcome(rc: int | None, ended: bool, protocol: bool, garbage: list[str]) -> str:
    if rc is not None and rc < 0:
        return "crashed"
    if ended and rc == 0:
        return "completed"
    if not protocol and garbage:
        return "garbage"
    return "exited"

