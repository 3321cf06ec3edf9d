"""A broken `--python` and a broken TensorFlow import: data and ProbeIssues, never an exception."""

from __future__ import annotations

import time

from target_fakes import script
from tfdoctor.host import Host
from tfdoctor.probes.target import probe_target


def run_target(python: str, timeout: float = 10.0):
    issues = []
    python_facts, tf = probe_target(Host(python=python, timeout=timeout), issues)
    return python_facts, tf, issues


def test_missing_interpreter(tmp_path):
    """--python pointing nowhere: an error fact and an error issue that name the path."""
    missing = str(tmp_path / "no" / "python")
    python, tf, issues = run_target(missing)
    assert tf is None
    assert python.executable == missing
    assert python.error and missing in python.error and "No such file" in python.error
    assert [(i.probe, i.kind) for i in issues] == [("target", "error")]


def test_not_executable(tmp_path):
    """A file without the execute bit: could not start, reported as such."""
    path = tmp_path / "python"
    path.write_text("not a program")
    python, _, issues = run_target(str(path))
    assert "Permission denied" in (python.error or "")
    assert issues[0].kind == "error"


def test_program_that_is_not_python():
    """/bin/true runs and prints nothing: not a usable interpreter."""
    python, tf, issues = run_target("/bin/true")
    assert tf is None
    assert "not a usable Python interpreter" in (python.error or "")
    assert issues[0].kind == "error"


def test_program_printing_garbage(tmp_path):
    """A wrapper printing text (or a JSON list) instead of the report is rejected, not trusted."""
    for body in ('echo "Python 3.11.7"; echo "{half a json"', "echo '[1, 2]'", "echo '{}'"):
        python, _, issues = run_target(script(tmp_path / "fake-python", body))
        assert "not a usable Python interpreter" in (python.error or "")
        assert len(issues) == 1


def test_interpreter_that_fails_keeps_stderr_tail(tmp_path):
    """A non-zero exit is reported with its status and the tail of stderr as evidence."""
    body = (
        'echo "Traceback (most recent call last):" >&2; '
        'echo "SyntaxError: invalid syntax" >&2; exit 1'
    )
    python, _, issues = run_target(script(tmp_path / "python2", body))
    assert "exited with status 1" in (python.error or "")
    assert "SyntaxError: invalid syntax" in python.error
    assert issues[0].kind == "error"


def test_hanging_interpreter_times_out(tmp_path):
    """An interpreter that hangs is killed at the time limit: a timeout issue, quickly."""
    start = time.monotonic()
    python, tf, issues = run_target(script(tmp_path / "hang", "sleep 30"), timeout=1.0)
    assert time.monotonic() - start < 10
    assert tf is None
    assert "timed out after 1 s" in (python.error or "")
    assert [(i.probe, i.kind) for i in issues] == [("target", "timeout")]


def test_interpreter_killed_by_signal(tmp_path):
    """A crash (SIGSEGV) of the interpreter is a crash issue naming the signal."""
    python, _, issues = run_target(script(tmp_path / "segv", "kill -SEGV $$"))
    assert "SIGSEGV" in (python.error or "")
    assert issues[0].kind == "crash"


RUNTIME_OK = """
print("TensorFlow chatter on stdout")
__version__ = "2.99.0"
class sysconfig:
    @staticmethod
    def get_build_info():
        return {"is_cuda_build": True, "cuda_version": "12.5.1"}
"""


