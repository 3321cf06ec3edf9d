"""The real `tfdoctor` in a pseudo-terminal: a real diagnosis, keys, quit, and no orphans.

Every process started inherits a unique marker in its environment; after the TUI exits, no
process carrying it may remain (probe children and the smoke child run in their own sessions,
so a process-group check would miss them).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import time
import uuid
from pathlib import Path

import pexpect
import pytest

LAUNCH = Path(__file__).with_name("launch.py")


def _marked(mark: str) -> list[int]:
    """Pids of live processes whose environment carries `mark` (every child inherits it)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if mark.encode() in (proc / "environ").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def _spawn(mark: str, *args: str) -> pexpect.spawn:
    """`tfdoctor ARGS` (or the launcher, when args start with it) on an 80x24 terminal."""
    env = {**os.environ, "TFDOCTOR_TEST_MARK": mark, "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    argv = list(args) if args and args[0] == str(LAUNCH) else ["-m", "tfdoctor", *args]
    return pexpect.spawn(sys.executable, argv, env=env, dimensions=(24, 80),
                         encoding="utf-8", codec_errors="replace", timeout=30)


def _gone(mark: str, within: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within
    while (left := _marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.parametrize("target", ["own", "tensorflow"])
def test_real_run_keys_and_quit_leave_no_process(target: str, request: pytest.FixtureRequest) -> None:
    """A real --quick run, for tfdoctor's own interpreter (with or without TensorFlow: the
    README's install puts it there) and for a TensorFlow venv: a verdict appears, screens open,
    q exits with the code that verdict implies, and nothing it started is left running."""
    mark = uuid.uuid4().hex
    python = () if target == "own" else ("--python", request.getfixturevalue("tf_cpu_python"))
    child = _spawn(mark, "--quick", *python)
    child.expect(r"Verdict: (healthy|\d+ problem|incomplete|could not check)")
    verdict = child.match.group(1)
    # Tab to the checks table (present whatever the verdict; findings may be empty), open one:
    # when the first row is the folded "N passed" one, Enter opens the fold, then j, Enter.
    child.send("\t")
    child.expect("Checks")
    child.send("\r")
    if child.expect(["Check ", "folds them"]) == 1:
        child.send("j\r")
        child.expect("Check ")
    for key, shown in (("\x1b", "Checks"), ("f", "values"),
                       ("\x1b", "Checks"), ("?", "fix plan"), ("\x1b", "Checks")):
        child.send(key)
        child.expect(shown)
    child.send("q")
    # The terminal keeps the target, the verdict (and root cause) after the TUI is gone.
    child.expect(r"Diagnosing [^\r\n]+\r?\nVerdict: [^\r\n]+")
    child.expect(r"tfdoctor --no-tui prints the whole report")
    child.expect(pexpect.EOF)
    child.close()
    expected = {"healthy": 0, "incomplete": 3, "could not check": 3}.get(verdict, 1)
    assert child.exitstatus == expected, (verdict, child.exitstatus, child.signalstatus)
    assert _gone(mark) == []


@pytest.fixture
def slow_python(tmp_path: Path) -> Path:
    """An 'interpreter' that hangs, so the target probe is still running when q is pressed."""
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\nexec sleep 60\n")
    path.chmod(0o755)
    return path


def test_q_during_a_run_stops_children_and_exits_130(slow_python: Path) -> None:
    """q while a probe's child hangs: the TUI says it is stopping, waits for the child to be
    killed, exits 130, prints the partial report, and leaves no process behind."""
    mark = uuid.uuid4().hex
    child = _spawn(mark, str(LAUNCH), "--python", str(slow_python), "--timeout", "3")
    child.expect("Diagnosing")
    deadline = time.monotonic() + 10
    while not any(_cmdline(pid).startswith(str(slow_python)) or "sleep" in _cmdline(pid)
                  for pid in _marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any("sleep" in _cmdline(pid) for pid in _marked(mark)), "the hanging probe never started"
    child.send("q")
    child.expect("Stopping")
    child.expect("Verdict: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert _gone(mark) == []


def test_q_during_the_tensorflow_import_kills_the_smoke_child(tf_cpu_python: str) -> None:
    """q while the smoke child imports TensorFlow: the cancel reaches the runner, which kills
    the child's process group; tfdoctor exits 130 and nothing it started survives."""
    mark = uuid.uuid4().hex
    child = _spawn(mark, "--python", tf_cpu_python)
    child.expect("Diagnosing")
    deadline = time.monotonic() + 20
    while not any("_child.py" in _cmdline(p) for p in _marked(mark)):
        assert time.monotonic() < deadline, "the smoke child never started"
        time.sleep(0.05)
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert _gone(mark) == []


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_s_during_the_tensorflow_import_leaves_smoke_checks_not_run(tf_cpu_python: str) -> None:
    """The issue's first bug, on the real binary: s while TensorFlow imports stops the run; the
    verdict is incomplete (the smoke checks did not run; their rows are Pilot-tested in
    test_review.py), and q exits 3."""
    mark = uuid.uuid4().hex
    child = _spawn(mark, "--python", tf_cpu_python)
    child.expect("Diagnosing")
    deadline = time.monotonic() + 20
    while not any("_child.py" in _cmdline(p) for p in _marked(mark)):
        assert time.monotonic() < deadline, "the smoke child never started"
        time.sleep(0.05)
    child.send("s")
    child.expect("Verdict: incomplete")
    child.send("q")
    # Left in the terminal: the verdict counts the smoke checks that did not run.
    child.expect(r"Verdict: incomplete: no problem found, but \d+ check\(s\) could not check or "
                 r"did not run")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3
    assert _gone(mark) == []


ALT_SCREEN_CLOSED = "\x1b[?1049l"
"""What Textual writes when it leaves the alternate screen: anything after it stays in the terminal."""


def _left_lines(text: str) -> list[str]:
    """The non-blank lines of terminal output, without control sequences (mode resets)."""
    text = re.sub(r"\x1b\[[0-9;?<>=]*[A-Za-z~]", "", text).replace("\r\n", "\n")
    return [ln for ln in text.split("\n") if ln.strip()]


def _spawn_binary(mark: str, *args: str, env: dict[str, str] | None = None,
                  size: tuple[int, int] = (24, 80)) -> pexpect.spawn:
    """The installed `tfdoctor` console script itself (what a user types) in a pseudo-terminal."""
    binary = Path(sys.executable).parent / "tfdoctor"
    full = {**os.environ, "TFDOCTOR_TEST_MARK": mark, "TERM": "xterm-256color", **(env or {})}
    full.pop("NO_COLOR", None)
    return pexpect.spawn(str(binary), list(args), env=full, dimensions=size, encoding="utf-8",
                         codec_errors="replace", timeout=60)


def test_quit_after_a_run_leaves_the_verdict_and_root_cause_in_the_terminal(
        tf_cpu_python: str) -> None:
    """Issue 12, point 5: after q the alternate screen is gone and the normal terminal keeps the
    target, the verdict with its root cause, the root cause's message and its fix command (a real
    problem: TF_USE_LEGACY_KERAS=1 in the tensorflow-cpu venv, which has no tf-keras)."""
    mark = uuid.uuid4().hex
    child = _spawn_binary(mark, "--quick", "--python", tf_cpu_python,
                          env={"TF_USE_LEGACY_KERAS": "1"})
    child.expect(r"Verdict: 1 problem")
    child.send("q")
    child.expect_exact(ALT_SCREEN_CLOSED)
    child.expect(r"\(tfdoctor --no-tui prints the whole report\)")
    lines = _left_lines(child.before or "")
    left = "\n".join(lines)
    child.expect(pexpect.EOF)
    child.close()
    assert lines[0] == f"Diagnosing {tf_cpu_python} (--python)", left
    assert lines[1] == "Verdict: 1 problem(s); root cause: tf-keras-missing", left
    assert lines[3].split() == ["error", "tf-keras-missing"], left
    assert "TF_USE_LEGACY_KERAS=1 is set but tf-keras is not installed" in left, left
    assert f"$ {tf_cpu_python} -m pip install --no-deps 'tf-keras~=2.21.0'" in left, left
    assert child.exitstatus == 1, (child.exitstatus, child.signalstatus)
    assert _gone(mark) == []


@pytest.fixture
def broken_venv(tmp_path: Path) -> Path:
    """A copy of the cached tensorflow-cpu venv with protobuf 5 (TF 2.21 needs >= 6.31.1) and
    the pause module that stops pip mid-install (tests/fixing/cached_envs.py)."""
    import subprocess

    from fixing.cached_envs import add_pause, cached_env, copy_env

    env = copy_env(cached_env("tf-cpu"), tmp_path / "venv")
    subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", "--no-deps", "protobuf==5.29.5"], check=True)
    add_pause(env)
    return env


def _apply_in_the_tui(child: pexpect.spawn) -> None:
    """From the main screen: the fix plan (x), select its step (space), apply (a), confirm (y)."""
    child.expect(r"Verdict: 1 problem")
    child.send("x")
    child.expect("pin-python-packages")
    for _ in range(3):  # a space that came before the list had focus selects nothing: again
        child.send(" ")
        child.send("a")
        if child.expect(["run exactly this", "Select a step first"]) == 0:
            break
    child.send("y")
    child.expect("Applying")


def _quit_paused_apply(venv: Path, tmp_path: Path, point: str, release: bool = False,
                       ) -> tuple[pexpect.spawn, list[str], str, dict[str, str]]:
    """Start the TUI on `venv`, apply its fix paused at `point` (TFDOCTOR_TEST_PAUSE), press q
    (with `release`: wait for "Stopping the fix", then let the paused step go on) and wait for the
    exit; (child, the lines left in the terminal, the process mark, the state env)."""
    from fixing.cached_envs import wait_for

    marks = tmp_path / "marks"
    marks.mkdir()
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    mark = uuid.uuid4().hex
    child = _spawn_binary(mark, "--quick", "--python", str(venv / "bin" / "python"), size=(50, 200),
                          env={**state, "TFDOCTOR_TEST_PAUSE": point, "TFDOCTOR_TEST_PAUSE_DIR": str(marks)})
    _apply_in_the_tui(child)
    wait_for(marks / "paused")
    child.send("q")
    if release:
        child.expect("Stopping the fix")
        (marks / "release").touch()
    child.expect_exact(ALT_SCREEN_CLOSED, timeout=300)
    child.expect(pexpect.EOF)
    child.close()
    return child, _left_lines(child.before or ""), mark, state


def test_quit_during_an_apply_says_the_environment_was_restored(broken_venv: Path,
                                                                 tmp_path: Path) -> None:
    """Issue 12, point 4: q while pip installs (paused mid-install, the old protobuf already moved
    aside) stops pip and waits for the restore; the terminal then keeps the verdict and, last,
    the state: rolled back, byte for byte. The venv's files hash as before; nothing is left."""
    from fixing.cached_envs import differences, processes_using, tree

    before = tree(broken_venv)
    child, left, mark, _ = _quit_paused_apply(broken_venv, tmp_path, "install")
    assert left[1] == "Verdict: 1 problem(s); root cause: package-out-of-range", left
    assert left[-1].startswith("Fix stopped: stopped by quit: pip was stopped and the environment "
                               "restored; rolled back: the environment is byte for byte as it "
                               "was before the apply (journal: "), left
    assert child.exitstatus == 1, (child.exitstatus, child.signalstatus)
    assert differences(broken_venv, before) == []
    assert processes_using(broken_venv) == [] and _gone(mark) == []


def test_quit_after_pip_finished_says_the_fix_was_applied(broken_venv: Path, tmp_path: Path) -> None:
    """q after pip finished, while the apply's judge still runs (its probe paused): the fix is
    kept and recorded; the terminal keeps a fresh verdict (not the one from before the fix) and,
    last, the state with the command that undoes it; that undo restores the venv byte for byte."""
    import subprocess

    from fixing.cached_envs import differences, processes_using, tree

    before = tree(broken_venv)
    child, left, mark, state = _quit_paused_apply(broken_venv, tmp_path, "judge", release=True)
    assert left[1] == "Verdict: healthy", left
    assert left[-1].startswith("Fix stopped: stopped by quit after the fix had finished: recorded "
                               "as applied (journal: "), left
    undo = left[-1].split("undo: ", 1)[1].rstrip(")")
    assert undo.startswith("tfdoctor fix --undo --python "), undo
    assert child.exitstatus == 0, (child.exitstatus, child.signalstatus)
    assert processes_using(broken_venv) == [] and _gone(mark) == []

    binary = Path(sys.executable).parent / "tfdoctor"
    done = subprocess.run([str(binary), *shlex.split(undo)[1:]], capture_output=True, text=True,
                          timeout=600, env={**os.environ, **state})
    assert done.returncode == 0, done.stderr[-2000:]
    assert differences(broken_venv, before) == []


def test_r_and_escape_do_nothing_during_a_real_apply(broken_venv: Path, tmp_path: Path) -> None:
    """Issue 22 item 4 through the installed binary: pip is paused mid-install; r and Escape
    are pressed. The screen says which step runs; no diagnosis starts ("probe areas" never
    shows) and the fix screen stays;
    once pip goes on, the apply's own result and the new verdict show, and q
    leaves the healthy verdict."""
    from fixing.cached_envs import wait_for

    marks = tmp_path / "marks"
    marks.mkdir()
    mark = uuid.uuid4().hex
    child = _spawn_binary(mark, "--quick", "--python", str(broken_venv / "bin" / "python"),
                          size=(50, 200), env={"XDG_STATE_HOME": str(tmp_path / "state"),
                                               "TFDOCTOR_TEST_PAUSE": "install",
                                               "TFDOCTOR_TEST_PAUSE_DIR": str(marks)})
    _apply_in_the_tui(child)
    wait_for(marks / "paused")
    child.expect("running step 1 of 1: pin-python-packages")  # the applier's live line
    # pip's own lines, live while pip is paused mid-install (run_guarded's line callback)
    child.expect(r"Installing collected packages|Collecting |Attempting uninstall")
    child.send("r")
    child.send("\x1b")
    # (The ticking clock is asserted through Pilot: a terminal redraw writes only its digit.)
    assert child.expect(["probe areas", "Diagnosing \\.\\.\\.", pexpect.TIMEOUT],
                        timeout=3) == 2, child.before
    (marks / "release").touch()
    child.expect("Apply done", timeout=300)
    child.expect("Verdict: healthy", timeout=120)  # "After:" is bold: escapes split the line
    child.send("q")
    child.expect_exact(ALT_SCREEN_CLOSED, timeout=60)
    child.expect(pexpect.EOF)
    child.close()
    assert _left_lines(child.before or "")[1] == "Verdict: healthy"
    assert _gone(mark) == []
