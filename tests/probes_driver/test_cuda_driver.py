"""libcuda.so.1 as TensorFlow's runtime would dlopen it: stubs, older drivers, NVIDIA's stub."""

from __future__ import annotations

from pathlib import Path

from fakegpu.machine import FakeMachine
from tfdoctor.probes.cuda_driver import probe_cuda_driver


def test_stub_recognised_by_its_directory(tmp_path: Path) -> None:
    """A stubs/ libcuda that happens to answer cuInit is still a stub: the path gives it away."""
    machine = FakeMachine(tmp_path)
    stubs = tmp_path / "cuda-12.4" / "targets" / "x86_64-linux" / "lib" / "stubs"
    machine.cuda({"driver_version": 12040, "devices": []}, directory=stubs)
    facts = probe_cuda_driver(machine.host(), [])
    assert facts.library == str(stubs / "libcuda.so.1")
    assert facts.init_result == "CUDA_SUCCESS" and facts.is_stub


def test_names_without_cuGetErrorName(tmp_path: Path) -> None:
    """A driver lacking cuGetErrorName still gets its CUresult named, from the child's table."""
    machine = FakeMachine(tmp_path)
    machine.cuda(
        {
            "driver_version": 12020,
            "errors": {"cuInit": "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
        },
        omit=("cuGetErrorName",),
    )
    facts = probe_cuda_driver(machine.host(), [])
    assert facts.init_result == "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"
    assert facts.driver_version == "12.2"


def test_unknown_curesult_is_numbered(tmp_path: Path) -> None:
    """A CUresult neither the driver nor the table knows stays visible as its number."""
    machine = FakeMachine(tmp_path)
    machine.cuda({"driver_version": 12020, "errors": {"cuInit": 4242, "cuDriverGetVersion": 4242}})
    facts = probe_cuda_driver(machine.host(), [])
    assert facts.init_result == "CUresult 4242"
    assert facts.errors == {"cuDriverGetVersion": "CUresult 4242"} and facts.driver_version is None


def test_library_without_cuinit(tmp_path: Path) -> None:
    """A file named libcuda.so.1 without cuInit is not a CUDA driver: a load error, not a crash."""
    machine = FakeMachine(tmp_path)
    machine.cuda({"driver_version": 12020}, omit=("cuInit", "cuDeviceGetCount"))
    facts = probe_cuda_driver(machine.host(), [])
    assert facts.load_error == "libcuda.so.1 has no cuInit symbol"


def test_device_details_in_cuda_order(tmp_path: Path) -> None:
    """Names and compute capabilities come back per device, as the driver enumerates them."""
    machine = FakeMachine(tmp_path)
    machine.cuda(
        {
            "driver_version": 12080,
            "devices": [
                {
                    "name": "NVIDIA A100-SXM4-80GB",
                    "compute_capability": "8.0",
                    "memory_total_mib": 81920,
                },
                {"name": "NVIDIA L4", "compute_capability": "8.9", "memory_total_mib": 23034},
            ],
        }
    )
    facts = probe_cuda_driver(machine.host(), [])
    assert facts.device_count == 2
    assert facts.device_names == ("NVIDIA A100-SXM4-80GB", "NVIDIA L4")
    assert facts.compute_capabilities == ("8.0", "8.9")


def test_device_get_failure_is_named(tmp_path: Path) -> None:
    """A device that cuDeviceGet refuses is reported by ordinal, the others still listed."""
    machine = FakeMachine(tmp_path)
    machine.cuda(
        {
            "driver_version": 12080,
            "errors": {"cuDeviceGet": "CUDA_ERROR_DEVICE_UNAVAILABLE"},
            "devices": [{"name": "NVIDIA L4", "compute_capability": "8.9"}],
        }
    )
    facts = probe_cuda_driver(machine.host(), [])
    assert facts.errors == {"cuDeviceGet(0)": "CUDA_ERROR_DEVICE_UNAVAILABLE"}
    assert facts.device_names == ()
