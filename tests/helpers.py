"""Builders of facts for focused check tests: a healthy machine, then one change per test."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

import pytest
from tfdoctor.facts import (
    SCHEMA_VERSION,
    CudaDriverFacts,
    Distribution,
    DriverFacts,
    Facts,
    GpuFacts,
    LibraryFacts,
    PlatformFacts,
    PythonFacts,
    TensorFlowFacts,
    XlaFacts,
)
from tfdoctor.registry import CheckConfig
from tfdoctor.report import Report, build_report

SITE = "/venv/lib/python3.11/site-packages"
SONAMES = {
    "cudart": "libcudart.so.12", "cublas": "libcublas.so.12", "cublasLt": "libcublasLt.so.12",
    "cufft": "libcufft.so.11", "curand": "libcurand.so.10", "cusolver": "libcusolver.so.11",
    "cusparse": "libcusparse.so.12", "cudnn": "libcudnn.so.9", "nccl": "libnccl.so.2",
    "nvjitlink": "libnvJitLink.so.12",
}
PIP_DIR = {"cudart": "cuda_runtime", "cublasLt": "cublas", "nvjitlink": "nvjitlink"}
VERSIONS = {"cudart": "12.5.82", "cudnn": "9.3.0", "nccl": "2.27.7"}


def gpu(index: int = 0, name: str = "NVIDIA H100 80GB HBM3", cc: str = "9.0", **kw: Any) -> GpuFacts:
    base = GpuFacts(index=index, name=name, uuid=f"GPU-{index:08d}-aaaa-bbbb-cccc-000000000000",
                    pci_bus_id=f"00000000:{index + 10:02X}:00.0", compute_capability=cc,
                    memory_total_mib=81559, pcie_gen_current=5, pcie_gen_max=5,
                    pcie_width_current=16, pcie_width_max=16, mig_mode=False,
                    persistence_mode=True, throttle_reasons=(), ecc_uncorrected_volatile=0,
                    ecc_corrected_volatile=0)
    return replace(base, **kw)


def pip_lib(name: str, soname: str, version: str | None = None) -> LibraryFacts:
    pkg = PIP_DIR.get(name, name.lower())
    return LibraryFacts(name=name, soname=soname, path=f"{SITE}/nvidia/{pkg}/lib/{soname}",
                        found_via="runpath", origin="pip",
                        version=version or VERSIONS.get(name, "12.5.0"), version_source="library")


def healthy(gpus: int = 8, tf_version: str = "2.21.0", driver: str = "580.65.06") -> Facts:
    """A healthy 8x H100 with driver 580 and TF 2.21 with its pip CUDA libraries."""
    tf = TensorFlowFacts(
        distributions=(Distribution("tensorflow", tf_version, SITE),), version=tf_version,
        package_dir=f"{SITE}/tensorflow", is_cuda_build=True, cuda_version="12.5.1",
        cudnn_version="9.3.0", compute_capabilities=("sm_60", "sm_70", "sm_80", "sm_89", "compute_90"),
        sonames=dict(SONAMES), build_info_source="cuda_config.h",
        requirements={"numpy": ">=1.26.0", "protobuf": "<8.0.0,>=6.31.1", "keras": ">=3.12.0"},
        and_cuda_pins={"nvidia-cudnn-cu12": "<10.0,>=9.3.0.75"},
    )
    return Facts(
        schema_version=SCHEMA_VERSION, tool_version="test", collected_at="2026-11-22T00:00:00+00:00",
        python=PythonFacts(executable="/venv/bin/python", version="3.11.7", implementation="CPython",
                           prefix="/venv", is_venv=True, is_conda=False, site_packages=(SITE,),
                           packages={"tensorflow": tf_version, "numpy": "2.1.3", "protobuf": "6.31.1",
                                     "keras": "3.12.0", "nvidia-cudnn-cu12": "9.3.0.75"}),
        platform=PlatformFacts(system="Linux", release="6.8.0", machine="x86_64", distro="Ubuntu 24.04",
                               glibc="2.39", cpu_flags=("avx", "avx2", "fma"), in_container=False,
                               is_wsl=False),
        env={},
        driver=DriverFacts(nvml_library="/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                           driver_version=driver, cuda_driver_version="13.0",
                           kernel_module_version=driver, nvidia_module_loaded=True,
                           device_nodes=tuple(f"/dev/nvidia{i}" for i in range(gpus)),
                           gpus=tuple(gpu(i) for i in range(gpus))),
        cuda_driver=CudaDriverFacts(library="/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                    init_result="CUDA_SUCCESS", driver_version="13.0",
                                    device_count=gpus),
        tensorflow=tf,
        libraries=tuple(pip_lib(n, s) for n, s in SONAMES.items()),
        xla=XlaFacts(ptxas=f"{SITE}/nvidia/cuda_nvcc/bin/ptxas", ptxas_version="12.5.82",
                     libdevice=f"{SITE}/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc"),
    )


def change(facts: Facts, **sections: Any) -> Facts:
    """Replace fields of sections: change(f, driver={"nvml_error": "..."}, env={...})."""
    updates = {}
    for name, value in sections.items():
        current = getattr(facts, name)
        updates[name] = replace(current, **value) if isinstance(value, dict) and hasattr(
            current, "__dataclass_fields__") else value
    return replace(facts, **updates)


def judge(facts: Facts, expect_gpus: int | None = None) -> Report:
    return build_report(facts, CheckConfig(expect_gpus=expect_gpus))


def ids(report: Report) -> list[str]:
    return [f.id for f in report.findings]


def need(ok: bool, why: str) -> None:
    """A test input of this machine image (a real toolkit, an old Python): skip where it is
    missing on a developer's machine, but fail in CI, where a skip would hide a broken setup."""
    if ok:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{why} (CI must provide it)")
    pytest.skip(why)


def triage_json(ticket: str) -> dict:
    """The --json report of `tfdoctor triage -` on this ticket, through the real command (click's
    runner, in process); a usage or internal error fails the test."""
    import json

    from click.testing import CliRunner
    from tfdoctor.cli import cli

    result = CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket)
    assert result.exit_code in (0, 1, 3), result.output  # healthy, problems, incomplete
    return json.loads(result.stdout)
