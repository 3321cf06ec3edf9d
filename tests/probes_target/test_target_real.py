"""probe_target against the real TensorFlow venvs of this machine (tests/envs/setup.sh)."""

from __future__ import annotations

import json
import os

import pytest
from tfdoctor.facts import Distribution, Facts
from tfdoctor.host import Host
from tfdoctor.probes.target import probe_target

pytestmark = pytest.mark.slow


def test_tf_cpu_venv(tf_cpu_python):
    """tensorflow-cpu 2.21.0: a CPU build, one distribution, no sonames to load, pins read."""
    issues = []
    python, tf = probe_target(Host(python=tf_cpu_python), issues)
    assert issues == []
    assert python.error is None
    assert python.version and python.version.startswith("3.")
    assert python.is_venv is True and python.is_conda is False
    assert python.packages["tensorflow-cpu"] == "2.21.0"
    assert {"numpy", "protobuf", "keras", "ml-dtypes", "h5py"} <= set(python.packages)
    assert not any(name.startswith("nvidia-") for name in python.packages)
    assert tf is not None
    assert [d.name for d in tf.distributions] == ["tensorflow-cpu"]
    assert tf.version == "2.21.0"
    assert tf.is_cuda_build is False
    assert tf.cuda_version is None and tf.cudnn_version is None
    assert tf.sonames == {} and tf.compute_capabilities == ()
    assert tf.package_dir and tf.package_dir.endswith(os.sep + "tensorflow")
    assert tf.requirements["protobuf"] == "<8.0.0,>=6.31.1"


def test_tf_cuda_venv(tf_cuda_python):
    """tensorflow[and-cuda] 2.21.0: CUDA 12.5.1 / cuDNN 9.3.0, sonames, pins and the RUNPATH gap."""
    issues = []
    python, tf = probe_target(Host(python=tf_cuda_python), issues)
    assert issues == []
    assert tf is not None
    assert tf.distributions == (
        Distribution("tensorflow", "2.21.0", os.path.dirname(tf.package_dir)),
    )
    assert tf.is_cuda_build is True
    assert tf.cuda_version == "12.5.1"
    assert (
        tf.cudnn_version == "9.3.0"
    )  # the bundled cudnn_version.h, more precise than build_info's "9"
    assert tf.nccl_version == "2.27.7"
    assert tf.compute_capabilities == ("sm_60", "sm_70", "sm_80", "sm_89", "compute_90")
    assert tf.sonames["cudnn"] == "libcudnn.so.9"
    assert tf.sonames["cusolver"] == "libcusolver.so.11"
    assert tf.sonames["cudart"] == "libcudart.so.12"
    assert tf.sonames["cublasLt"] == "libcublasLt.so.12"
    assert tf.and_cuda_pins["nvidia-cudnn-cu12"] == "<10.0,>=9.3.0.75"
    site = os.path.dirname(tf.package_dir)
    # research/compat.md 8c: 2.21's framework RUNPATH lacks nvidia/cusolver/lib.
    assert os.path.join(site, "nvidia", "cublas", "lib") in tf.runpath
    assert os.path.join(site, "nvidia", "cusolver", "lib") not in tf.runpath
    assert len(tf.runpath) == len(set(tf.runpath))
    assert python.packages["nvidia-cudnn-cu12"].startswith("9.")
    assert "nvidia-cusolver-cu12" in python.packages


def test_real_facts_survive_the_replay_format(tf_cuda_python):
    """What the probe collects round-trips through Facts.to_dict / JSON / from_dict unchanged."""
    python, tf = probe_target(Host(python=tf_cuda_python), [])
    facts = Facts("1", "test", "2026-01-01T00:00:00+00:00", python=python, tensorflow=tf)
    assert Facts.from_dict(json.loads(json.dumps(facts.to_dict()))) == facts
