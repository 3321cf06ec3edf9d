"""Shared fixtures: the real TensorFlow venvs of this machine, and fact builders."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import need  # noqa: E402

ENVS = Path(os.environ.get("TFDOCTOR_TEST_ENVS", Path.home() / ".cache" / "tfdoctor" / "test-envs"))


def _venv_python(var: str, name: str) -> str:
    """A real TensorFlow venv made by tests/envs/setup.sh; CI must have it, so never skip there."""
    path = os.environ.get(var) or str(ENVS / name / "bin" / "python")
    need(Path(path).exists(), f"{path} missing: run tests/envs/setup.sh (or set {var})")
    return path


@pytest.fixture(scope="session")
def tf_cpu_python() -> str:
    """Python of a venv with tensorflow-cpu 2.21 installed from PyPI."""
    return _venv_python("TFDOCTOR_TEST_TF_CPU", "tf-cpu")


@pytest.fixture(scope="session")
def tf_cuda_python() -> str:
    """Python of a venv with tensorflow[and-cuda] 2.21: real CUDA 12 libraries, no driver."""
    return _venv_python("TFDOCTOR_TEST_TF_CUDA", "tf-cuda")
