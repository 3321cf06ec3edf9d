"""A start of GPU work that takes minutes (issue 20, item 3): the user's timing is a fact
(`intent.start_seconds`, read by triage's prose recogniser), a live run's is the smoke run's device
creation; gpu-slow-start judges either against the build's architectures. It names the PTX JIT
only where the build's own architectures do not rule it out."""

from __future__ import annotations

import json
from dataclasses import replace

from click.testing import CliRunner
from tfdoctor import stack
from tfdoctor.checks.gpu import gpu_slow_start
from tfdoctor.cli import cli
from tfdoctor.facts import (
    DriverFacts,
    Facts,
    GpuFacts,
    IntentFacts,
    PythonFacts,
    RecipeResult,
    SmokeFacts,
    TensorFlowFacts,
)
from tfdoctor.registry import CheckConfig, NotApplicable
from tfdoctor.triage.recognisers import prose

# github.com/emgucv/emgutf/issues/71, the reporter's words (tests/field/cases/emgutf-71.txt)
EMGU = """\
With:

- latest 2.6 EmguTF
- Ampere RTX A4000 card
- Windows 10

when we try to perform inference, we see a first-time delay of 90-120 seconds when we create the session. \
This happens EVERY time we start our application.
"""
TF26 = ("sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "compute_80")  # v2.6.0/.bazelrc


def _start(text: str) -> float | None:
    found = [o.value for o in prose.recognise(text.splitlines()) if o.path == "intent.start_seconds"]
    return found[0] if found else None


def test_the_users_timing_is_read_as_seconds() -> None:
    assert _start(EMGU) == 90.0  # "90-120 seconds": the least figure
    assert _start("Training takes 20 minutes to start on the new RTX 3090") == 1200.0
    assert _start("It takes about 2 minutes to initialize the GPU every run") == 120.0
    assert _start("there is a startup delay of 1 hour") == 3600.0


def test_other_durations_are_no_start_delay() -> None:
    assert _start("each epoch takes 20 minutes on the CPU") is None
    assert _start("It takes 5 minutes to load the dataset") is None
    assert _start("training for 90 seconds gives a loss of 0.3") is None


def _facts(**fields: object) -> Facts:
    return Facts(schema_version="2", tool_version="test", collected_at="2026-01-01T00:00:00+00:00",
                 python=PythonFacts(executable="python"), **fields)  # type: ignore[arg-type]


def _run(facts: Facts) -> list:
    try:
        return list(gpu_slow_start(facts, CheckConfig()))
    except NotApplicable:
        return []


def _ticket(seconds: float, caps: tuple[str, ...] = TF26, assumed: bool = True,
            gpu: str = "RTX A4000") -> Facts:
    return _facts(tensorflow=TensorFlowFacts(version="2.6", compute_capabilities=caps),
                  intent=IntentFacts(gpu=gpu, start_seconds=seconds),
                  assumed=("tensorflow.compute_capabilities",) if assumed else (), unknown=("driver.gpus",),
                  provenance={"intent.start_seconds": "ticket prose, line 7"})


def test_a_stated_delay_with_the_tables_architectures_names_the_jit_and_asks_for_the_builds() -> None:
    """The release table gives 2.6's pip wheel sm_80 binaries, which run on an 8.6 GPU; the
    build in hand (EmguTF's) may not be that wheel, so the JIT is named and its own list asked for."""
    [f] = _run(_ticket(90.0))
    assert f.id == "gpu-ptx-jit-only" and f.severity.value == "warning"
    assert f.message.startswith("Each start of GPU work takes 90 seconds")
    assert "this build's own architectures are not known" in f.message
    assert f.evidence["start.seconds"] == "90 (ticket prose, line 7)"
    assert "compute capability 8.6" in f.evidence["gpu"]
    assert "cuda_compute_capabilities" in (f.hint or "")


def test_the_builds_own_architectures_with_binaries_rule_the_jit_out() -> None:
    assert _run(_ticket(90.0, assumed=False)) == []


def test_a_short_start_is_no_finding() -> None:
    assert _run(_ticket(stack.SLOW_START_S - 1)) == []
    assert _run(_ticket(stack.SLOW_START_S + 1)) != []


def test_a_gpu_with_only_ptx_is_left_to_the_compute_capability_checks() -> None:
    """2.6 on an H100 (9.0): only compute_80's PTX, JIT-compiled; gpu-named-in-ticket reports
    that, and this check does not report it twice."""
    assert _run(_ticket(600.0, gpu="H100")) == []


def test_a_live_runs_slow_device_creation_is_judged_the_same_way() -> None:
    """A live run whose build info gives no architectures: the smoke run's device creation took
    95 s, the longer of it and the first GPU recipe."""
    smoke = SmokeFacts(python="python", outcome="completed", tf_version="2.15.0", is_cuda_build=True,
                       recipes=(RecipeResult(name="devices", status="passed", seconds=95.0),
                                RecipeResult(name="matmul", device="GPU:0", status="passed", seconds=3.0)))
    facts = _facts(tensorflow=TensorFlowFacts(version="2.15.0", is_cuda_build=True), smoke=smoke,
                   driver=DriverFacts(gpus=(GpuFacts(index=0, name="NVIDIA A100",
                                                     compute_capability="8.0"),)))
    [f] = _run(facts)
    assert f.evidence["start.seconds"] == "95 (the smoke run's devices recipe)"
    assert "architectures and the GPU's are not known" in f.message
    fast = replace(smoke, recipes=tuple(replace(r, seconds=2.0) for r in smoke.recipes))
    assert _run(replace(facts, smoke=fast)) == []
    # the build's own list (build info) decides, and a machine with no GPU has no JIT to blame
    own = replace(facts, tensorflow=TensorFlowFacts(version="2.15.0", is_cuda_build=True,
                                                    compute_capabilities=("sm_60", "sm_70", "compute_80")))
    assert _run(own) == []
    assert _run(replace(facts, driver=DriverFacts(gpus=()))) == []


def test_through_triage() -> None:
    report = json.loads(CliRunner().invoke(cli, ["triage", "--json", "-"], input=EMGU).stdout)
    assert report["facts"]["intent"]["start_seconds"] == 90.0
    assert [f["id"] for f in report["findings"]][:1] == ["gpu-ptx-jit-only"]
    assert report["findings"][0]["check"] == "gpu-slow-start"
    assert not [f for f in report["findings"] if f["id"] == "check-crashed"]
