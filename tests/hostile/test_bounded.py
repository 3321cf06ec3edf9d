"""Bounded, always (issue 21): whatever a hostile --python does with its pipes and signals, the
command returns within its limits, says what happened, and leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from test_children import fake, marked, run_cli
from tfdoctor import children
from tfdoctor.fixing.proc import run_guarded
from tfdoctor.host import run_command

REAL = sys.executable
"""A real interpreter; run with -S it sees no site-packages, so no TensorFlow whatever the venv
holds, and its answer (tensorflow not installed) is known."""

# The daemons: each leaves the child's session. HOLDER keeps the child's stdout and stderr;
# DEAF also ignores SIGTERM; REDIRECTED holds no pipe of ours at all (only its environment
# says whose it is).
HOLDER = "setsid sleep 300 &"
DEAF = "setsid sh -c 'trap \"\" TERM; exec sleep 300' &"
REDIRECTED = "setsid sh -c 'trap \"\" TERM; exec sleep 300' </dev/null >/dev/null 2>&1 &"
# A wrapper that runs the real interpreter, then starts a daemon on its way out.
WRAPPER = f'{REAL} -S "$@"\nrc=$?\n(setsid sleep 300 &)\nexit $rc'
# The smoke child (smoke/_child.py) hangs deaf to SIGTERM with a deaf daemon; every other child
# is the real interpreter, so the static probes answer at once.
HANG_IN_SMOKE = (f'case "$1" in */smoke/_child.py) trap "" TERM; {DEAF}\n exec sleep 300;; esac\n'
                 f'exec {REAL} -S "$@"')


def run(args: list[str], mark: str, limit: float) -> tuple[int, dict, str, float]:
    """Run the CLI; (exit code, JSON document, stderr, seconds). Whatever it left is killed
    after the checks, so a failing test does not leave the machine dirty."""
    started = time.monotonic()
    proc = run_cli(args, mark)
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"tfdoctor {' '.join(args)} still running after {limit} s") from exc
    finally:
        proc.kill()
        proc.wait()
    took, text = time.monotonic() - started, err.decode(errors="replace")
    try:
        return proc.returncode, json.loads(out), text, took
    except ValueError:
        raise AssertionError(f"exit {proc.returncode}, no JSON document; stderr: {text}") from None


@pytest.fixture
def mark():
    """A token in the test's environment, inherited by everything tfdoctor starts: what is
    still alive after the command returned is found by it (and killed at the end)."""
    value = f"tfdoctor-test-{uuid.uuid4()}"
    yield value
    for pid in marked(value):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def left_behind(mark: str) -> list[int]:
    """Processes carrying the mark once the command returned (SIGKILL lands asynchronously)."""
    for _ in range(20):
        alive = marked(mark)
        if not alive:
            return []
        time.sleep(0.05)
    return alive


def passed(doc: dict) -> set[str]:
    """Checks about the target interpreter and its TensorFlow that say "passed"."""
    return {o["check"] for o in doc["outcomes"] if o["status"] == "passed"
            and o["area"] in ("python", "tensorflow", "smoke", "packages")}


@pytest.mark.parametrize("mode", [["--quick"], [], ["--budget", "5"]], ids=["quick", "full", "budget"])
def test_daemon_holding_the_pipes_of_an_interpreter_that_exits_0(tmp_path, mark, mode):
    """The hang of issue 21: `setsid sleep 100000 &; exit 0` as --python. The full run waited
    forever in stream.close() behind the daemon's open pipe (--budget did not help) and left
    it running. Now every mode returns within seconds, says the interpreter is unusable (it
    printed no report), passes nothing about it, and the daemon is gone."""
    python = fake(tmp_path, f"{HOLDER}\nexit 0")
    code, doc, err, took = run(["--json", "--python", python, *mode], mark, limit=60)
    assert took < 15, err
    assert code == 1 and doc["verdict"]["root_cause"] == "python-unusable", err
    assert "Traceback" not in err and not passed(doc)
    assert left_behind(mark) == []


@pytest.mark.parametrize("mode", [["--quick"], []], ids=["quick", "full"])
def test_wrapper_that_starts_a_daemon_after_the_real_interpreter(tmp_path, mark, mode):
    """A wrapper script that runs the real interpreter, then `(setsid sleep N &)`: the answers
    are the interpreter's (TensorFlow is not installed there), the daemon is reaped."""
    python = fake(tmp_path, WRAPPER)
    code, doc, err, took = run(["--json", "--python", python, *mode], mark, limit=60)
    assert took < 15, err
    assert code == 1 and doc["verdict"]["root_cause"] == "tf-not-installed", err
    assert left_behind(mark) == []


