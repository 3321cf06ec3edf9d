"""tf-install-cuda-libs: a ticket's own `pip install tensorflow` of a Linux release from 2.14 brings
none of the CUDA libraries TensorFlow loads (they come with tensorflow[and-cuda])."""

from __future__ import annotations

import pytest
from tfdoctor.report import build_report
from tfdoctor.triage import triage_facts

# googlecolab/colabtools#5099 (tests/field/cases/colab-5099.txt): a notebook cell's install and
# TensorFlow's own answer on an A100 runtime
COLAB = """I'm changing my runtime to A100 GPU.

!pip uninstall tensorflow keras
!pip install tensorflow==2.15.0 keras==2.15.0

When using this version, GPU is not available (A100).

TensorFlow Version: 2.15.0
Num GPUs Available: 0
GPU Devices: []
"""


def _findings(text: str) -> dict:
    facts, _ = triage_facts([text])
    return {f.id: f for f in build_report(facts).findings}


def test_a_notebook_install_without_the_extra_that_lists_no_gpu():
    f = _findings(COLAB)["tf-installed-without-cuda"]
    assert f.severity.value == "error"
    assert "pip install tensorflow==2.15.0" in f.message and "lists no GPU" in f.message
    assert f.remediation.commands[0].endswith("'tensorflow[and-cuda]==2.15.0.post1'")
    assert f.evidence["pip install"] == "tensorflow==2.15.0, keras==2.15.0"  # the whole cell's command


def test_without_tensorflows_answer_it_is_a_warning():
    f = _findings("pip install tensorflow==2.16.1\n")["tf-installed-without-cuda"]
    assert f.severity.value == "warning"


@pytest.mark.parametrize("text", [
    "pip install 'tensorflow[and-cuda]==2.15.0'\nNum GPUs Available: 0\n",  # the extra: not this cause
    "pip install tensorflow==2.13.0\nNum GPUs Available: 0\n",  # before 2.14 no extra exists
    "Windows 10\npip install tensorflow==2.15.0\n",  # no GPU build on native Windows at all
    "pip install tensorflow==2.15.0 nvidia-cudnn-cu12 nvidia-cuda-runtime-cu12\n",  # the wheels by hand
    "The pip install of the DLIO tool gave tensorflow 2.20.0 and tensorflow-io 0.37.1\n",  # a sentence
])
def test_not_this_cause(text):
    assert "tf-installed-without-cuda" not in _findings(text)


# tensorflow/tensorflow#54446 (tests/field/cases/tensorflow-54446.txt): a Jetson whose ticket shows
# only the install, not the TensorFlow it brought
JETSON = """- OS Platform and Distribution (e.g., Linux Ubuntu 16.04): Jetson - Jp 4.6
- TensorFlow version: 2.x.x
Cannot install Tensorflow on Jetson boards with ease of pip.
pip install tensorflow
"""


def test_an_install_on_arm_brings_pypis_build_without_cuda():
    """tf-aarch64-build judges the install command where the TensorFlow itself is not shown."""
    f = _findings(JETSON)["tf-aarch64-pypi-no-cuda"]
    assert "`pip install tensorflow` brings from PyPI is built without CUDA" in f.message
    assert f.evidence["pip install"] == "tensorflow" and f.evidence["tensorflow.version"] == "unknown"


def test_on_arm_without_an_install_or_a_tensorflow_nothing_is_judged():
    facts, _ = triage_facts([JETSON.replace("pip install tensorflow\n", "")])
    report = build_report(facts)
    assert "tf-aarch64-pypi-no-cuda" not in {f.id for f in report.findings}
    [outcome] = [o for o in report.outcomes if o.check == "tf-aarch64-build"]
    assert outcome.status.value == "could-not-check" and outcome.missing == ("tensorflow",)
