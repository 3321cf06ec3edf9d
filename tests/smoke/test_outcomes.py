"""Every smoke-dependent check in every early-stop state: never "passed" for what did not run.

The SmokeFacts here are shaped exactly as smoke/runner.py leaves them (the recipe that was
running gets timeout / crashed / not-run, every later one "not-run" with the reason), so these
are the facts a stopped TUI run, `--budget 1`, a failed import or a crash really produce; the
last test makes one of them for real with the tensorflow-cpu venv.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from early_stops import A100, CPU, EARLY_STOPS, GPU, NAMES, SMOKE_CHECKS, TF, UNFINISHED_RUN, make_facts
from tfdoctor.exit_codes import ExitCode, exit_code_for
from tfdoctor.facts import DriverFacts, RecipeResult, SmokeDevice, SmokeFacts
from tfdoctor.findings import CheckStatus
from tfdoctor.registry import CheckConfig
from tfdoctor.report import build_report


def statuses(smoke: SmokeFacts, **kw: object) -> dict[str, CheckStatus]:
    report = build_report(make_facts(smoke, **kw))
    return {o.check: o.status for o in report.outcomes if o.area == "smoke"}


@pytest.mark.parametrize("state", sorted(EARLY_STOPS))
@pytest.mark.parametrize("driver", ["no-gpu", "a100"])
def test_no_smoke_check_passes_after_an_early_stop(state: str, driver: str):
    """The bug: a stopped or cut-short run showed "[ok] TensorFlow sees the GPUs" and "[ok]
    Tensor Cores are used". Every smoke check is now not-run (with its reason) or judged."""
    smoke = EARLY_STOPS[state]
    report = build_report(make_facts(smoke, driver=A100 if driver == "a100" else DriverFacts()))
    got = {o.check: o for o in report.outcomes if o.area == "smoke"}
    assert set(got) == set(SMOKE_CHECKS)
    devices_done = any(r.name == "devices" and r.status == "passed" for r in smoke.recipes)
    # The child ended by itself (even by a crash): its whole log was read and judged.
    log_done = smoke.outcome in ("completed", "crashed", "exited", "garbage")
    for check, outcome in got.items():
        judged = {"smoke-gpus": devices_done, "smoke-log": log_done}.get(check, False)
        assert judged or outcome.status is not CheckStatus.PASSED, (state, check)
        if outcome.status is CheckStatus.NOT_RUN:
            assert outcome.reason, (state, check)
    # The checks over recipe results never ran in any of these states.
    for check in ("smoke-gpus", "smoke-tensor-cores", "smoke-throughput", "smoke-multi-gpu"):
        if check == "smoke-gpus" and devices_done:
            continue  # the devices recipe did finish: its list is judged
        assert got[check].status is CheckStatus.NOT_RUN, (state, check, got[check])
    if state in UNFINISHED_RUN:
        assert got["smoke-run"].status is CheckStatus.NOT_RUN
        assert got["smoke-log"].status is CheckStatus.NOT_RUN
        assert got["smoke-recipes"].status is CheckStatus.NOT_RUN


@pytest.mark.parametrize("state", sorted(EARLY_STOPS))
def test_verdict_after_an_early_stop(state: str):
    """Cut-short smoke work is "incomplete" (exit 3) unless a real problem was found first,
    and a root cause exists only on a verdict with problems (JSON included)."""
    report = build_report(make_facts(EARLY_STOPS[state]))
    code = exit_code_for(report)
    doc = json.loads(json.dumps(report.to_dict(int(code))))
    errors = [f.id for f in report.findings if f.severity.value == "error"]
    if errors:
        assert (report.verdict, code) == ("problems", ExitCode.PROBLEMS)
        assert doc["verdict"]["root_cause"] == errors[0]
    else:
        assert (report.verdict, code) == ("incomplete", ExitCode.INCOMPLETE), state
        assert doc["verdict"]["root_cause"] is None
        assert exit_code_for(report, "warning") is ExitCode.INCOMPLETE
    assert state not in ("stopped-during-import", "stopped-after-devices", "budget-during-import",
                         "budget-mid-recipes") or not errors
    not_run = {o["check"] for o in doc["outcomes"] if o["status"] == "not-run"}
    assert {"smoke-tensor-cores", "smoke-throughput", "smoke-multi-gpu"} <= not_run


def test_import_failed_is_a_problem_and_nothing_after_it_passed():
    """smoke-import-failed is the error; the recipe checks say why they did not run."""
    report = build_report(make_facts(EARLY_STOPS["import-failed"]))
    assert report.verdict == "problems" and report.root_cause is not None
    assert report.root_cause.id == "smoke-import-failed"
    reasons = {o.check: o.reason for o in report.outcomes if o.status is CheckStatus.NOT_RUN}
    assert reasons["smoke-tensor-cores"].endswith("import tensorflow failed in the target interpreter")


