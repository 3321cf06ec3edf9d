"""The library probe on the real installs of this machine: the CUDA 13.0 toolkit in the ldconfig
cache, and the tensorflow[and-cuda] 2.21 venv with its real pip CUDA 12 libraries (no driver)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from fakegpu.layout import Layout, framework_stub, stub_library
from helpers import need
from tfdoctor.facts import PythonFacts, TensorFlowFacts
from tfdoctor.host import Host
from tfdoctor.probes.elf import expand_origin, read_dynamic
from tfdoctor.probes.libraries import probe_libraries

TOOLKIT = Path("/usr/local/cuda-13.0")
CONFIG_H = "tensorflow/include/external/local_config_cuda/cuda/cuda/cuda_config.h"
MACROS = {
    "CUDART": "cudart",
    "CUBLAS": "cublas",
    "CUFFT": "cufft",
    "CURAND": "curand",
    "CUSOLVER": "cusolver",
    "CUSPARSE": "cusparse",
    "CUPTI": "cupti",
    "CUDNN": "cudnn",
}


def site_packages(python: str) -> Path:
    return next((Path(python).parent.parent / "lib").glob("python3*/site-packages"))


def venv_facts(python: str) -> tuple[PythonFacts, TensorFlowFacts]:
    """Facts the target probe would give, built from the venv's own cuda_config.h and dist-infos."""
    site = site_packages(python)
    defines = dict(re.findall(r'#define TF_(\w+)_VERSION "([^"]*)"', (site / CONFIG_H).read_text()))
    sonames = {
        short: f"lib{short}.so.{defines[m]}" for m, short in MACROS.items() if defines.get(m)
    }
    sonames["cublasLt"] = f"libcublasLt.so.{defines['CUBLAS']}"
    packages = {}
    for dist in site.glob("nvidia_*.dist-info"):
        name, version = dist.name[: -len(".dist-info")].rsplit("-", 1)
        packages[name.replace("_", "-")] = version
    python_facts = PythonFacts(executable=python, site_packages=(str(site),), packages=packages)
    tf = TensorFlowFacts(
        version="2.21.0",
        package_dir=str(site / "tensorflow"),
        is_cuda_build=True,
        cuda_version=defines["CUDA"],
        sonames=sonames,
    )
    return python_facts, tf


def real_host(**env: str) -> Host:
    base = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "CONDA_PREFIX")}
    return Host(env=base | env, own_python=sys.executable, timeout=60)


def test_stub_elf_dynamic_sections() -> None:
    """The stubs carry what the probe reads: a DT_SONAME, and for the framework a DT_RUNPATH."""
    lib = read_dynamic(stub_library("cudnn", "libcudnn.so.9", "9.3.0"))
    assert lib is not None and lib.soname == "libcudnn.so.9" and lib.runpath == ()
    framework = read_dynamic(framework_stub())
    assert framework is not None and framework.soname == "libtensorflow_framework.so.2"
    assert framework.rpath == () and framework.runpath[:2] == (
        "$ORIGIN/../../nvidia/nccl/lib",
        "$ORIGIN/../nvidia/nccl/lib",
    )


def test_real_tf_2_21_runpath_lacks_cusolver(tf_cuda_python: str) -> None:
    """The real wheel: DsoLoader's object has a RUNPATH with cuDNN's dir but not cuSOLVER's."""
    package = site_packages(tf_cuda_python) / "tensorflow"
    info = read_dynamic(package / "libtensorflow_framework.so.2")
    assert info is not None and info.soname == "libtensorflow_framework.so.2" and info.rpath == ()
    dirs = {
        os.path.normpath(d)
        for d in expand_origin(info.runpath, package / "libtensorflow_framework.so.2")
    }
    assert str(package.parent / "nvidia/cudnn/lib") in dirs
    assert str(package.parent / "nvidia/cusolver/lib") not in dirs


def test_real_cuda_13_toolkit_through_the_ldconfig_cache(tmp_path: Path) -> None:
    """A TF that wants CUDA 13 libraries on this machine: cudart and cupti come from the real
    toolkit via the real ldconfig cache and tell their real versions; cuBLAS 13 is not installed."""
    need(TOOLKIT.is_dir(), "no CUDA 13.0 toolkit at /usr/local/cuda-13.0")
    layout = Layout(tmp_path)  # a TF package dir with no framework library: no RUNPATH at all
    tf = TensorFlowFacts(
        version="2.22.0",
        package_dir=str(tmp_path / "tensorflow"),
        is_cuda_build=True,
        cuda_version="13.0",
        sonames={
            "cudart": "libcudart.so.13",
            "cupti": "libcupti.so.13",
            "cublas": "libcublas.so.13",
        },
    )
    libs = {lib.name: lib for lib in probe_libraries(real_host(), [], layout.python_facts(), tf)}
    cudart = libs["cudart"]
    assert (cudart.path, cudart.found_via, cudart.origin) == (
        str(TOOLKIT / "lib/libcudart.so.13"),
        "ldconfig",
        "cuda-toolkit",
    )
    assert (cudart.version, cudart.version_source) == ("13.0", "library")
    assert (libs["cupti"].version, libs["cupti"].version_source) == ("13.0.1", "library")
    assert libs["cublas"].path is None and libs["cublasLt"].path is None
    assert libs["nvjitlink"].soname == "libnvJitLink.so.13"


def test_real_tf_cuda_venv_versions_and_missing_cusolver(tf_cuda_python: str) -> None:
    """The real [and-cuda] venv: every library TF's RUNPATH reaches is the pip wheel's, and its own
    answer agrees with the wheel's version; libcusolver.so.11 does not resolve without
    LD_LIBRARY_PATH even though nvidia-cusolver-cu12 is installed (TF 2.21's RUNPATH bug)."""
    python, tf = venv_facts(tf_cuda_python)
    site = Path(python.site_packages[0])
    packages = python.packages
    libs = {lib.name: lib for lib in probe_libraries(real_host(), [], python, tf)}
    wheel = {
        "cudart": "nvidia-cuda-runtime-cu12",
        "cublas": "nvidia-cublas-cu12",
        "cublasLt": "nvidia-cublas-cu12",
        "cufft": "nvidia-cufft-cu12",
        "cusparse": "nvidia-cusparse-cu12",
        "cudnn": "nvidia-cudnn-cu12",
        "nccl": "nvidia-nccl-cu12",
        "nvjitlink": "nvidia-nvjitlink-cu12",
    }
    for name, project in wheel.items():
        lib = libs[name]
        assert (lib.found_via, lib.origin, lib.version_source, lib.error) == (
            "runpath",
            "pip",
            "library",
            None,
        ), lib
        assert lib.version and packages[project].startswith(lib.version), (
            lib.version,
            packages[project],
        )
    assert libs["cupti"].version == packages["nvidia-cuda-cupti-cu12"]
    cusolver = libs["cusolver"]
    assert cusolver.path is None
    assert cusolver.other_copies == (str(site / "nvidia/cusolver/lib/libcusolver.so.11"),)

    fixed = real_host(LD_LIBRARY_PATH=str(site / "nvidia/cusolver/lib"))
    cusolver = {lib.name: lib for lib in probe_libraries(fixed, [], python, tf)}["cusolver"]
    assert (cusolver.found_via, cusolver.version_source) == ("ld_library_path", "library")
    assert packages["nvidia-cusolver-cu12"].startswith(cusolver.version or "-")
