"""Real TensorFlow 2.21 log output, captured on the fake machines (capture_tf_logs.py), mapped
to causes by the smoke log map: the real-line counterpart of tests/smoke/test_logmap.py, whose
logs are reconstructed from research/compat.md where no machine here can produce them."""

from __future__ import annotations

from pathlib import Path

import pytest
from tfdoctor.smoke import logmap

LOGS = Path(__file__).resolve().parents[1] / "recorded" / "tf-logs" / "tf-2.21.0"

# "driver-not-running" in the cuInit cases is an artefact of the fake machine: TensorFlow's
# cuda_diagnostics reads the real /proc/driver/nvidia/version, which no fake root replaces.
EXPECTED = {
    "healthy-1": [],
    "healthy-8": [],
    "visible-subset": [],
    "visible-uuid": [],
    "driver-cuda-older": [],
    "cusolver-not-reachable": [("library-not-loaded", "libcusolver.so.11"),
                               ("gpu-libraries-missing", None)],
    "cc-below-minimum": [("gpu-below-minimum-cc", "3.0")],
    "cc-newer-than-wheel": [("cc-not-in-build", "12.0")],
    "gpu-lost": [("cuda-init-failed", "Failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error"),
                 ("driver-not-running", None)],
    "visible-none": [("cuda-init-failed", "Failed call to cuInit: CUDA_ERROR_NO_DEVICE: no "
                      "CUDA-capable device is detected"), ("driver-not-running", None)],
    "mig-instances": [],
    "mig-selected": [],
    "mig-unknown-uuid": [("cuda-init-failed", "Failed call to cuInit: CUDA_ERROR_NO_DEVICE: no "
                          "CUDA-capable device is detected"), ("driver-not-running", None)],
    "visible-garbage": [("cuda-init-failed", "Failed call to cuInit: CUDA_ERROR_NO_DEVICE: no "
                         "CUDA-capable device is detected"), ("driver-not-running", None)],
}


def test_every_captured_log_has_an_expectation():
    """A newly captured log is judged, never silently accepted."""
    assert sorted(p.stem for p in LOGS.glob("*.log")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_log_maps_to_causes(name):
    """Each real line TensorFlow printed about the setup becomes the cause it means, once."""
    lines = (LOGS / f"{name}.log").read_text().splitlines()
    assert [(c.id, c.subject) for c in logmap.scan(lines)] == EXPECTED[name]
