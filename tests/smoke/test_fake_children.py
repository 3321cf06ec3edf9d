"""Fake target interpreters that misbehave: each must become the right outcome and finding
within its time limit, and no process of theirs may survive."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import tfdoctor.checks.smoke  # noqa: F401  (registers the smoke checks)
from conftest import FAKES, make_facts
from tfdoctor.facts import SmokeFacts
from tfdoctor.host import Host
from tfdoctor.registry import _REGISTRY, CheckConfig, run_check
from tfdoctor.smoke import run_smoke


def _alive(pid: int) -> bool:
    """True while pid exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z")


def _run(fake: str, env: dict[str, str] | None = None, **kw: float) -> tuple[SmokeFacts, float]:
    host = Host(python=str(FAKES / fake), env={**os.environ, **(env or {})})
    start = time.monotonic()
    facts = run_smoke(host, **kw)
    return facts, time.monotonic() - start


def _finding_ids(smoke: SmokeFacts) -> set[str]:
    return {
        f.id for f in run_check(_REGISTRY["smoke-run"], make_facts(smoke), CheckConfig()).findings
    }


def test_hang_is_killed_at_the_recipe_limit_with_its_grandchild(tmp_path: Path) -> None:
    """A child that hangs in the import is killed at per_recipe seconds, its own child too."""
    pidfile = tmp_path / "pid"
    smoke, took = _run("hang.py", {"FAKE_PIDFILE": str(pidfile)}, per_recipe=2.0, budget=30.0)
    assert smoke.outcome == "timeout" and smoke.limit_seconds == 2.0
    assert took < 6.0
    stuck = smoke.recipe("import")
    assert stuck is not None and stuck.status == "timeout"
    assert "I0000 loading things" in smoke.log_tail
    assert {r.status for r in smoke.recipes if r.name != "import"} == {"not-run"}
    assert smoke.survivors == () and not _alive(int(pidfile.read_text()))
    assert "smoke-timeout" in _finding_ids(smoke)


def test_total_budget_is_enforced() -> None:
    """The whole-run budget wins when it is shorter than the per-recipe limit."""
    smoke, took = _run("hang.py", per_recipe=30.0, budget=1.5)
    assert smoke.outcome == "budget" and took < 5.0
    assert "smoke-budget-exhausted" in _finding_ids(smoke)


@pytest.mark.parametrize(
    "sig, finding",
    [
        ("SIGSEGV", "smoke-crashed"),
        ("SIGABRT", "smoke-crashed"),
        ("SIGILL", "smoke-illegal-instruction"),
        ("SIGKILL", "smoke-killed"),
    ],
)
def test_signals_name_the_recipe_and_keep_the_log(sig: str, finding: str) -> None:
    """A child killed by a signal mid-recipe: the signal, the recipe, and its last log line."""
    smoke, took = _run(
        "signal_self.py", {"FAKE_SIGNAL": sig, "FAKE_LOG": "E0000 last words"}, per_recipe=20.0
    )
    assert smoke.outcome == "crashed" and smoke.exit == sig and took < 10.0
    matmul = smoke.recipe("matmul")
    assert matmul is not None and matmul.status == "crashed"
    assert matmul.log_tail == ("E0000 last words",)
    assert smoke.recipe("import").status == "passed"
    assert smoke.recipe("xla").status == "not-run"
    ids = _finding_ids(smoke)
    assert finding in ids
    assert smoke.survivors == ()


def test_sigill_log_line_maps_to_missing_cpu_instructions() -> None:
    """TF's own AVX message before the SIGILL is recognised as the cause."""
    line = (
        "2021-01-01 10:00:00.000000: F tensorflow/core/platform/cpu_feature_guard.cc:38] The "
        "TensorFlow library was compiled to use AVX instructions, but these aren't available "
        "on your machine."
    )
    smoke, _ = _run("signal_self.py", {"FAKE_SIGNAL": "SIGILL", "FAKE_LOG": line})
    assert [(c.id, c.subject, c.recipe) for c in smoke.causes] == [
        ("cpu-instructions-missing", "AVX", "matmul")
    ]


def test_memory_limit_kill_is_reported_as_oom() -> None:
    """A child that exceeds its memory limit and is SIGKILLed during import: smoke-killed."""
    smoke, took = _run("memory.py", per_recipe=20.0)
    assert smoke.outcome == "crashed" and smoke.exit == "SIGKILL" and took < 10.0
    assert smoke.recipe("import").status == "crashed"
    assert "smoke-killed" in _finding_ids(smoke)


def test_garbage_output_is_not_mistaken_for_results() -> None:
    """A "python" that is not Python: its output is evidence, not results."""
    smoke, _ = _run("garbage.sh")
    assert smoke.outcome == "garbage"
    assert smoke.garbage == ("Welcome to FakeShell 1.0", "usage: fakeshell [options]")
    assert "smoke-garbage-output" in _finding_ids(smoke)


def test_grandchild_left_behind_is_killed(tmp_path: Path) -> None:
    """The child exits but its grandchild holds the pipes: the run still ends promptly and the
    grandchild is killed with the process group."""
    pidfile = tmp_path / "pid"
    smoke, took = _run("grandchild.sh", {"FAKE_PIDFILE": str(pidfile)}, per_recipe=20.0)
    assert took < 6.0
    assert smoke.outcome == "exited" and smoke.exit == "status 3"
    assert smoke.survivors == () and not _alive(int(pidfile.read_text()))
    assert "smoke-exited" in _finding_ids(smoke)


def test_missing_interpreter_could_not_start(tmp_path: Path) -> None:
    """A --python that does not exist is a finding, not an exception."""
    smoke = run_smoke(Host(python=str(tmp_path / "nope")))
    assert smoke.outcome == "could-not-start"
    assert all(r.status == "not-run" for r in smoke.recipes)
    assert "smoke-could-not-start" in _finding_ids(smoke)


def test_cancel_stops_the_run_quickly() -> None:
    """The CLI's cancel event (Ctrl-C, TUI quit) ends a hung run well before its limit."""
    import threading

    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    smoke, took = _run("hang.py", per_recipe=30.0, cancel=cancel)  # type: ignore[arg-type]
    assert smoke.outcome == "cancelled" and took < 4.0 and smoke.survivors == ()


def test_flooding_child_is_capped_in_memory_and_said_so() -> None:
    """A child printing 40 MB (a 20 MB line among them) is drained, not kept: at most 8 MiB per
    stream is read into tfdoctor, the rest is counted, and smoke-output-capped says so."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    smoke, took = _run("flood.sh", per_recipe=30.0)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert smoke.output_dropped > 30_000_000
    assert grown_mib < 120, grown_mib
    assert "smoke-output-capped" in _finding_ids(smoke)
    assert smoke.survivors == ()


def test_an_error_raised_in_a_recipe_is_read_like_the_log() -> None:
    """TensorFlow's exception text reaches tfdoctor only in the recipe's result (the child caught
    it): its cause is the recipe's and the run's, as a logged line's would be (tensorflow#57162)."""
    smoke, _ = _run("raised.py", per_recipe=10.0, budget=30.0)
    matmul = smoke.recipe("matmul")
    assert matmul is not None and matmul.status == "error"
    assert [c.id for c in matmul.causes] == ["jit-compilation-failed"]
    assert [(c.id, c.subject) for c in smoke.causes] == [("jit-compilation-failed", "FloorMod")]
    log = run_check(_REGISTRY["smoke-log"], make_facts(smoke), CheckConfig()).findings
    assert [f.id for f in log] == ["tf-log-jit-compilation-failed"]
