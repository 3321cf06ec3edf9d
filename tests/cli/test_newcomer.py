"""The command line a newcomer types: the right target, its reason on the first line, and
one-line answers where a person cannot be asked."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from click.testing import CliRunner
from tfdoctor.cli import cli
from tfdoctor.cmdkit import target_python
from tfdoctor.exit_codes import ExitCode

TFDOCTOR = Path(sys.executable).parent / "tfdoctor"


@pytest.fixture(scope="module")
def other_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv that is not tfdoctor's own (as when tfdoctor runs from pipx or uv tool)."""
    path = tmp_path_factory.mktemp("active") / "venv"
    venv.create(path, with_pip=False, symlinks=True)
    return path


def test_active_virtual_env_is_the_default_target(other_venv: Path, monkeypatch: pytest.MonkeyPatch):
    """tfdoctor from pipx with a venv activated diagnoses that venv, not its own interpreter.
    tfdoctor's own environment is the pipx one, without TensorFlow, whatever .venv holds."""
    monkeypatch.setattr("tfdoctor.cmdkit.own_has_tensorflow", lambda: False)
    python, why = target_python(None, {"VIRTUAL_ENV": str(other_venv)})
    assert python == str(other_venv / "bin" / "python")
    assert "$VIRTUAL_ENV" in why and sys.executable in why


def test_conda_prefix_comes_after_virtual_env(other_venv: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch):
    """$VIRTUAL_ENV wins over $CONDA_PREFIX; a conda env alone is chosen by $CONDA_PREFIX (for a
    tfdoctor whose own environment has no TensorFlow, whatever .venv holds)."""
    monkeypatch.setattr("tfdoctor.cmdkit.own_has_tensorflow", lambda: False)
    both = {"VIRTUAL_ENV": str(other_venv), "CONDA_PREFIX": "/nonexistent/conda"}
    assert target_python(None, both)[0] == str(other_venv / "bin" / "python")
    python, why = target_python(None, {"CONDA_PREFIX": str(other_venv)})
    assert python == str(other_venv / "bin" / "python") and "$CONDA_PREFIX" in why
    # A variable naming no interpreter is skipped, never a broken target.
    assert target_python(None, {"VIRTUAL_ENV": str(tmp_path)})[0] == sys.executable


def test_own_environment_with_tensorflow_stays_the_target(other_venv: Path,
                                                          monkeypatch: pytest.MonkeyPatch):
    """`./install.sh && .venv/bin/tfdoctor` with another environment active (conda base):
    tfdoctor's own environment has TensorFlow, so it stays the target and says why."""
    monkeypatch.setattr("tfdoctor.cmdkit.own_has_tensorflow", lambda: True)
    python, why = target_python(None, {"VIRTUAL_ENV": str(other_venv), "CONDA_PREFIX": "/x"})
    assert python == sys.executable and why == "tfdoctor's own interpreter, which has TensorFlow"


def test_own_environment_and_explicit_python():
    """tfdoctor's own active venv is its own interpreter; --python always wins."""
    python, why = target_python(None, {"VIRTUAL_ENV": sys.prefix})
    assert python == sys.executable and "own" in why
    assert target_python(None, {})[1].startswith("tfdoctor's own interpreter")
    assert target_python(sys.executable, {"VIRTUAL_ENV": "/x"}) == (sys.executable, "--python")


def test_first_line_names_the_interpreter_and_why(other_venv: Path, python_without_tf: str):
    """Every text report starts with the interpreter diagnosed and the reason it was chosen.
    tfdoctor runs from an interpreter without TensorFlow (as from pipx), whatever .venv holds."""
    env = {**os.environ, "VIRTUAL_ENV": str(other_venv)}
    env.pop("CONDA_PREFIX", None)
    proc = subprocess.run([python_without_tf, "-m", "tfdoctor", "--quick", "--no-tui"],
                          capture_output=True, text=True, env=env, timeout=120)
    first = proc.stdout.splitlines()[0]
    assert first == (f"Diagnosing {other_venv}/bin/python (the active environment $VIRTUAL_ENV; "
                     f"tfdoctor runs from {python_without_tf})"), proc.stdout[:400]
    assert proc.stdout.splitlines()[1].startswith("Verdict: ")


