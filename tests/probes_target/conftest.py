"""Fixtures for the target-interpreter and platform probe tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from target_fakes import FakeVenv, make_venv  # noqa: E402


@pytest.fixture
def fake_venv(tmp_path: Path) -> FakeVenv:
    """An empty venv of tfdoctor's own Python, filled by the test."""
    return make_venv(tmp_path / "venv")
