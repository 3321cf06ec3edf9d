"""What a ticket shows of the TensorFlow build itself, through `tfdoctor triage`.

- The issue template's `print(tf.version.GIT_VERSION, tf.version.VERSION)` prints "unknown 2.4.1"
  for conda's and source builds (pip wheels print "v2.4.0-rc4-71-g582c8d236cb 2.4.0").
- TensorFlow's loader asks for the CUDA runtime it was built with (dso_loader.cc,
  TF_CUDART_VERSION): libcudart.so.10.1 is a CUDA 10.1 build. Where that is not the CUDA of the
  release's wheels (pip's 2.4.1 asks for libcudart.so.11.0), the build is conda's or a source
  build, and the release tables (its CUDA, cuDNN, architectures, Pythons) are not assumed.
"""

from __future__ import annotations

import pytest
from helpers import triage_json
from tfdoctor import compat

# tensorflow/tensorflow#54345 (TF 2.4.1 from `conda install -c anaconda tensorflow-gpu`), its template
TEMPLATE = (
    "- Tensorflow and gpu related binaries installed using: conda install -c anaconda tensorflow-gpu.\n"
    "- unknown 2.4.1. TensorFlow version (use command below):\n"
    "- Python 3.9.7. Python version:\n"
    "- 4 x NVIDIA GeForce RTX 3090, 24M. GPU model and memory:\n"
)
OPENED = ("2022-02-11 09:45:08.686783: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] "
          "Successfully opened dynamic library {lib}\n")


def test_unknown_git_version_is_the_release():
    facts = triage_json(TEMPLATE)["facts"]
    assert facts["tensorflow"]["version"] == "2.4.1"
    assert facts["provenance"]["tensorflow.version"] == "build info, line 2"


@pytest.mark.parametrize("lib", ["libcudart.so.10.1", "cudart64_101.dll"])
def test_a_cuda_10_1_runtime_is_not_the_wheel(lib):
    """Conda's 2.4.1 for CUDA 10.1: its Pythons (3.9 here) and architectures are not pip's."""
    report = triage_json(TEMPLATE + OPENED.format(lib=lib))
    tf, facts = report["facts"]["tensorflow"], report["facts"]
    assert tf["cuda_version"] == "10.1"
    assert lib in facts["provenance"]["tensorflow.cuda_version"]
    assert tf["compute_capabilities"] == [] and tf["cudnn_version"] is None
    assert "tensorflow.cuda_version" not in facts["assumed"]
    assert "tf-python-unsupported" not in [f["id"] for f in report["findings"]]


def test_the_wheels_runtime_keeps_the_release_tables():
    """pip's 2.4.1 asks for libcudart.so.11.0: its tested build (CUDA 11.0, Python 3.6-3.8) holds."""
    report = triage_json(TEMPLATE + OPENED.format(lib="libcudart.so.11.0"))
    tf = report["facts"]["tensorflow"]
    assert (tf["cuda_version"], tf["cudnn_version"]) == ("11.0", "8.0")
    assert "compute_80" in tf["compute_capabilities"]
    assert report["findings"][0]["id"] == "tf-python-unsupported"


@pytest.mark.parametrize(("soname", "cuda"), [
    ("libcudart.so.10.1", "10.1"), ("libcudart.so.10.0", "10.0"), ("libcudart.so.9.0", "9.0"),
    ("libcudart.so.11.0", "11"), ("libcudart.so.12", "12"), ("cudart64_100.dll", "10.0"),
    ("cudart64_110.dll", "11"), ("cudart64_12.dll", "12"), ("cudart64_92.dll", "9.2"),
    ("libcublas.so.11", None), ("libcudart.so", None),
])
def test_cuda_of_cudart(soname, cuda):
    assert compat.cuda_of_cudart(soname) == cuda


@pytest.mark.parametrize(("shown", "table", "same"), [
    ("10.1", "11.0", False), ("10.1", "10.1", True), ("11", "11.2", True), ("11.8", "12.2", False),
    ("12", "12.5.1", True), ("10.0", "10.1", False),
])
def test_same_cuda_build(shown, table, same):
    assert compat.same_cuda_build(shown, table) is same


def test_a_gpu_newer_than_the_builds_cuda_runs_ptx_at_best():
    """An RTX 3090 (8.6) under a CUDA 10.1 build: no CUDA before 11.0 builds code an 8.x GPU runs, so
    the build holds PTX for older GPUs at best (the reporter's TensorFlow 'halted' at its first kernel)."""
    report = triage_json(TEMPLATE + OPENED.format(lib="libcudart.so.10.1"))
    top = report["findings"][0]
    assert top["id"] == "gpu-ptx-jit-only"
    assert "CUDA 10.1" in top["message"] and "no CUDA before 11.0" in top["message"]
    assert top["evidence"]["tensorflow.cuda_version"] == "10.1"


def test_a_gpu_the_builds_cuda_covers_is_not_judged_by_it():
    """An RTX 2080 (7.5) under the same build: CUDA 10.0 already built for 7.5, nothing to say."""
    ticket = (TEMPLATE + OPENED.format(lib="libcudart.so.10.1")).replace("RTX 3090", "RTX 2080")
    ids = [f["id"] for f in triage_json(ticket)["findings"]]
    assert not {"gpu-ptx-jit-only", "gpu-named-newer-than-tf"} & set(ids)


@pytest.mark.parametrize(("cuda", "cc", "first"), [
    ("10.1", "8.6", "11.0"), ("11.0", "8.6", None), ("11.0", "8.0", None), ("11", "8.6", None),
    ("10", "8.0", "11.0"), ("11.7", "8.9", None), ("11.7", "9.0", "11.8"), ("12.4", "12.0", "12.8"),
    ("12", "12.0", None), ("12.8", "12.0", None), ("10.1", "6.1", None), ("9.0", "7.5", None),
])
def test_cuda_predates(cuda, cc, first):
    """A GPU runs code built for its major up to its own minor (sm_80 on an 8.9 GPU), so a build
    predates it only before the first CUDA of its major; a bare major ("11", "12") is not known to
    predate a GPU its later minors build for."""
    assert compat.cuda_predates(cuda, cc) == first


def test_a_gpu_of_an_older_capability_of_its_major_runs_the_builds_code():
    """conda-forge's TF 2.15 for CUDA 11.8 (not the wheel's 12.2) on an RTX 4090 (8.9): CUDA 11.8
    builds sm_80 and sm_86, which an 8.9 GPU runs, so nothing is said of its kernels."""
    report = triage_json("- TensorFlow version: 2.15.0\n- GPU: NVIDIA GeForce RTX 4090\n"
                         "{'cuda_version': '11.8', 'cudnn_version': '8', 'is_cuda_build': True}\n")
    assert report["facts"]["tensorflow"]["cuda_version"] == "11.8"
    assert report["facts"]["tensorflow"]["compute_capabilities"] == []
    ids = [f["id"] for f in report["findings"]]
    assert not {"gpu-ptx-jit-only", "gpu-named-newer-than-tf"} & set(ids)
