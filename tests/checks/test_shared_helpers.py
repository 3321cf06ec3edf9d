"""The shared parsers and names the checks build on: driver versions and NVIDIA wheel names."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import healthy, judge
from tfdoctor.checks.common import nvidia_wheel
from tfdoctor.compat import driver_cuda_ok, driver_key


@pytest.mark.parametrize(("text", "key"), [
    ("580.65.06", (580, 65, 6)),
    ("580.65.06-1", (580, 65, 6)),  # a distribution's package revision is not part of it
    ("535.104.05-0ubuntu1", (535, 104, 5)),
    ("", None), (None, None), ("unknown", None),
])
def test_driver_key(text, key):
    """Driver versions compare per number (580.65.06 > 580.9); the checks and the compat tables
    once disagreed on "580.65.06-1", so one parser answers for both."""
    assert driver_key(text) == key
    assert driver_key("580.65.06") > driver_key("580.9")


def test_driver_with_package_suffix_runs_its_cuda():
    """A driver reported with a package suffix is judged like the bare version."""
    assert driver_cuda_ok("580.65.06-1", "12.5") is driver_cuda_ok("580.65.06", "12.5") is True
    assert driver_cuda_ok("garbage", "12.5") is None


@pytest.mark.parametrize(("cuda", "wheel"), [
    ("12.5.1", "nvidia-cudnn-cu12"), ("11.8", "nvidia-cudnn-cu11"), ("13.0", "nvidia-cudnn-cu13"),
    (None, "nvidia-cudnn-cu12"), ("10.1", "nvidia-cudnn-cu12"),
])
def test_nvidia_wheel_follows_tensorflow_cuda_major(cuda, wheel):
    """Remediations name the wheel of TF's own CUDA major; unknown stays the -cu12 of today's TF."""
    facts = replace(healthy(), tensorflow=replace(healthy().tensorflow, cuda_version=cuda))
    assert nvidia_wheel("nvidia-cudnn", facts) == wheel


def test_xla_remediation_names_the_cuda13_nvcc_wheel():
    """The ptxas remediation of a CUDA 13 TensorFlow installs the -cu13 nvcc wheel, not -cu12."""
    base = healthy()
    facts = replace(base, tensorflow=replace(base.tensorflow, cuda_version="13.0"),
                    xla=replace(base.xla, ptxas=None))
    finding = next(f for f in judge(facts).findings if f.id == "xla-ptxas-missing")
    assert finding.remediation is not None
    assert "nvidia-cuda-nvcc-cu13" in finding.remediation.commands[0]


def test_smoke_log_hint_names_the_nvcc_wheel():
    """A log cause's hint names the nvcc wheel of TF's CUDA, never the placeholder."""
    from tfdoctor.facts import LogCause, RecipeResult, SmokeDevice, SmokeFacts

    smoke = SmokeFacts(python="/venv/bin/python", outcome="completed",
                       devices=(SmokeDevice("GPU:0", "GPU"),),
                       recipes=(RecipeResult("devices", status="passed"),),
                       causes=(LogCause("ptxas-missing", "Couldn't find ptxas"),))
    finding = next(f for f in judge(replace(healthy(), smoke=smoke)).findings
                   if f.id == "tf-log-ptxas-missing")
    assert finding.hint is not None and "pip install nvidia-cuda-nvcc-cu12 " in finding.hint
