"""The fake TensorFlow wheel the scenarios install reads, to tfdoctor, like the real one."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
from fakegpu.e2e import clone_venv, install_tensorflow
from fakegpu.layout import Layout
from tfdoctor.host import Host
from tfdoctor.probes.target import probe_target

from .conftest import PROFILES


def tf_facts(python: str) -> dict[str, object]:
    """TensorFlowFacts of a venv as the real target probe reads them, paths made relative to
    the venv's lib/pythonX.Y so two venvs compare."""
    issues: list[object] = []
    host = Host(env={"PATH": "/usr/bin:/bin"}, python=python, own_python=sys.executable)
    py_facts, tf = probe_target(host, issues)
    assert issues == [] and tf is not None
    base = os.path.dirname(py_facts.site_packages[0])
    facts = asdict(tf)
    facts["runpath"] = tuple(os.path.relpath(p, base) for p in tf.runpath)
    facts["distributions"] = [(d["name"], d["version"]) for d in facts["distributions"]]
    facts.pop("package_dir")
    return facts


@pytest.mark.parametrize(
    ("profile", "real_venv"), [("2.21.0", "tf_cuda_python"), ("cpu-2.21.0", "tf_cpu_python")]
)
def test_fake_wheel_matches_the_real_one(
    profile: str,
    real_venv: str,
    template_venv: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    """Every TensorFlowFacts field the probe reads from the real 2.21.0 wheel (build info,
    bundled headers, Requires-Dist, the framework's RUNPATH) comes out the same from the profile
    in tests/scenarios/tf, so the scenarios judge a faithful tensorflow / tensorflow-cpu."""
    real_python = request.getfixturevalue(real_venv)
    python = clone_venv(template_venv, tmp_path / "root" / "venv")
    install_tensorflow(Layout(tmp_path / "root"), PROFILES / profile)
    assert tf_facts(str(python)) == tf_facts(real_python)
