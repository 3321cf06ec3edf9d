"""cuDNN against each GPU model is one element of the compatibility evaluator (stack.cudnn_on_gpus):
the loaded cuDNN's support-matrix span (compat_tables/cudnn.toml) against the GPU's compute
capability, on a live run and in a ticket (TensorFlow's log names both)."""

from __future__ import annotations

from dataclasses import replace

from helpers import change, gpu, healthy, judge
from tfdoctor.report import build_report
from tfdoctor.triage import triage_facts

H = healthy()  # H100s, the pinned cuDNN 9


def _lib(name, **kw):
    return tuple(replace(lib, **kw) if lib.name == name else lib for lib in H.libraries)


def _rows(report):
    return [f for f in report.compatibility if f.element.startswith("cuDNN on ")]


def test_one_row_per_gpu_model():
    facts = change(H, driver={"gpus": (gpu(0), gpu(1), gpu(2, "Tesla V100-SXM2-32GB", "7.0"))})
    rows = _rows(judge(facts))
    assert [(r.element, r.compute_capability, r.fits) for r in rows] == [
        ("cuDNN on GPUs 0-1", "9.0", True), ("cuDNN on GPU 2", "7.0", True)]


def test_a_cudnn_that_dropped_the_gpu_is_the_row_and_the_finding():
    """cuDNN 9.17 supports compute capability 7.5 and newer: a V100 (7.0) is not."""
    report = judge(change(H, libraries=_lib("cudnn", version="9.17.0"),
                          driver={"gpus": (gpu(0, "Tesla V100-SXM2-32GB", "7.0"),)}))
    [row] = _rows(report)
    assert row.fits is False and row.have.startswith("9.17.0 (supports 7.5 to 12.0")
    assert [f.id for f in report.findings if f.id == "cudnn-gpu-unsupported"] == ["cudnn-gpu-unsupported"]


def test_a_ticket_judges_the_cudnn_tensorflow_loaded_on_the_gpu_it_registered():
    """TensorFlow's log: the device it created (compute capability 6.0) and the cuDNN it loaded
    (9.17.0, encoded 91700): the row says they do not fit, from the log's own lines."""
    log = ("I0000 00:00:1748865423.910540 1533429 cuda_dnn.cc:529] Loaded cuDNN version 91700\n"
           "I0000 00:00:1748865423.800000 1533429 gpu_device.cc:2019] Created device "
           "/job:localhost/replica:0/task:0/device:GPU:0 with 15000 MB memory:  -> device: 0, "
           "name: Tesla P100-PCIE-16GB, pci bus id: 0000:01:00.0, compute capability: 6.0\n")
    facts, _ = triage_facts(["tensorflow 2.20.0\n" + log])
    rows = _rows(build_report(facts))
    assert [(r.compute_capability, r.fits) for r in rows] == [("6.0", False)], rows
    assert "cuda_dnn" in rows[0].have_from
