"""The older TensorFlow the oracle tests also run against (tests/envs/setup.sh: tf-cuda-2-17)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import need

ENVS = Path(os.environ.get("TFDOCTOR_TEST_ENVS", Path.home() / ".cache" / "tfdoctor" / "test-envs"))


@pytest.fixture(scope="session")
def tf_cuda_217_python() -> str:
    """Python of a venv with tensorflow[and-cuda] 2.17.1: older Abseil, cuDNN 8, no driver."""
    path = os.environ.get("TFDOCTOR_TEST_TF_CUDA_217") or str(ENVS / "tf-cuda-2-17" / "bin" / "python")
    need(Path(path).exists(), f"{path} missing: run tests/envs/setup.sh (or set TFDOCTOR_TEST_TF_CUDA_217)")
    return path
