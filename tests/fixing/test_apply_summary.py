"""The words after `fix --apply` (issue 21): "Fixed: none; still there: ... cuda-library-missing"
was printed for an apply that took the verdict from problems to healthy, because an info finding
(NVSHMEM, which only XLA's collectives use) shares the id of the error it fixed. The summary
compares what is wrong (warnings and errors), never bare ids.
"""

from __future__ import annotations

from dataclasses import replace

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