def test_budget_is_a_hard_bound_on_a_smoke_child_deaf_to_sigterm(tmp_path, mark):
    """The smoke child hangs, ignores SIGTERM and has a daemon (also deaf) holding its pipes:
    --budget 3 ends the smoke work at 3 s, SIGKILL follows SIGTERM, and the report says the
    budget ran out."""
    python = fake(tmp_path, HANG_IN_SMOKE)
    code, doc, err, took = run(["--json", "--python", python, "--budget", "3"], mark, limit=60)
    assert 3 <= took < 3 + 6, err
    ids = [f["id"] for f in doc["findings"]]
    assert code == 1 and "smoke-budget-exhausted" in ids, (ids, err)
    assert doc["facts"]["smoke"]["outcome"] == "budget" and not doc["facts"]["smoke"]["survivors"]
    assert left_behind(mark) == []


def test_daemon_that_redirected_its_output_is_reaped(tmp_path, mark):
    """Issue 21: "a setsid grandchild that redirects its output survives every run". It holds
    no pipe of ours and ignores SIGTERM; its environment still carries the child's token."""
    python = fake(tmp_path, f"{REDIRECTED}\nexec {REAL} -S \"$@\"")
    code, doc, err, took = run(["--json", "--quick", "--python", python], mark, limit=60)
    assert took < 15 and code == 1, err
    assert left_behind(mark) == []


def sigblk(path: Path) -> list[int]:
    """The blocked-signal masks a fake interpreter recorded, one per run."""
    return [int(line.split()[1], 16) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("mode", [["--quick"], []], ids=["quick", "full"])
def test_children_start_with_sigint_and_sigterm_unblocked(tmp_path, mark, mode):
    """Children inherited the probe threads' mask (SigBlk 0x4002): whatever they started
    ignored `kill`. Every child, from a probe thread or the smoke thread, now starts with
    SIGINT and SIGTERM deliverable."""
    record = tmp_path / "sigblk"
    # The shell's own mask, read by a builtin (a forked grep would see dash mid-fork, with
    # every signal blocked for a moment).
    python = fake(tmp_path, "while read -r key value; do\n"
                            f'  [ "$key" = SigBlk: ] && echo "$key $value" >> {record}\n'
                            "done < /proc/self/status\nexit 0")
    run(["--json", "--python", python, *mode], mark, limit=60)
    masks = sigblk(record)
    assert len(masks) >= (1 if mode else 2)  # quick: the target probe at least; full: + smoke
    for mask in masks:
        assert not mask >> (signal.SIGINT - 1) & 1 and not mask >> (signal.SIGTERM - 1) & 1, hex(mask)


def test_spawn_from_a_thread_that_blocks_the_stop_signals(tmp_path):
    """The library path under the CLI's: a thread with SIGINT/SIGTERM blocked (as quiet_thread
    leaves every probe thread) spawns a child whose mask has neither."""
    got: list[str] = []

    def probe() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGINT, signal.SIGTERM))
        got.append(run_command(["grep", "SigBlk", "/proc/self/status"], timeout=10).stdout)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    mask = int(got[0].split()[1], 16)
    assert not mask >> (signal.SIGINT - 1) & 1 and not mask >> (signal.SIGTERM - 1) & 1, hex(mask)


def test_fix_command_leaves_nothing_behind(tmp_path, mark):
    """A fix script's daemon that left its group, redirected its output and ignores SIGTERM
    is reaped when the command returns (run_guarded, the apply's runner)."""
    env = {**os.environ, "TFDOCTOR_TEST_MARK": mark}
    started = time.monotonic()
    result = run_guarded(["sh", "-c", REDIRECTED + "\necho done"], timeout=30, env=env)
    assert result.ok and "done" in result.stdout and time.monotonic() - started < 5
    assert left_behind(mark) == []


def test_reap_is_instant_when_nothing_is_left(tmp_path):
    """The common case costs one /proc scan: a child that exited alone is reaped with no
    signal and no wait."""
    proc = children.spawn(["true"])
    assert children.wait_exited(proc, 10)
    started = time.monotonic()
    assert children.reap(proc) == () and time.monotonic() - started < 0.5


@pytest.mark.parametrize("body, budget", [(f"{HOLDER}\nexit 0", 300.0), (HANG_IN_SMOKE, 3.0)],
                         ids=["daemon-holding-pipes", "deaf-smoke-child"])
