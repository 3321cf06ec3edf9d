"""The full run (smoke child and TensorFlow's own loader) with real TensorFlow 2.21 on a fake GPU
machine: TensorFlow sees the stub GPU, its device creation then fails in cudart (the stub has no
private driver interface), and that must reach the report as a finding, never a tfdoctor crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[1] / "fakegpu" / "run.py"


@pytest.fixture(scope="module")
def full_report(tf_cuda_python):
    site = next((Path(tf_cuda_python).parent.parent / "lib").glob("python3*/site-packages"))
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["LD_LIBRARY_PATH"] = f"{site}/nvidia/cusolver/lib:{site}/nvidia/curand/lib"
    proc = subprocess.run([sys.executable, str(RUN), "--gpus", "1", "--", sys.executable, "-m",
                           "tfdoctor", "--json", "--budget", "60", "--python", tf_cuda_python],
                          capture_output=True, text=True, env=env, timeout=240)
    return proc.returncode, json.loads(proc.stdout)


def test_full_run_survives_and_asks_tensorflow(full_report):
    """No internal error; TensorFlow's loader opened the stub libcuda and every library."""
    code, report = full_report
    assert code in (0, 1, 3)
    loader = report["facts"]["tf_loader"]
    answers = {a["name"]: a for a in loader["answers"]}
    assert loader["loader"] == "tsl::internal::DsoLoader"
    assert answers["cuda"]["path"].endswith("/libcuda.so.1")
    assert all(answers[n]["path"] for n in ("cudart", "cublas", "cusolver", "cudnn"))
    assert not any(lib["model_disagrees"] for lib in report["facts"]["libraries"])


def test_gpu_visible_kernels_could_not_run(full_report):
    """Issue 11: TensorFlow lists the GPU, cannot run on it, and the report says exactly that,
    with TensorFlow's own error as the evidence; nothing that needed a kernel says "passed"."""
    _, report = full_report
    smoke = report["facts"]["smoke"]
    assert smoke["outcome"] == "completed" and smoke["survivors"] == []
    assert [d["model"] for d in smoke["devices"] if d["device_type"] == "GPU"] == ["NVIDIA H100 80GB HBM3"]
    found = next(f for f in report["findings"] if f["id"] == "smoke-gpu-kernels-failed")
    assert "kernels could not run" in found["message"]
    # cudart's own words (error 36) when device creation meets a driver without its private API.
    assert "cudaGetDevice() failed" in found["evidence"]["tensorflow_error"]
    assert "Collect for a report" in found["hint"]
    assert report["verdict"]["root_cause"] == "smoke-gpu-kernels-failed"
    rows = {o["check"]: o for o in report["outcomes"] if o["area"] == "smoke"}
    for check in ("smoke-recipes", "smoke-tensor-cores", "smoke-throughput", "smoke-multi-gpu"):
        assert rows[check]["status"] == "not-run", rows[check]
        assert "cudaGetDevice() failed" in rows[check]["reason"]
    assert rows["smoke-run"]["status"] == "failed" and rows["smoke-gpus"]["status"] == "passed"
    assert "smoke-exited" not in [f["id"] for f in report["findings"]]


def test_older_tensorflow_gives_the_same_finding(tf_cuda_217_python):
    """TF 2.17 (older Abseil, cuDNN 8) fails device creation the same way on 2 fake A100s: the
    root cause is the kernels finding, never explained away by its optional-library warnings."""
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH")}
    proc = subprocess.run([sys.executable, str(RUN), "--gpus", "2", "--model", "NVIDIA A100-SXM4-80GB", "--",
                           sys.executable, "-m", "tfdoctor", "--json", "--budget", "60", "--python",
                           tf_cuda_217_python], capture_output=True, text=True, env=env, timeout=240)
    report = json.loads(proc.stdout)
    assert report["facts"]["smoke"]["tf_version"] == "2.17.1"
    assert report["verdict"]["root_cause"] == "smoke-gpu-kernels-failed"
    found = next(f for f in report["findings"] if f["id"] == "smoke-gpu-kernels-failed")
    assert "lists 2 GPU(s)" in found["message"] and found["caused_by"] is None
