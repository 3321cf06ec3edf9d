"""The ptxas XLA runs is one element of the compatibility evaluator (stack.ptxas): against the
build's CUDA major and the driver's CUDA version, as XLA's nvptx_compiler.cc compares them."""

from __future__ import annotations

from helpers import change, healthy, judge

H = healthy()  # TensorFlow 2.21 (CUDA 12.5), ptxas 12.5.82 from the nvidia-cuda-nvcc wheel, driver CUDA 13.0


def _ptxas_row(report):
    [row] = [f for f in report.compatibility if f.element == "ptxas"]
    return row


def test_the_pinned_ptxas_under_a_newer_driver_fits():
    report = judge(H)
    row = _ptxas_row(report)
    assert (row.have, row.fits) == ("12.5.82", True)
    assert row.need == "ptxas of CUDA 12.x, no newer than the driver's CUDA 13.0"
    assert not {"tf-log-driver-older-than-ptxas", "xla-ptxas-other-cuda"} & {f.id for f in report.findings}


def test_a_driver_older_than_ptxas_is_the_xla_warning_once():
    report = judge(change(H, driver={"cuda_driver_version": "12.4"}))
    assert _ptxas_row(report).fits is False
    [f] = [f for f in report.findings if f.id == "tf-log-driver-older-than-ptxas"]
    assert "12.4" in f.message and "12.5.82" in f.message and "parallel compilation" in f.message


def test_a_ptxas_of_another_major_is_that_finding_alone():
    """CUDA 13's ptxas first on PATH for a CUDA 12 build, under a driver for 12.4: the other major
    is the cause to fix; the driver being older than it is not reported a second time."""
    report = judge(change(H, driver={"cuda_driver_version": "12.4"},
                          xla={"ptxas": "/usr/local/cuda-13.0/bin/ptxas", "ptxas_version": "13.0.88"}))
    ids = [f.id for f in report.findings]
    assert "xla-ptxas-other-cuda" in ids and "tf-log-driver-older-than-ptxas" not in ids, ids
    assert _ptxas_row(report).fits is False


def test_no_driver_cuda_version_judges_the_major_only():
    row = _ptxas_row(judge(change(H, driver={"cuda_driver_version": None})))
    assert (row.need, row.fits) == ("ptxas of CUDA 12.x", True)
