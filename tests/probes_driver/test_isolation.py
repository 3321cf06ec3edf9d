"""The probe children keep the doctor alive whatever the library or interpreter does."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from fakegpu.machine import FakeMachine
from tfdoctor.probes.cuda_driver import probe_cuda_driver
from tfdoctor.probes.driver import probe_driver

H100 = {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "memory_total_mib": 81559}


def test_hang_in_a_device_call_is_cut_by_the_time_limit(tmp_path: Path) -> None:
    """A wedged GPU hangs mid-enumeration: /proc facts survive, the issue names the call."""
    machine = FakeMachine(tmp_path)
    machine.kernel_module("580.65.06")
    machine.nvml(
        {"driver_version": "580.65.06", "gpus": [H100], "hang": ["nvmlDeviceGetPciInfo_v3"]}
    )
    issues: list = []
    started = time.monotonic()
    facts = probe_driver(machine.host(timeout=1.0), issues)
    assert time.monotonic() - started < 4
    assert facts.nvml_error == "timed out"
    assert facts.kernel_module_version == "580.65.06"
    assert [(i.kind, i.message) for i in issues] == [
        ("timeout", "_nvml_child.py timed out after 1 s in nvmlDeviceGetPciInfo_v3")
    ]


def test_cuda_hang_is_cut_by_the_time_limit(tmp_path: Path) -> None:
    """cuInit that never returns: the library path is still known from the child's marker."""
    machine = FakeMachine(tmp_path)
    machine.cuda({"driver_version": 13000, "hang": ["cuInit"]})
    issues: list = []
    facts = probe_cuda_driver(machine.host(timeout=1.0), issues)
    assert facts.crash == "timed out"
    assert facts.library == str(tmp_path / "lib" / "libcuda.so.1")
    assert [i.kind for i in issues] == ["timeout"]


def test_interpreter_without_nvidia_ml_py(tmp_path: Path) -> None:
    """An own_python lacking pynvml is a ProbeIssue; the kernel-side facts are still there."""
    machine = FakeMachine(tmp_path)
    machine.kernel_module("550.54.15", open_module=False)
    host = dataclasses.replace(machine.host(), own_python="/usr/bin/python3")
    issues: list = []
    facts = probe_driver(host, issues)
    assert facts.nvml_error is None and facts.kernel_module_version == "550.54.15"
    assert issues[0].kind == "error" and "nvidia-ml-py not importable" in issues[0].message


def test_interpreter_that_cannot_start(tmp_path: Path) -> None:
    """A missing interpreter becomes a ProbeIssue and data, never an exception."""
    machine = FakeMachine(tmp_path)
    host = dataclasses.replace(machine.host(), own_python=str(tmp_path / "no-python"))
    issues: list = []
    driver = probe_driver(host, issues)
    cuda = probe_cuda_driver(host, issues)
    assert driver.nvml_error.startswith("could not start")
    assert cuda.crash is None and cuda.library is None
    assert [(i.probe, i.kind) for i in issues] == [("driver", "error"), ("cuda-driver", "error")]


def test_child_that_prints_no_json(tmp_path: Path) -> None:
    """An interpreter that exits 0 without the JSON line (a wrapper) is reported, not parsed."""
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\necho 'hello from a wrapper'\n")
    fake_python.chmod(0o755)
    machine = FakeMachine(tmp_path / "m")
    host = dataclasses.replace(machine.host(), own_python=str(fake_python))
    issues: list = []
    facts = probe_driver(host, issues)
    assert facts.nvml_error == "no output"
    assert issues[0].message.startswith("_nvml_child.py printed no JSON object")


def test_unreadable_scenario_is_a_clean_error(tmp_path: Path) -> None:
    """Without its scenario file the stub fails init with NVML_ERROR_UNKNOWN (and says why)."""
    machine = FakeMachine(tmp_path)
    machine.nvml({"gpus": []})
    machine.env["TFDOCTOR_FAKE_NVML"] = str(tmp_path / "missing.json")
    issues: list = []
    facts = probe_driver(machine.host(), issues)
    assert facts.nvml_error == "NVML_ERROR_UNKNOWN"
    assert issues == []


def test_hung_child_dies_by_itself_when_tfdoctor_is_gone(tmp_path: Path) -> None:
    """If tfdoctor is SIGKILLed while a child hangs in a driver call, no one will kill that
    child: it must end itself at its deadline (SIGALRM), not live on forever."""
    import signal
    import subprocess
    import sys

    from tfdoctor.probes.cuda_driver import CUDA_CHILD

    machine = FakeMachine(tmp_path)
    machine.cuda({"driver_version": 13000, "hang": ["cuInit"]})
    env = {**machine.host().env, "TFDOCTOR_CHILD_DEADLINE": "1"}
    started = time.monotonic()
    child = subprocess.run([sys.executable, "-I", str(CUDA_CHILD)], env=env, capture_output=True,
                           timeout=20)
    assert child.returncode == -signal.SIGALRM
    assert time.monotonic() - started < 5