def test_apply_without_yes_and_without_a_terminal_is_a_usage_error():
    """`tfdoctor fix --apply` from a script: one line and exit 2, not a prompt read as Ctrl+C."""
    proc = subprocess.run([str(TFDOCTOR), "fix", "--apply", "--python", sys.executable],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == ExitCode.USAGE
    assert proc.stderr.strip().count("\n") == 0
    assert "add --yes" in proc.stderr


def test_global_python_before_fix_reaches_fix():
    """Options before the command are the command's: the dry run is for the given interpreter."""
    result = CliRunner().invoke(cli, ["--python", sys.executable, "fix", "--json"])
    assert result.exit_code == ExitCode.OK, result.output
    assert f'"python": "{sys.executable}"' in result.stdout


def test_expect_gpus_explains_a_cpu_only_tensorflow():
    """--expect-gpus 1 with tensorflow-cpu on a machine without a driver: the CPU-only build is
    named (with its fix) and the shortfall says every reason, not only the driver; the root is
    the missing driver, since no TensorFlow change gives a GPU without it (issue 20)."""
    from helpers import change, healthy, judge
    from tfdoctor.facts import Distribution, DriverFacts

    facts = change(healthy(), driver=DriverFacts(nvml_error="NVML_ERROR_LIBRARY_NOT_FOUND"),
                   tensorflow={"is_cuda_build": False,
                               "distributions": (Distribution("tensorflow-cpu", "2.21.0"),)})
    report = judge(facts, expect_gpus=1)
    by_id = {f.id: f for f in report.findings}
    assert "--expect-gpus" in by_id["tf-cpu-only-build"].message
    assert by_id["tf-cpu-only-build"].remediation is not None
    why = by_id["gpus-fewer-than-expected"].evidence["why"]
    assert "NVML_ERROR_LIBRARY_NOT_FOUND" in why and "CPU-only build (tensorflow-cpu)" in why
    assert by_id["gpus-fewer-than-expected"].caused_by == "driver-not-installed"
    assert by_id["tf-cpu-only-build"].caused_by == "driver-not-installed"


def test_identical_findings_for_several_libraries_are_one_block():
    """Three libraries with the same finding, hint and fix read as one block with the fix's
    commands once each, not three copies of the same advice; a different fix stays apart."""
    from tfdoctor.findings import Finding, Remediation, Severity
    from tfdoctor.render_text import group_findings, render_group

    def lib(soname: str, fix: str = "activation-hook-ld-library-path") -> Finding:
        return Finding("cuda-library-missing", Severity.WARNING, f"TensorFlow cannot load {soname}.",
                       {"library.soname": soname}, "Add its directory.",
                       Remediation(fix, ("export A=1", f"export B={soname}")), ("https://x",))

    found = (lib("libcurand.so.10"), lib("libcufft.so.11"), lib("libnccl.so.2", fix="other"),
             lib("libcusparse.so.12"))
    groups = group_findings(found)
    assert [len(g) for g in groups] == [3, 1]
    text = "\n".join(render_group(groups[0], color=False))
    assert text.splitlines()[0] == "warning cuda-library-missing (3 alike)"
    assert text.count("hint: Add its directory.") == 1 and text.count("$ export A=1") == 1
    assert text.count("see: https://x") == 1
    for soname in ("libcurand.so.10", "libcufft.so.11", "libcusparse.so.12"):
        assert f"- library.soname: {soname}" in text and f"$ export B={soname}" in text


def test_budget_one_second_is_incomplete_everywhere(tf_cpu_python: str, tmp_path: Path):
    """The issue's `tfdoctor --budget 1 --json`: the TensorFlow import is killed, so no smoke
    check passed, the verdict is incomplete (exit 3) with no root cause, and the Prometheus
    file says incomplete too."""
    import json

    prom = tmp_path / "t.prom"
    proc = subprocess.run([str(TFDOCTOR), "--budget", "1", "--json", "--python", tf_cpu_python,
                           "--prometheus-textfile", str(prom)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == ExitCode.INCOMPLETE, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"]["status"] == "incomplete" and doc["verdict"]["root_cause"] is None
    smoke = {o["check"]: o for o in doc["outcomes"] if o["area"] == "smoke"}
    assert not [c for c, o in smoke.items() if o["status"] == "passed"]
    assert smoke["smoke-gpus"]["status"] == "not-run" and "budget" in smoke["smoke-gpus"]["reason"]
    metrics = prom.read_text()
    assert 'tfdoctor_verdict{status="incomplete",environment="t"} 1' in metrics
    assert "tfdoctor_root_cause_info{" not in metrics