def completed(*devices: SmokeDevice, cuda: bool = True) -> SmokeFacts:
    names = [(n, d.name) for n in NAMES if n not in ("devices", "multi-device") for d in devices
             if n not in ("throughput", "tensor-cores") or d.device_type == "GPU"
             or len(devices) == 1]
    recipes = [RecipeResult("import", status="passed"), RecipeResult("devices", status="passed")]
    recipes += [RecipeResult(n, device=d, status="passed", metrics={"fp16_vs_fp32": 1.0})
                for n, d in names]
    recipes.append(RecipeResult("multi-device", status="skipped", detail="fewer than two devices"))
    return SmokeFacts(python="/venv/bin/python", outcome="completed", tf_version="2.21.0",
                      is_cuda_build=cuda, devices=devices, recipes=tuple(recipes))


def test_no_gpu_visible_to_tensorflow_is_not_run_when_one_was_expected():
    """NVML lists an A100 but TensorFlow saw none: Tensor Cores and throughput were never
    measured ("no GPU visible to TensorFlow"), and smoke-no-gpu is the error."""
    got = statuses(completed(CPU), driver=A100)
    assert got["smoke-gpus"] is CheckStatus.FAILED
    assert got["smoke-tensor-cores"] is CheckStatus.NOT_RUN
    assert got["smoke-throughput"] is CheckStatus.NOT_RUN
    assert got["smoke-multi-gpu"] is CheckStatus.NOT_APPLICABLE


def test_cpu_only_machine_is_not_applicable_not_passed():
    """No GPU anywhere and none expected: the GPU checks are [--], never "[ok] Tensor Cores are
    used" nor "[ok] TensorFlow sees the GPUs" (issue 22: it saw none); the verdict stays
    healthy."""
    smoke = completed(CPU, cuda=False)
    got = statuses(smoke)
    assert got["smoke-tensor-cores"] is CheckStatus.NOT_APPLICABLE
    assert got["smoke-throughput"] is CheckStatus.NOT_APPLICABLE
    assert build_report(make_facts(smoke)).verdict == "healthy"
    assert statuses(smoke, driver=DriverFacts())["smoke-gpus"] is CheckStatus.NOT_APPLICABLE


def test_expect_gpus_on_a_cpu_machine_makes_gpu_checks_not_run():
    """--expect-gpus 1 where TensorFlow sees none: the GPU measurements did not run."""
    report = build_report(make_facts(completed(CPU, cuda=False)), CheckConfig(expect_gpus=1))
    got = {o.check: o.status for o in report.outcomes}
    assert got["smoke-tensor-cores"] is CheckStatus.NOT_RUN


def test_recipe_not_asked_for_is_not_applicable():
    """`--only matmul`: the other recipes were not asked for, which is not "not run"."""
    smoke = SmokeFacts(python="p", outcome="completed", tf_version="2.21.0", devices=(CPU,),
                       recipes=(RecipeResult("import", status="passed"),
                                RecipeResult("devices", status="passed"),
                                RecipeResult("matmul", device="CPU:0", status="passed")))
    got = statuses(smoke)
    assert got["smoke-recipes"] is CheckStatus.PASSED
    assert got["smoke-tensor-cores"] is CheckStatus.NOT_APPLICABLE
    assert got["smoke-multi-gpu"] is CheckStatus.NOT_APPLICABLE


def test_healthy_gpu_run_is_still_judged():
    """The NotRun guards do not hide a real run: an A100 run is judged as before."""
    got = statuses(completed(CPU, GPU), driver=A100)
    assert got["smoke-gpus"] is CheckStatus.PASSED
    assert got["smoke-recipes"] is CheckStatus.PASSED
    assert got["smoke-tensor-cores"] is not CheckStatus.NOT_RUN


def test_real_budget_exhausted_run_is_incomplete(tf_cpu_python: str):
    """The issue's `tfdoctor --budget 1`: the real import is killed; nothing passes, the
    verdict is incomplete with no root cause."""
    from tfdoctor.host import Host
    from tfdoctor.smoke import run_smoke

    smoke = run_smoke(Host(python=tf_cpu_python), budget=1.0, per_recipe=60.0)
    assert smoke.outcome == "budget"
    report = build_report(make_facts(smoke))
    smoke_rows = {o.check: o.status for o in report.outcomes if o.area == "smoke"}
    assert CheckStatus.PASSED not in smoke_rows.values(), smoke_rows
    assert report.verdict == "incomplete" and report.root_cause is None
    assert exit_code_for(report) is ExitCode.INCOMPLETE


