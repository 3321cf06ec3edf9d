"""Fixtures of the smoke tests: one real run per TensorFlow venv, shared by the whole session."""

from __future__ import annotations

from pathlib import Path

import pytest
from tfdoctor.facts import Facts, PythonFacts, SmokeFacts
from tfdoctor.host import Host
from tfdoctor.smoke import run_smoke

FAKES = Path(__file__).parent / "fakes"
RECORDED = Path(__file__).parent / "recorded"


@pytest.fixture(scope="session")
def cpu_smoke(tf_cpu_python: str) -> SmokeFacts:
    """Every recipe, once, in the real tensorflow-cpu venv (TF import ~4-8 s here)."""
    return run_smoke(Host(python=tf_cpu_python), budget=120.0, per_recipe=60.0)


@pytest.fixture(scope="session")
def cuda_smoke(tf_cuda_python: str) -> SmokeFacts:
    """tensorflow[and-cuda] on this machine, which has no NVIDIA driver: the GPU build's view."""
    return run_smoke(Host(python=tf_cuda_python), only=("matmul",), budget=120.0, per_recipe=60.0)


def make_facts(smoke: SmokeFacts | None, **overrides: object) -> Facts:
    """A minimal Facts around smoke results (static sections left at their defaults)."""
    return Facts(
        schema_version="1",
        tool_version="test",
        collected_at="2026-01-01T00:00:00+00:00",
        python=PythonFacts(executable=smoke.python if smoke else "python"),
        smoke=smoke,
        **overrides,
    )  # type: ignore[arg-type]
