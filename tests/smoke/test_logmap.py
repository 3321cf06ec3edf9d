"""Recorded TensorFlow output of real GPU failures (messages from research/compat.md) mapped to
causes, and benign noise kept out of the findings."""

from __future__ import annotations

import pytest
import tfdoctor.checks.smoke  # noqa: F401  (registers the smoke checks)
from conftest import RECORDED, make_facts
from tfdoctor.facts import RecipeResult, SmokeDevice, SmokeFacts
from tfdoctor.registry import _REGISTRY, CheckConfig, run_check
from tfdoctor.smoke import logmap


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "cudnn_mismatch.log",
            [
                ("cudnn-version-mismatch", "9.1.0 but source was compiled with: 9.3.0"),
                ("cudnn-failed", None),
            ],
        ),
        (
            "dlopen_cusolver.log",
            [("library-not-loaded", "libcusolver.so.11"), ("gpu-libraries-missing", None)],
        ),
        ("xla_libdevice.log", [("libdevice-missing", None)]),
        (
            "xla_ptxas.log",
            [
                ("ptxas-missing", None),
                ("ptxas-too-old", "10.1.243"),
                ("ptxas-failed", None),
                ("driver-older-than-ptxas", None),
            ],
        ),
        (
            "blackwell_ptx.log",
            [
                ("cc-not-in-build", "12.0"),
                ("ptx-invalid", "CUDA_ERROR_INVALID_PTX"),
                ("cuda-error", "CUDA_ERROR_INVALID_HANDLE"),
            ],
        ),
        (
            "handles_oom.log",
            [
                ("cublas-failed", "CUBLAS_STATUS_NOT_INITIALIZED"),
                ("cudnn-handle-failed", "CUDNN_STATUS_INTERNAL_ERROR"),
                ("gpu-out-of-memory", "CUDA_ERROR_OUT_OF_MEMORY"),
            ],
        ),
        ("driver_old.log", [("driver-too-old", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH")]),
        ("avx_missing.log", [("cpu-instructions-missing", "AVX")]),
        (
            "no_driver_tf221.log",
            [
                ("driver-library-missing", "libcuda.so.1"),
                ("cuda-init-failed", "Failed call to cuInit: UNKNOWN ERROR (303)"),
                ("driver-not-running", None),
            ],
        ),
    ],
)
def test_recorded_failures_map_to_causes(name: str, expected: list[tuple[str, str | None]]) -> None:
    """Each recorded failure log yields exactly its causes, in order, once each."""
    lines = (RECORDED / name).read_text().splitlines()
    assert [(c.id, c.subject) for c in logmap.scan(lines)] == expected


def test_benign_noise_is_never_a_cause() -> None:
    """The "Unable to register cuDNN factory" family and CPU-feature notes are healthy output."""
    noise = [
        ln
        for ln in (RECORDED / "cudnn_mismatch.log").read_text().splitlines()
        if "Unable to register" in ln or "oneDNN" in ln
    ]
    assert len(noise) == 4
    assert all(logmap.is_noise(ln) and logmap.recognise(ln) is None for ln in noise)
    assert logmap.without_noise(noise) == []


def test_frame_is_pip_style() -> None:
    """Evidence text: a count, the lines indented, and an end marker (pip's framing)."""
    assert (
        logmap.frame(("a", "b"), 10)
        == "[10 lines of output (last 2 shown)]\n  a\n  b\n[end of output]"
    )


def test_log_causes_become_findings_with_hints() -> None:
    """With a GPU visible, a cuDNN mismatch in the conv2d recipe is a finding of its own and
    the conv2d failure carries its hint; the 'no GPU' causes are not findings then."""
    lines = tuple((RECORDED / "cudnn_mismatch.log").read_text().splitlines())
    causes = logmap.scan(lines, recipe="conv2d")
    smoke = SmokeFacts(
        python="python",
        outcome="completed",
        devices=(SmokeDevice("CPU:0", "CPU"), SmokeDevice("GPU:0", "GPU", "Tesla T4", "7.5")),
        recipes=(
            RecipeResult(
                "conv2d",
                "GPU:0",
                "error",
                detail="UnimplementedError: DNN library is not found.",
                log_tail=lines[-2:],
                log_lines=5,
                causes=causes,
            ),
        ),
        causes=causes,
    )
    facts = make_facts(smoke)
    log = run_check(_REGISTRY["smoke-log"], facts, CheckConfig()).findings
    assert [f.id for f in log] == ["tf-log-cudnn-version-mismatch", "tf-log-cudnn-failed"]
    assert log[0].evidence["subject"] == "9.1.0 but source was compiled with: 9.3.0"
    recipes = run_check(_REGISTRY["smoke-recipes"], facts, CheckConfig()).findings
    assert [f.id for f in recipes] == ["smoke-conv2d-failed"]
    assert "tensorflow[and-cuda]" in (recipes[0].hint or "")
    assert recipes[0].evidence["log"].startswith("[5 lines of output (last 2 shown)]")
