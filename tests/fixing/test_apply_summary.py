"""The words after `fix --apply` (issue 21): "Fixed: none; still there: ... cuda-library-missing"
was printed for an apply that took the verdict from problems to healthy, because an info finding
(NVSHMEM, which only XLA's collectives use) shares the id of the error it fixed. The summary
compares what is wrong (warnings and errors), never bare ids.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from helpers import change, healthy, judge
from tfdoctor.facts import Facts, LibraryFacts
from tfdoctor.findings import Finding, Severity
from tfdoctor.fixing.apply import ApplyResult, StepResult
from tfdoctor.fixing.render import outcome, render_apply


def missing(facts: Facts, *names: str) -> Facts:
    """TensorFlow cannot load these libraries (no copy anywhere else either)."""
    libs = tuple(lib if lib.name not in names else LibraryFacts(name=lib.name, soname=lib.soname)
                 for lib in facts.libraries)
    if "nvshmem" in names and not any(lib.name == "nvshmem" for lib in libs):
        libs += (LibraryFacts(name="nvshmem", soname="libnvshmem_host.so.3"),)
    return change(facts, libraries=libs)


def test_an_error_that_leaves_only_an_info_of_its_id_is_fixed():
    """Before: cuDNN missing (error) and NVSHMEM missing (info), both cuda-library-missing;
    after: only the info. The verdict is healthy, and the summary says fixed, nothing left."""
    before = judge(missing(healthy(), "cudnn", "nvshmem"))
    after = judge(missing(healthy(), "nvshmem"))
    assert before.verdict == "problems" and after.verdict != "problems"
    assert [f.severity.value for f in after.findings if f.id == "cuda-library-missing"] == ["info"]
    result = ApplyResult(None, (StepResult("activation-hook-ld-library-path", "done"),))
    text = render_apply(result, before.findings, after.findings, "/venv/bin/python")
    assert "Fixed: cuda-library-missing; still there: none\n" in text, text
    assert "After:  cuda-library-missing (info)" in text, text


def test_a_problem_still_there_and_a_new_one_are_said():
    """The other way round stays right: a library still missing keeps its id "still there"
    (cuFFT here, after cuDNN came back), and a problem with an id not seen before is new."""
    before = judge(missing(healthy(), "cudnn", "cufft"))
    after = judge(missing(healthy(), "cufft"))
    error = next(f for f in after.findings if f.severity.value == "error")
    worse = replace(error, id="made-up-new-problem")
    fixed, left, new = outcome(before.findings, (*after.findings, worse))
    assert fixed == [] and "cuda-library-missing" in left and new == ["made-up-new-problem"]


def test_the_preload_fix_on_a_fake_h100_says_what_it_fixed(tmp_path):
    """The issue's own run, through the console script: TF 2.21 with its [and-cuda] wheels on a
    fake H100 node, cuSOLVER and cuRAND off TensorFlow's RUNPATH (tests/scenarios
    tf221_runpath_gap). The apply takes the verdict from problems to no problems, leaving an
    info cuda-library-missing (NVSHMEM); the words said "still there: ... cuda-library-missing"
    and must say it was fixed."""
    import json
    import subprocess
    import sys

    from fakegpu.e2e import build, load_document, make_template_venv

    scenarios = Path(__file__).resolve().parents[1] / "scenarios"
    doc = load_document(scenarios / "cases" / "tf221_runpath_gap.json")
    e2e = build(tmp_path / "machine", doc, make_template_venv(tmp_path / "template"),
                scenarios / "tf")
    env = e2e.env | {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path / "home")}
    tfdoctor = Path(sys.executable).parent / "tfdoctor"
    done = subprocess.run([str(tfdoctor), "fix", "--python", str(e2e.python), "--apply", "--yes"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    fixed = next(ln for ln in done.stdout.splitlines() if ln.startswith("Fixed:"))
    was_fixed, still_there = fixed.split(";")[:2]
    assert "cuda-library-missing" in was_fixed, done.stdout
    assert "cuda-library-missing" not in still_there, done.stdout  # the words
    assert "After:  xla-ptxas-other-cuda, cuda-library-missing (info)" in done.stdout, done.stdout
    after = subprocess.run([str(tfdoctor), "--quick", "--json", "--python", str(e2e.python)],
                           capture_output=True, text=True, env=env, timeout=300)
    doc = json.loads(after.stdout)
    assert doc["verdict"]["status"] != "problems", after.stdout[-2000:]
    assert {f["severity"] for f in doc["findings"] if f["id"] == "cuda-library-missing"} == {"info"}


def _pin_plan(tmp_path: Path, monkeypatch) -> tuple[object, Path]:
    """A real venv with smallpkg 1.0 and a plan that pins 2.0 (local wheels, no index)."""
    from fixing_venvs import make_venv, pip
    from fixing_wheels import build_wheel
    from tfdoctor.fixing.model import FixPlan, FixStep

    wheels = tmp_path / "wheels"
    build_wheel(wheels, "smallpkg", "1.0", {"smallpkg/__init__.py": "V = 1\n"})
    build_wheel(wheels, "smallpkg", "2.0", {"smallpkg/__init__.py": "V = 2\n"})
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    python = make_venv(tmp_path / "venv")
    pip(python, "smallpkg==1.0")
    step = FixStep("pin-python-packages", "pip", "pin", ("cuda-library-missing",), (),
                   args=("smallpkg==2.0",))
    plan = FixPlan(python, str(tmp_path / "venv"), "venv", "here", "now",
                   ("cuda-library-missing",), (step,))
    return plan, next((tmp_path / "venv").glob("lib/python3*/site-packages/smallpkg/__init__.py"))


BEFORE = (Finding("cuda-library-missing", Severity.ERROR, "TensorFlow cannot load libcudnn.so.9."),)


def test_an_info_finding_new_after_the_apply_does_not_roll_it_back(tmp_path, monkeypatch):
    """The rollback compared bare ids: any id not there before, an info note included, undid a fix
    that had made the verdict healthy. Only more problems (warnings, errors) are worse."""
    from tfdoctor.fixing.apply import apply_plan

    plan, module = _pin_plan(tmp_path, monkeypatch)
    note = Finding("cuda-library-missing-nvshmem-note", Severity.INFO, "Only XLA's collectives use it.")
    result = apply_plan(plan, lambda _s: True, lambda _s: False, baseline=BEFORE,
                        judge=lambda _r: (note,))
    assert [r.status for r in result.steps] == ["done"] and module.read_text() == "V = 2\n"


def test_a_second_problem_of_an_id_already_there_rolls_the_apply_back(tmp_path, monkeypatch):
    """The other way: one library missing before, two after. By bare ids nothing was new; counted,
    the apply made things worse and is undone byte for byte."""
    from tfdoctor.errors import FixError
    from tfdoctor.fixing.apply import apply_plan

    plan, module = _pin_plan(tmp_path, monkeypatch)
    worse = (*BEFORE, Finding("cuda-library-missing", Severity.ERROR,
                              "TensorFlow cannot load libcublas.so.12."))
    with pytest.raises(FixError, match="made things worse.*cuda-library-missing.*byte for byte"):
        apply_plan(plan, lambda _s: True, lambda _s: False, baseline=BEFORE, judge=lambda _r: worse)
    assert module.read_text() == "V = 1\n"
