"""Fixes as transactions (issue 12), on copies of the cached real tensorflow-cpu 2.21 venv with
real pip and real signals: each fault ends with the venv byte for byte as before (a hash of every
file under it) or exactly fixed, and `fix --undo` then gives the original back exactly.

The break: protobuf 5.29.5 forced in with --no-deps (TF 2.21 needs >=6.31.1); the fix is
pin-python-packages. The moments come from the pause module of cached_envs.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cached_envs import (
    add_pause,
    cached_env,
    copy_env,
    differences,
    processes_using,
    site_packages,
    tree,
    wait_for,
)
from fixing_venvs import freeze, pip
from helpers import need
from tfdoctor.findings import Finding, Severity

pytestmark = pytest.mark.slow
OLD_PROTOBUF = "5.29.5"


@pytest.fixture(scope="module")
def broken_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """tf-cpu copy with protobuf 5 and the pause module: copied again for each test. Removed
    after the module, pass or fail (1.6 GB by du: hard links into the cache)."""
    env = copy_env(cached_env("tf-cpu"), tmp_path_factory.mktemp("template") / "venv")
    try:
        pip(str(env / "bin" / "python"), "--no-deps", f"protobuf=={OLD_PROTOBUF}")
        add_pause(env)
        yield env
    finally:
        shutil.rmtree(env, ignore_errors=True)


@pytest.fixture
def env(broken_template: Path, tmp_path: Path) -> Iterator[Path]:
    copy = copy_env(broken_template, tmp_path / "venv")
    yield copy
    for line in processes_using(copy):  # nothing of ours may survive a test
        os.kill(int(line.split(":")[0]), signal.SIGKILL)
    shutil.rmtree(copy, ignore_errors=True)  # a failed test's logs stay; its venv copy goes


def start(python: Path, *args: str, pause: str | None = None, pause_dir: Path | None = None,
          extra: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`tfdoctor fix --python PYTHON ARGS` as a real child process."""
    env = dict(os.environ, **(extra or {}))
    if pause:
        env.update(TFDOCTOR_TEST_PAUSE=pause, TFDOCTOR_TEST_PAUSE_DIR=str(pause_dir))
    return subprocess.Popen([sys.executable, "-m", "tfdoctor", "fix", "--python", str(python),
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def run(python: Path, *args: str, extra: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    proc = start(python, *args, extra=extra)
    out, err = proc.communicate(timeout=600)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def journals(state: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(state.glob("envs/*/applies/*/journal.json"))]


def apply_and_undo(env: Path, before: dict) -> None:
    """The apply finishes: protobuf fixed, findings after a subset of before; undo is exact."""
    python = env / "bin" / "python"
    done = run(python, "--apply", "--yes", "--json")
    assert done.returncode in (0, 1), done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert "package-out-of-range" in doc["before"] and "package-out-of-range" not in doc["after"]
    assert set(doc["after"]) <= set(doc["before"]), doc
    assert "protobuf==5" not in freeze(str(python))
    undone = run(python, "--undo")
    assert undone.returncode == 0, undone.stderr[-2000:]
    assert "byte for byte" in undone.stdout
    assert differences(env, before) == [], "undo did not give back the original exactly"


@pytest.mark.parametrize(("sig", "pause", "code"), [
    (signal.SIGINT, "install", 130), (signal.SIGTERM, "install", 143),
    (signal.SIGTERM, "start", 143)])
def test_signal_during_apply_restores_exactly(env: Path, tmp_path: Path, state_dir: Path,
                                              sig: int, pause: str, code: int):
    """Ctrl+C or SIGTERM before pip starts or in the middle of pip's install: pip is stopped,
    the backup restored and verified, tfdoctor says so and exits 130/143; then a full apply and
    undo still work."""
    before = tree(env)
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = start(env / "bin" / "python", "--apply", "--yes", pause=pause, pause_dir=marks)
    wait_for(marks / "paused")
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == code, err[-2000:]
    assert f"stopped by {signal.Signals(sig).name}" in err and "byte for byte" in err, err
    assert processes_using(env) == [], "a child outlived tfdoctor"
    assert differences(env, before) == [], "the environment is not as before the apply"
    assert [j["status"] for j in journals(state_dir)] == ["rolled-back"]
    apply_and_undo(env, before)


def test_signals_during_the_rollback_wait_for_it(env: Path, tmp_path: Path):
    """More signals while the rollback runs do not cut it short: tfdoctor says it is still
    restoring, finishes, and the environment is exactly as before."""
    before = tree(env)
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = start(env / "bin" / "python", "--apply", "--yes", pause="install", pause_dir=marks)
    wait_for(marks / "paused")
    proc.send_signal(signal.SIGINT)
    wait_for(marks / "rollback-paused", timeout=60)
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err[-2000:]
    assert "still restoring" in err and "byte for byte" in err, err
    assert differences(env, before) == []


def test_kill_9_leaves_no_pip_and_the_next_fix_offers_recover(env: Path, tmp_path: Path,
                                                               state_dir: Path):
    """kill -9 mid-install: the watchdog kills pip (no orphan finishes the install); the next
    `tfdoctor fix` in any mode says the apply did not finish and offers --recover, which puts
    the environment back exactly."""
    before = tree(env)
    python = env / "bin" / "python"
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = start(python, "--apply", "--yes", pause="install", pause_dir=marks)
    wait_for(marks / "paused")
    proc.kill()
    proc.communicate(timeout=60)
    end = time.monotonic() + 10
    while processes_using(env) and time.monotonic() < end:
        time.sleep(0.1)
    assert processes_using(env) == [], "pip outlived a killed tfdoctor"
    assert [j["status"] for j in journals(state_dir)] == ["applying"]

    dry = run(python)
    assert dry.returncode == 0 and "did not finish" in dry.stderr, dry.stderr
    assert f"tfdoctor fix --recover --python {python}" in dry.stderr
    for refused in (run(python, "--apply", "--yes"), run(python, "--undo")):
        assert refused.returncode == 2 and "did not finish" in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    recovered = run(python, "--recover")
    assert recovered.returncode == 0, recovered.stderr
    assert "Recovered" in recovered.stdout
    assert differences(env, before) == []
    assert "Nothing to recover" in run(python, "--recover").stdout
    apply_and_undo(env, before)


def test_kill_9_during_the_rollback_then_recover(env: Path, tmp_path: Path, state_dir: Path):
    """SIGINT mid-install, then kill -9 while the rollback runs: the journal says
    `rolling-back`, and `fix --recover` finishes the restore exactly."""
    before = tree(env)
    python = env / "bin" / "python"
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = start(python, "--apply", "--yes", pause="install", pause_dir=marks)
    wait_for(marks / "paused")
    proc.send_signal(signal.SIGINT)
    wait_for(marks / "rollback-paused", timeout=60)
    proc.kill()
    proc.communicate(timeout=60)
    assert [j["status"] for j in journals(state_dir)] == ["rolling-back"]
    recovered = run(python, "--recover")
    assert recovered.returncode == 0, recovered.stderr
    assert differences(env, before) == []
    end = time.monotonic() + 10
    while processes_using(env) and time.monotonic() < end:
        time.sleep(0.1)
    assert processes_using(env) == []


def test_two_applies_at_once_the_second_is_refused(env: Path, tmp_path: Path):
    """A second apply (the CLI's, then the TUI's applier) while one runs is refused with one
    line naming the running one; the first then finishes alone and undo restores exactly."""
    from tfdoctor.fixing.lock import Busy
    from tfdoctor.host import Host
    from tfdoctor.tui.seams import PlanApplier

    before = tree(env)
    python = env / "bin" / "python"
    marks = tmp_path / "marks"
    marks.mkdir()
    first = start(python, "--apply", "--yes", "--json", pause="install", pause_dir=marks)
    wait_for(marks / "paused")
    second = run(python, "--apply", "--yes")
    assert second.returncode == 2, second.stderr
    line = second.stderr.strip()
    assert len(line.splitlines()) == 1 and "another fix is running" in line, line
    assert f"pid {first.pid}" in line and "fix --apply" in line, line
    from tfdoctor.diagnose import diagnose

    host = Host(python=str(python), env=dict(os.environ))
    applier = PlanApplier(host)
    with pytest.raises(Busy, match=f"pid {first.pid}"):
        applier(applier.plan(diagnose(host)), ["pin-python-packages"])
    (marks / "release").touch()
    out, err = first.communicate(timeout=600)
    assert first.returncode in (0, 1), err[-2000:]
    doc = json.loads(out)
    assert "package-out-of-range" not in doc["after"] and set(doc["after"]) <= set(doc["before"])
    undone = run(python, "--undo")
    assert undone.returncode == 0, undone.stderr
    assert differences(env, before) == []


@pytest.mark.parametrize("mount_opts", ["size=256k", "ro,size=1m"])
def test_full_or_read_only_state_dir(env: Path, tmp_path: Path, mount_opts: str):
    """A full (small tmpfs) or read-only journal directory: one line, exit 2, nothing changed in
    the environment and no journal left half-written."""
    if os.geteuid() != 0:
        need(False, "mounting a tmpfs needs root (CI runs as root)")
    state = tmp_path / "small"
    state.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", mount_opts, "tmpfs", str(state)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        need(False, f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        before = tree(env)
        done = run(env / "bin" / "python", "--apply", "--yes", extra={"XDG_STATE_HOME": str(state)})
        assert done.returncode == 2, done.stderr
        errors = [ln for ln in done.stderr.splitlines() if ln.startswith("tfdoctor: error:")]
        assert len(errors) == 1 and done.stderr.strip().endswith(errors[0]), done.stderr
        assert ("No space left" in done.stderr or "Read-only" in done.stderr
                or "not enough free space" in done.stderr), done.stderr
        assert differences(env, before) == []
        assert not [j for j in journals(state / "tfdoctor") if j["status"] == "applying"]
    finally:
        subprocess.run(["umount", str(state)], check=True)


def test_a_plan_that_would_add_a_second_tensorflow_is_refused(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch):
    """A pip step that would pull the full `tensorflow` in beside `tensorflow-cpu` (tf-keras
    installed with its dependencies, as the planner did before it learnt --no-deps): pip's dry
    run says so, the step is refused with that reason and nothing changes.

    pip sees only tiny local wheels with the real Requires-Dist (tf-keras 2.21.0 requires
    tensorflow<2.22,>=2.21): resolving the real index would download the 570 MB TensorFlow
    wheel just to read its metadata."""
    from fixing_wheels import TF_221_REQUIRES, build_wheel, fake_tf
    from tfdoctor.fixing.apply import apply_plan
    from tfdoctor.fixing.model import FixPlan, FixStep
    from tfdoctor.fixing.planner import pip_commands

    wheels = tmp_path / "wheels"
    fake_tf(wheels, "tensorflow", "2.21.0", TF_221_REQUIRES)
    build_wheel(wheels, "tf-keras", "2.21.0", {"tf_keras/__init__.py": ""},
                ("tensorflow<2.22,>=2.21",))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    env = copy_env(cached_env("tf-cpu"), tmp_path / "venv")
    before = tree(env)
    python = str(env / "bin" / "python")
    args = ("tf-keras~=2.21.0",)
    step = FixStep("pin-python-packages", "pip", "s", ("tf-keras-missing",),
                   pip_commands(python, args), args=args)
    plan = FixPlan(python, str(env), "venv", "h", "t", ("tf-keras-missing",), (step,))
    result = apply_plan(plan, lambda _s: True, lambda _s: False, judge=lambda _r: ())
    assert [(r.fix_id, r.status) for r in result.steps] == [("pin-python-packages", "refused")]
    detail = result.steps[0].detail
    assert detail.startswith("pip would install tensorflow 2.21.0 beside tensorflow-cpu: a "
                             "second TensorFlow distribution"), detail
    assert differences(env, before) == []


def test_a_new_finding_after_the_apply_rolls_it_back(env: Path):
    """The real applier with a judge that sees a finding that was not there before: the apply
    is rolled back automatically, with the reason, verified byte for byte."""
    from tfdoctor.diagnose import diagnose
    from tfdoctor.errors import FixError
    from tfdoctor.fixing.apply import apply_plan
    from tfdoctor.fixing.planner import plan_fixes
    from tfdoctor.host import Host

    before = tree(env)
    python = str(env / "bin" / "python")
    plan = plan_fixes(diagnose(Host(python=python, env=dict(os.environ))))
    assert [s.fix_id for s in plan.steps if s.automatic] == ["pin-python-packages"]
    with pytest.raises(FixError, match="made things worse.*invented-finding.*byte for byte"):
        apply_plan(plan, lambda _s: True, lambda _s: False,
                   judge=lambda _r: (Finding("invented-finding", Severity.ERROR, "Made up."),))
    assert differences(env, before) == []


def test_undo_reports_a_backup_mismatch_loudly_with_paths(env: Path, state_dir: Path):
    """A restore that does not give the original bytes back (the backup zip was damaged) is an
    incomplete undo naming each path, never "undone"."""
    import zipfile

    python = env / "bin" / "python"
    done = run(python, "--apply", "--yes")
    assert done.returncode in (0, 1), done.stderr
    archive = next(state_dir.glob("envs/*/applies/*/dists/protobuf-*.zip"))
    with zipfile.ZipFile(archive) as zf:
        entries = [(i, zf.read(i)) for i in zf.infolist()]
    victim = next(i.filename for i, _ in entries if i.filename.endswith("protobuf/__init__.py"))
    with zipfile.ZipFile(archive, "w") as zf:
        for info, data in entries:
            zf.writestr(info, data + b"# damaged\n" if info.filename == victim else data)
    undone = run(python, "--undo")
    assert undone.returncode == 2, undone.stderr
    assert "UNDO INCOMPLETE" in undone.stderr
    assert f"/{victim}: bytes differ from the backup" in undone.stderr
    assert [j["status"] for j in journals(state_dir)] == ["failed-rollback"]
    assert site_packages(env).is_dir()


def test_a_disk_full_during_the_rollback_is_reported_then_undo_restores(tmp_path: Path,
                                                                         monkeypatch):
    """The venv's disk fills up between the apply and its rollback (a new finding triggers it):
    the rollback cannot put the 8 MB distribution back, says ROLLBACK INCOMPLETE with the path
    (never "rolled back"), and once there is room `fix --undo` restores it exactly."""
    from fixing_venvs import make_venv
    from fixing_wheels import build_wheel
    from tfdoctor.errors import FixError
    from tfdoctor.fixing.apply import apply_plan, undo_last
    from tfdoctor.fixing.model import FixPlan, FixStep

    if os.geteuid() != 0:
        need(False, "mounting a tmpfs needs root (CI runs as root)")
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128m", "tmpfs", str(disk)]).returncode:
        need(False, "cannot mount a tmpfs here")
    try:
        wheels = tmp_path / "wheels"
        build_wheel(wheels, "bigpkg", "1.0", {"bigpkg/data.txt": "1" * (8 << 20)})
        build_wheel(wheels, "bigpkg", "2.0", {"bigpkg/data.txt": "2" * (1 << 20)})
        monkeypatch.setenv("PIP_NO_INDEX", "1")
        monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
        python = make_venv(disk / "venv")
        pip(python, "bigpkg==1.0")
        before = tree(disk / "venv")
        step = FixStep("pin-python-packages", "pip", "pin", ("old-finding",), (),
                       args=("bigpkg==2.0",))
        plan = FixPlan(python, str(disk / "venv"), "venv", "here", "now", ("old-finding",),
                       (step,))

        def judge(_result: object) -> tuple[Finding, ...]:
            with open(disk / "filler", "wb") as f:  # another process fills the disk
                try:
                    while True:
                        f.write(b"\0" * (1 << 20))
                        f.flush()
                except OSError:
                    pass
            return (Finding("old-finding", Severity.ERROR, "Old."),
                    Finding("invented-finding", Severity.ERROR, "Made up."))

        with pytest.raises(FixError, match="ROLLBACK INCOMPLETE") as failed:
            apply_plan(plan, lambda _s: True, lambda _s: False, judge=judge)
        assert "site-packages/bigpkg" in str(failed.value), failed.value
        assert "byte for byte" not in str(failed.value)
        (disk / "filler").unlink()
        undo_last(str(disk / "venv"))
        assert differences(disk / "venv", before) == []
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_ctrl_c_at_the_confirmation_prompt_stops_at_once(env: Path, state_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    """Ctrl+C while tfdoctor waits for "Apply ...? [y/N]" stops the apply then and there (the
    prompt is not left hanging), restores what was done and exits 130."""
    import click
    from click.testing import CliRunner
    from tfdoctor.fixing.commands import fix

    before = tree(env)

    def interrupted_prompt(*_args: object, **_kwargs: object) -> bool:
        os.kill(os.getpid(), signal.SIGINT)  # the key press, delivered while waiting
        time.sleep(5)
        raise AssertionError("the prompt went on waiting after Ctrl+C")

    monkeypatch.setattr(click, "confirm", interrupted_prompt)
    monkeypatch.setattr("tfdoctor.fixing.commands._can_ask", lambda: True)  # a terminal
    result = CliRunner().invoke(fix, ["--python", str(env / "bin" / "python"), "--apply"])
    assert result.exit_code == 130, result.output
    assert "stopped by SIGINT" in result.stderr and "byte for byte" in result.stderr
    assert [j["status"] for j in journals(state_dir)] == ["rolled-back"]
    assert differences(env, before) == []
