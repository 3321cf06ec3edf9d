"""One lock per environment, in the environment (issue 21): two applies on one venv with
different XDG_STATE_HOME (a user and root) both ran; one recorded `applied`, the other died in
pip's "TypeError: expected string or bytes-like object" and its rollback broke the venv again.

Through the real entry point: the concurrent case on a copy of the cached real tensorflow-cpu
venv broken with protobuf 5 (as test_transactions.py), the lock-file cases on a small real venv
with a saved preload plan (`fix --plan FILE --apply`), which takes the same lock.
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
from collections.abc import Iterator
from pathlib import Path

import pytest
from cached_envs import add_pause, cached_env, copy_env, processes_using
from fixing_venvs import freeze, pip, tfdoctor, tree_hash
from tfdoctor.fixing.lock import LOCK_NAME, _boot_id, _start_ticks
from tfdoctor.fixing.model import FixPlan, FixStep
from tfdoctor.fixing.planner import HOOK, hook_files, shown_commands


def fix_apply(python: Path, state: Path, *extra: str, env: dict[str, str] | None = None
              ) -> subprocess.Popen[str]:
    """`tfdoctor fix --python PYTHON --apply --yes` as a real child, state in `state`."""
    return subprocess.Popen(
        [sys.executable, "-m", "tfdoctor", "fix", "--python", str(python), "--apply", "--yes",
         *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state), **(env or {})})


@pytest.fixture
def broken_tf(tmp_path: Path) -> Iterator[Path]:
    """A copy of the cached tf-cpu venv with protobuf 5.29.5 forced in, and the pause module;
    removed after the test, pass or fail (1.6 GB by du, hard links into the cache)."""
    env = copy_env(cached_env("tf-cpu"), tmp_path / "venv")
    try:
        pip(str(env / "bin" / "python"), "--no-deps", "protobuf==5.29.5")
        add_pause(env)
        yield env
    finally:
        for line in processes_using(env):  # nothing of ours may survive a test
            os.kill(int(line.split(":")[0]), signal.SIGKILL)
        shutil.rmtree(env, ignore_errors=True)


@pytest.mark.slow
def test_two_applies_with_two_state_directories_one_waits_out(broken_tf: Path, tmp_path: Path):
    """Started at once with different XDG_STATE_HOME: exactly one applies; the other refuses
    in one line naming the holder's pid, user and host, exit 2, and records nothing; the venv
    ends fixed and holds no lock file. (The pause module holds the winner inside pip, so the
    loser meets the lock whatever the machine's load.)"""
    python = broken_tf / "bin" / "python"
    marks = tmp_path / "marks"
    marks.mkdir()
    pause = {"TFDOCTOR_TEST_PAUSE": "install", "TFDOCTOR_TEST_PAUSE_DIR": str(marks)}
    states = [tmp_path / "user-state", tmp_path / "root-state"]
    procs = [fix_apply(python, s, "--json", env=pause) for s in states]
    end = time.monotonic() + 600
    while time.monotonic() < end:  # until the winner is in pip and the loser has answered
        done = [p.poll() is not None for p in procs]
        if all(done) or (any(done) and (marks / "paused").exists()):
            break
        time.sleep(0.1)
    (marks / "release").touch()
    outs = [p.communicate(timeout=600) for p in procs]
    codes = [p.returncode for p in procs]
    assert sorted(codes) in ([0, 2], [1, 2]), (codes, [e[-2000:] for _, e in outs])
    loser = codes.index(2)
    winner = 1 - loser
    err = outs[loser][1]  # the plan first when it got past the early check, then one line
    line = err.strip().splitlines()[-1]
    assert line.startswith("tfdoctor: error: another fix is running in"), err[-2000:]
    assert err.count("tfdoctor: error") == 1 and "Traceback" not in err, err[-2000:]
    assert f"pid {procs[winner].pid} of " in line and f" on {socket.gethostname()}" in line, line
    doc = json.loads(outs[winner][0])
    assert "package-out-of-range" in doc["before"] and "package-out-of-range" in doc["fixed"]
    assert [a["status"] for a in doc["applied"]] == ["done"]
    assert "protobuf==5" not in freeze(str(python)), "the venv must end in the applied state"
    assert not (broken_tf / LOCK_NAME).exists()
    assert not list(states[loser].rglob("journal.json")), "the loser recorded an apply"
    journals = [json.loads(p.read_text()) for p in states[winner].rglob("journal.json")]
    assert [j["status"] for j in journals] == ["applied"]


@pytest.fixture
def small_env(tmp_path: Path) -> Path:
    prefix = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    return prefix


def preload_plan(prefix: Path, path: Path) -> Path:
    """A saved plan with one hook step: a start-up preload .pth (inert: its --only-for
    directory does not exist), judged like the diagnosis before it, in the bare mode."""
    site = next(prefix.glob("lib/python3*/site-packages"))
    pth = str(site / "tfdoctor-preload.pth")
    args = ("--preload", "/nonexistent/libcudnn.so.9", "--only-for",
            str(site / "tensorflow-2.21.0.dist-info"), "preload", pth)
    step = FixStep(HOOK, "hook", "Preload.", ("cuda-library-missing",),
                   shown_commands("hook", args, ""), args, files=hook_files("preload", pth))
    plan = FixPlan(str(prefix / "bin" / "python"), str(prefix), "venv", socket.gethostname(),
                   "2026-11-27T00:00:00+00:00", ("cuda-library-missing",), (step,))
    path.write_text(json.dumps(plan.to_dict()))
    return path


def lock_record(pid: int, host: str) -> str:
    return json.dumps({"what": "tfdoctor fix --apply", "pid": pid, "user": "someone",
                       "host": host, "boot_id": _boot_id(), "start": _start_ticks(pid),
                       "started": "2026-11-27 08:00:00 UTC", "command": "tfdoctor fix --apply"})


def test_a_lock_left_by_a_dead_process_is_taken_over(small_env: Path, tmp_path: Path):
    """kill -9 leaves the lock file behind (the flock goes with the process): its holder's pid
    is gone on this host, so the next apply takes it over, applies, and removes it."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    lock = small_env / LOCK_NAME
    lock.write_text(lock_record(dead.pid, socket.gethostname()))
    plan = preload_plan(small_env, tmp_path / "plan.json")
    done = tfdoctor("fix", "--plan", str(plan), "--apply", "--yes", timeout=300)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert f"{HOOK}: done" in done.stdout, done.stdout
    assert next(small_env.glob("lib/python3*/site-packages/tfdoctor-preload.pth")).is_file()
    assert not lock.exists()


def test_a_lock_held_from_another_host_is_never_guessed_dead(small_env: Path, tmp_path: Path):
    """An NFS venv locked from another node: whether that holder lives cannot be known here,
    so the apply is refused in one line naming holder, host and the file to remove, exit 2,
    and nothing in the venv changes (the lock file included)."""
    lock = small_env / LOCK_NAME
    lock.write_text(lock_record(1, "node-elsewhere"))
    before = tree_hash(small_env)
    plan = preload_plan(small_env, tmp_path / "plan.json")
    done = tfdoctor("fix", "--plan", str(plan), "--apply", "--yes", timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert "pid 1 of someone on node-elsewhere" in line and f"remove {lock}" in line, line
    assert tree_hash(small_env) == before


def test_a_live_holder_on_this_host_is_named_and_kept(small_env: Path, tmp_path: Path):
    """A lock file naming a live process of this host and boot (here: this test's process),
    without its flock (as an NFS client with local-only flock sees another's): refused, the
    file kept; the dry run says who holds it."""
    lock = small_env / LOCK_NAME
    lock.write_text(lock_record(os.getpid(), socket.gethostname()))
    plan = preload_plan(small_env, tmp_path / "plan.json")
    done = tfdoctor("fix", "--plan", str(plan), "--apply", "--yes", timeout=300)
    assert done.returncode == 2 and f"pid {os.getpid()} of someone" in done.stderr, done.stderr
    assert lock.exists()
    dry = tfdoctor("fix", "--plan", str(plan), timeout=300)
    assert dry.returncode == 0 and f"A fix is running in {small_env} now" in dry.stderr, dry.stderr


def test_a_distribution_without_metadata_stops_the_apply_before_pip(small_env: Path,
                                                                   tmp_path: Path,
                                                                   state_dir: Path):
    """The TypeError itself: pip's resolver dies on a .dist-info with no METADATA (what another
    pip's install looks like half-way, or one cut short). The apply now names that directory in
    one line before pip runs, exit 2, changes nothing and leaves no journal."""
    site = next(small_env.glob("lib/python3*/site-packages"))
    half = site / "protobuf-7.36.2.dist-info"
    half.mkdir()
    (half / "RECORD").write_text("")
    python = str(small_env / "bin" / "python")
    args = ("protobuf<8,>=6.31.1",)
    step = FixStep("pin-python-packages", "pip", "Pin.", ("package-out-of-range",),
                   shown_commands("pip", args, python), args)
    plan = FixPlan(python, str(small_env), "venv", socket.gethostname(),
                   "2026-11-27T00:00:00+00:00", ("package-out-of-range",), (step,))
    saved = tmp_path / "plan.json"
    saved.write_text(json.dumps(plan.to_dict()))
    before = tree_hash(small_env)
    done = tfdoctor("fix", "--plan", str(saved), "--apply", "--yes", timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    line = done.stderr.strip().splitlines()[-1]
    assert str(half) in line and "no name or version in its metadata" in line, line
    assert "TypeError" not in done.stderr
    assert tree_hash(small_env) == before
    assert not list(state_dir.rglob("journal.json"))