@pytest.mark.slow
def test_real_runs_give_each_smoke_check_its_status(cpu_smoke: SmokeFacts,
                                                     cuda_smoke: SmokeFacts):
    """Statuses, not only "no warning": a finished tensorflow-cpu run on this GPU-less machine
    passes what ran and is [--] for the GPU checks (smoke-gpus too: no GPU, none expected, a
    CPU-only build: nothing said "sees the GPUs"); the CUDA build without a driver warns
    that TensorFlow sees no GPU and leaves the GPU measurements [--] (none was expected)."""
    cpu = {o.check: o.status for o in build_report(make_facts(cpu_smoke)).outcomes
           if o.area == "smoke"}
    assert cpu == {
        "smoke-run": CheckStatus.PASSED, "smoke-gpus": CheckStatus.NOT_APPLICABLE,
        "smoke-log": CheckStatus.PASSED, "smoke-recipes": CheckStatus.PASSED,
        "smoke-tensor-cores": CheckStatus.NOT_APPLICABLE,
        "smoke-throughput": CheckStatus.NOT_APPLICABLE, "smoke-multi-gpu": CheckStatus.PASSED}
    cuda = build_report(make_facts(cuda_smoke))
    got = {o.check: o.status for o in cuda.outcomes if o.area == "smoke"}
    assert got["smoke-gpus"] is CheckStatus.WARNED
    assert got["smoke-tensor-cores"] is CheckStatus.NOT_APPLICABLE
    # --only matmul: the recipes it did not ask for are [--], never "passed".
    assert got["smoke-throughput"] is CheckStatus.NOT_APPLICABLE
    expecting = build_report(make_facts(cuda_smoke), CheckConfig(expect_gpus=1))
    assert {o.check: o.status for o in expecting.outcomes}["smoke-gpus"] is CheckStatus.FAILED


CREATION = ("InternalError: cudaGetDevice() failed. Status: API call is not supported in the installed "
            "CUDA driver")


def kernels_failed(creation: bool) -> SmokeFacts:
    """What the runner leaves when TensorFlow lists a GPU it cannot run on: device creation
    failed (the child then marks every later recipe not-run with TF's error, as on the fake
    driver), or the placement op raised on the GPU and every GPU recipe raised after it."""
    if creation:
        why = f"TensorFlow could not create its devices: {CREATION}"
        later = [RecipeResult(n, status="not-run", detail=why) for n in NAMES[1:]]
        devices = RecipeResult("devices", status="error", detail=why,
                               info={"device_creation_error": CREATION})
    else:
        error = "InternalError: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available"
        devices = RecipeResult("devices", status="error", detail=f"GPU:0 raised {error}",
                               info={"placement.CPU:0": "/job:localhost/replica:0/task:0/device:CPU:0",
                                     "placement.GPU:0.error": error})
        later = [RecipeResult(n, device=d, status="error" if d == "GPU:0" else "passed", detail=error)
                 for n in ("matmul", "conv2d", "mixed-precision", "xla") for d in ("CPU:0", "GPU:0")]
        later += [RecipeResult(n, device="GPU:0", status="error", detail=error)
                  for n in ("throughput", "tensor-cores")]
        later.append(RecipeResult("multi-device", status="skipped", detail="fewer than two devices"))
    return SmokeFacts(python="/venv/bin/python", outcome="completed", tf_version="2.21.0",
                      is_cuda_build=True, devices=(CPU, GPU),
                      recipes=(RecipeResult("import", status="passed"), devices, *later))


@pytest.mark.parametrize("creation", [True, False], ids=["device-creation", "placement"])
def test_gpu_visible_but_kernels_could_not_run(creation: bool):
    """Issue 11: TensorFlow lists the GPU but runs nothing on it. That is one error finding with
    TensorFlow's own error as evidence (never a placement failure plus one per recipe), and the
    GPU measurements are not-run; the GPU list and the log (the child ended by itself) are judged."""
    report = build_report(make_facts(kernels_failed(creation), driver=A100,
                                     tensorflow=replace(TF, is_cuda_build=True)))
    got = {o.check: o for o in report.outcomes if o.area == "smoke"}
    assert report.root_cause is not None and report.root_cause.id == "smoke-gpu-kernels-failed"
    found = report.root_cause
    assert "kernels could not run" in found.message
    assert ("CUDA driver" if creation else "NO_BINARY_FOR_GPU") in found.evidence["tensorflow_error"]
    assert ("older than the CUDA runtime" if creation else "no kernels for this GPU") in (found.hint or "")
    assert got["smoke-run"].status is CheckStatus.FAILED
    assert "smoke-placement-failed" not in {f.id for f in report.findings}
    for check in ("smoke-tensor-cores", "smoke-throughput"):
        assert got[check].status is CheckStatus.NOT_RUN and got[check].reason, check
    if creation:
        for check in ("smoke-recipes", "smoke-multi-gpu"):
            assert got[check].status is CheckStatus.NOT_RUN and CREATION in (got[check].reason or ""), check
    else:
        # The recipe errors on GPU:0 are there, but as consequences of the one root cause.
        assert got["smoke-recipes"].status is CheckStatus.FAILED
        assert [f.id for f in report.findings if f.severity.value == "error"][0] == "smoke-gpu-kernels-failed"
    # TensorFlow did list the GPUs, and its whole log was read: those two are judged.
    assert {c for c, o in got.items() if o.status is CheckStatus.PASSED} == {"smoke-gpus", "smoke-log"}
