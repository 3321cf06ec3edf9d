"""The words after `fix --apply` (issue 21): "Fixed: none; still there: ... cuda-library-missing"
was printed for an apply that took the verdict from problems to healthy, because an info finding
(NVSHMEM, which only XLA's collectives use) shares the id of the error it fixed. The summary
compares what is wrong (warnings and errors), never bare ids.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from helpers import change, healthy, judge
from tfdoctor.facts import Facts, LibraryFacts
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
