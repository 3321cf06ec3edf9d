"""Which sonames the library probe looks for, which object's RUNPATH it uses, and a broken cache."""

from __future__ import annotations

import os
from pathlib import Path

from fakegpu.layout import Layout, framework_stub, install_stub
from tfdoctor.facts import ProbeIssue, TensorFlowFacts
from tfdoctor.host import Host
from tfdoctor.probes.libraries import find_framework, probe_libraries, wanted_sonames


def test_sonames_from_the_tf_tables_when_cuda_config_h_is_missing() -> None:
    """A wheel whose cuda_config.h could not be read still gets TF 2.21's sonames from compat."""
    sonames = wanted_sonames(
        TensorFlowFacts(version="2.21.0", is_cuda_build=True, cuda_version="12.5.1")
    )
    assert sonames["cudnn"] == "libcudnn.so.9" and sonames["cusolver"] == "libcusolver.so.11"
    assert list(sonames)[:3] == ["cudart", "cublas", "cublasLt"]
    unknown = TensorFlowFacts(version="0.1.0", is_cuda_build=True, cuda_version="12.5.1")
    assert wanted_sonames(unknown) == {}


def test_sonames_completed_as_the_loader_will_need_them() -> None:
    """cublasLt shares TF_CUBLAS_VERSION, NCCL is always .so.2, nvJitLink only from CUDA 12 on
    (its major read from cudart's soname when the CUDA version is unknown); extras sort last."""
    tf = TensorFlowFacts(
        is_cuda_build=True,
        sonames={
            "nvshmem": "libnvshmem_host.so.3",
            "cublas": "libcublas.so.12",
            "cudart": "libcudart.so.12",
        },
    )
    assert wanted_sonames(tf) == {
        "cudart": "libcudart.so.12",
        "cublas": "libcublas.so.12",
        "cublasLt": "libcublasLt.so.12",
        "nccl": "libnccl.so.2",
        "nvjitlink": "libnvJitLink.so.12",
        "nvshmem": "libnvshmem_host.so.3",
    }
    cuda11 = TensorFlowFacts(
        is_cuda_build=True,
        cuda_version="11.8",
        sonames={"cudart": "libcudart.so.11.0", "cudnn": "libcudnn.so.8"},
    )
    assert "nvjitlink" not in wanted_sonames(cuda11)


def test_framework_with_another_suffix_and_none(tmp_path: Path) -> None:
    """Old or odd builds name the framework differently; without one there is no RUNPATH."""
    install_stub(framework_stub(), tmp_path / "tensorflow", "libtensorflow_framework.so.1")
    assert find_framework(str(tmp_path / "tensorflow")) == str(
        tmp_path / "tensorflow/libtensorflow_framework.so.1"
    )
    assert find_framework(str(tmp_path / "missing")) is None
    assert find_framework(None) is None


def test_unreadable_ldconfig_cache_is_a_probe_issue(tmp_path: Path) -> None:
    """A corrupt ld.so.cache is reported, and the search goes on without it."""
    layout = Layout(tmp_path / "root")
    layout.tensorflow()
    lib = layout.directory("/usr/lib/x86_64-linux-gnu", {"cudnn": "9.3.0"})
    layout.machine("/etc").mkdir()
    layout.machine("/etc/ld.so.cache").write_text("not a cache\n")
    issues: list[ProbeIssue] = []
    host = Host(env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, root=layout.root)
    libs = probe_libraries(
        host, issues, layout.python_facts(), layout.tf_facts({"cudnn": "libcudnn.so.9"})
    )
    cudnn = next(lib for lib in libs if lib.name == "cudnn")
    assert (cudnn.path, cudnn.found_via, cudnn.version) == (
        str(lib / "libcudnn.so.9"),
        "default_dirs",
        "9.3.0",
    )
    assert [(i.probe, i.kind) for i in issues] == [("libraries", "error")]
    assert "ld.so.cache" in issues[0].message