def test_tui_run_ends_within_the_bound(tmp_path, mark, body, budget):
    """The TUI runs the same diagnosis (seams.DiagnosisLoader, in a thread worker): it hung
    the same way on a daemon holding the smoke child's pipes. Its run now ends with a verdict
    on screen within the bound, and leaves nothing behind."""
    import asyncio

    from tfdoctor.diagnose import SmokeOptions
    from tfdoctor.host import Host
    from tfdoctor.registry import CheckConfig
    from tfdoctor.tui.app import make_app
    from tfdoctor.tui.seams import diagnosis_loader
    from tui.kit import drive, screen_text, settle

    host = Host(python=fake(tmp_path, body), timeout=10, env={**os.environ, "TFDOCTOR_TEST_MARK": mark})
    app = make_app(diagnosis_loader(host, CheckConfig(), SmokeOptions(budget=budget)))
    took: list[float] = []

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        started = time.monotonic()
        await asyncio.wait_for(settle(pilot), timeout=30)
        took.append(time.monotonic() - started)
        assert "Verdict: " in screen_text(app)

    drive(app, scenario, size=(120, 40))
    assert took[0] < budget + 6 if budget < 300 else took[0] < 15
    assert app.report is not None and app.report.root_cause is not None
    assert app.report.root_cause.id == ("python-unusable" if budget == 300 else "tf-not-installed")
    assert left_behind(mark) == []


def test_cluster_workers_holding_their_pipes_through_a_daemon(tmp_path, mark):
    """`tfdoctor cluster`'s watcher read its workers the way the smoke runner did, and closed
    their streams behind a daemon's open pipe the same way. Two workers that start a daemon
    and exit 0 are reported as died, within seconds, and nothing of theirs is left."""
    python = fake(tmp_path, f"{HOLDER}\nexit 0")
    code, doc, err, took = run(["cluster", "--workers", "2", "--python", python, "--timeout", "20",
                                "--json"], mark, limit=60)
    assert took < 15, err
    assert code == 1 and doc["verdict"]["root_cause"] == "cluster-worker-died", err
    assert all(not w["survivors"] for w in doc["workers"])
    assert left_behind(mark) == []


def test_ctrl_c_during_a_full_run_with_a_deaf_smoke_child(tmp_path, mark):
    """Ctrl+C while the smoke child hangs deaf to SIGTERM, a deaf daemon holding its pipes:
    tfdoctor exits 130 within a second, and the child and the daemon are gone with it."""
    proc = run_cli(["--json", "--python", fake(tmp_path, HANG_IN_SMOKE)], mark)
    try:
        deadline = time.monotonic() + 30
        while len(marked(mark)) < 3 and time.monotonic() < deadline:  # tfdoctor, child, daemon
            time.sleep(0.05)
        time.sleep(0.5)  # the smoke thread is in its loop, the daemon started
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
        took = time.monotonic() - started
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130 and took < 1.5, err
    assert left_behind(mark) == []



def test_a_sibling_holding_a_copy_of_our_read_end_is_not_reaped():
    """Probes run six at a time, and a child between fork and exec holds copies of every fd
    tfdoctor has open, its siblings' read ends included. Taken for a holder of a sibling's
    pipe, it was killed by that sibling's reap (probes "killed by SIGTERM" under load, and
    python-unusable lost). Only a writer to our pipe is a holder: a process with the read end,
    as such a sibling has, survives the reap."""
    child = children.spawn(["sh", "-c", "exit 0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    sibling = subprocess.Popen(["sleep", "30"], pass_fds=(child.stdout.fileno(),))
    try:
        assert children.wait_exited(child, 10)
        children.reap(child)
        time.sleep(0.2)
        assert sibling.poll() is None, "the reader was taken for a holder"
    finally:
        sibling.kill()
        sibling.wait()
        child.stdout.close()
        if child.stderr is not None:
            child.stderr.close()


@pytest.mark.slow
def test_wrapper_around_real_tensorflow_then_a_daemon(tmp_path, mark, tf_cpu_python):
    """The issue's second interpreter with a real TensorFlow: the wrapper runs it (TensorFlow
    is imported, the smoke recipes run on the CPU), then starts `(setsid sleep N &)`. The full
    run ends with the smoke child's results, reports nothing as hung, and leaves nothing."""
    python = fake(tmp_path, f'{tf_cpu_python} "$@"\nrc=$?\n(setsid sleep 300 &)\nexit $rc')
    code, doc, err, took = run(["--json", "--python", python, "--only", "matmul"], mark, limit=180)
    smoke = doc["facts"]["smoke"]
    assert smoke["outcome"] == "completed" and smoke["tf_version"], (smoke["outcome"], err)
    assert not {"smoke-timeout", "smoke-budget-exhausted"} & {f["id"] for f in doc["findings"]}
    assert took < 120 and left_behind(mark) == []
