"""A GPU fault that NVML names at start-up is the root cause, whatever else is missing.

Issue 21: NVML_ERROR_CORRUPTED_INFOROM and NVML_ERROR_GPU_IS_LOST from nvmlInit became the generic
`nvml-error`, which any specific finding outranks, so on a real tensorflow[and-cuda] 2.21 venv
(libcusolver.so.11 not on TensorFlow's RUNPATH) with no libcuda the root cause read
`cuda-library-missing`: fix a library, and the GPU is still dead. Now each is its own finding.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from fakegpu.machine import FakeMachine
from helpers import change, healthy, judge
from tfdoctor.probes.driver import probe_driver

NO_LIBCUDA = {"library": None, "init_result": None, "driver_version": None, "device_count": None,
              "load_error": "libcuda.so.1: cannot open shared object file: No such file or directory"}
H100 = {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "memory_total_mib": 81559}


def nvml_init_fails(tmp_path: Path, error: str) -> str | None:
    """What the real driver probe reads when the stub libnvidia-ml's nvmlInit returns `error`."""
    machine = FakeMachine(tmp_path)
    machine.kernel_module("580.65.06")
    machine.nvml({"driver_version": "580.65.06", "gpus": [H100],
                  "errors": {s: error for s in ("nvmlInit", "nvmlInit_v2", "nvmlInitWithFlags")}})
    return probe_driver(machine.host(), []).nvml_error


@pytest.mark.parametrize("error, root, fix", [
    ("NVML_ERROR_CORRUPTED_INFOROM", "gpu-inforom-corrupted", None),
    ("NVML_ERROR_GPU_IS_LOST", "gpu-lost", "reset-gpu"),
])
def test_hardware_fault_at_nvml_start_is_the_root_cause(tmp_path, error, root, fix):
    """The driver probe's reading of the stub, on a machine without libcuda whose TensorFlow
    cannot load libcusolver: the GPU fault is the root; both other problems are still reported;
    --expect-gpus' shortfall is explained by it."""
    assert nvml_init_fails(tmp_path, error) == error
    base = healthy(gpus=1)
    libs = tuple(replace(lib, path=None) if lib.name == "cusolver" else lib for lib in base.libraries)
    facts = change(base, driver={"nvml_error": error, "gpus": ()}, cuda_driver=NO_LIBCUDA,
                   libraries=libs)
    report = judge(facts, expect_gpus=1)
    assert report.root_cause is not None and report.root_cause.id == root
    assert error in report.root_cause.message
    assert (report.root_cause.remediation.fix_id if report.root_cause.remediation else None) == fix
    by_id = {f.id: f for f in report.findings}
    assert {"libcuda-missing", "cuda-library-missing", "nvml-error"} & set(by_id) == {
        "libcuda-missing", "cuda-library-missing"}
    assert by_id["gpus-fewer-than-expected"].caused_by == root


def test_other_nvml_errors_stay_generic():
    """An NVML error that names no cause (NVML_ERROR_UNKNOWN) is still nvml-error, which a
    specific finding outranks."""
    facts = change(healthy(gpus=1), driver={"nvml_error": "NVML_ERROR_UNKNOWN", "gpus": ()})
    assert "nvml-error" in [f.id for f in judge(facts).findings]
