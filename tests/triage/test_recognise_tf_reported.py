"""The driver versions TensorFlow's own log prints (cuda_diagnostics.cc), from real text."""

from __future__ import annotations

from tfdoctor.triage import triage_facts
from tfdoctor.triage.recognisers import tf_reported
from triage_fixtures import observed, ticket


def test_libcuda_and_kernel_versions_of_a_container():
    """tensorflow/tensorflow#48722: the image's libcuda is 460.73, the host's module 455.32."""
    assert observed(tf_reported, "tf_reported/tf48722_container.txt") == [
        ("driver.driver_version", "460.73.1"),
        ("driver.kernel_module_version", "455.32.0"),
    ]


def test_statuses_are_not_versions():
    """Where TensorFlow could not read a version it prints a status: nothing is observed."""
    assert observed(tf_reported, "tf_reported/statuses_not_versions.txt") == []


def test_a_log_driver_version_is_judged_against_the_release():
    """The driver TensorFlow's log reports is judged like nvidia-smi's: 418.87 cannot run the
    CUDA 11.0 runtime of TensorFlow 2.4 (minor-version compatibility starts at 450.80.02)."""
    from tfdoctor.report import build_report

    lines = ["tensorflow 2.4.1",
             "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:200] "
             "libcuda reported version is: 418.87.1"]
    facts, _ = triage_facts(["\n".join(lines)])
    assert facts.driver.driver_version == "418.87.1"
    ids = [f.id for f in build_report(facts).findings]
    assert "driver-too-old" in ids, ids
    assert ticket("tf_reported/tf48722_container.txt")  # the data names its source
