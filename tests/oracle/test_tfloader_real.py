"""TensorFlow 2.21's own DsoLoader against tfdoctor's loader model, on the real [and-cuda] wheel.

Each layout runs the real target probe, TensorFlow's loader (the real libtensorflow_framework.so.2
in a child of the venv's interpreter) and the library probe, then requires agreement library by
library: where TensorFlow opened a file, the model resolved the same file; where TensorFlow said
"cannot open shared object file" for the soname itself, the model found none. No GPU and no
driver: libcuda and NVML fail to load, which is TensorFlow's answer too.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import need
from tfdoctor.facts import LibraryFacts, TfLoaderFacts
from tfdoctor.host import Host
from tfdoctor.probes.libraries import find_framework, probe_libraries
from tfdoctor.probes.target import probe_target
from tfdoctor.probes.tfloader import probe_tf_loader

TOOLKIT = Path("/usr/local/cuda-13.0")


def site_of(python: str) -> Path:
    return next((Path(python).parent.parent / "lib").glob("python3*/site-packages"))


def host(python: str, ld_library_path: list[str] | None = None) -> Host:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "CONDA_PREFIX")}
    if ld_library_path:
        env["LD_LIBRARY_PATH"] = ":".join(ld_library_path)
    return Host(env=env, python=python, own_python=sys.executable, timeout=60)


def judge_layout(h: Host, site: Path | None = None) -> tuple[TfLoaderFacts, dict[str, LibraryFacts]]:
    """Probe like the full run; `site` swaps in a copy of site-packages (same venv interpreter)."""
    issues: list = []
    python, tf = probe_target(h, issues)
    assert tf is not None and tf.package_dir
    if site is not None:
        tf = replace(tf, package_dir=str(site / "tensorflow"))
        python = replace(python, site_packages=(str(site),))
    loader = probe_tf_loader(h, issues, find_framework(tf.package_dir), tf)
    assert loader is not None and loader.loader == "tsl::internal::DsoLoader", loader
    libs = {lib.name: lib for lib in probe_libraries(h, issues, python, tf, loader)}
    assert [i for i in issues if i.probe == "tf-loader"] == []
    for answer in loader.answers:
        lib = libs.get(answer.name)
        if lib is None:
            continue
        assert not lib.model_disagrees, (answer, lib)
        if answer.path:
            assert lib.path and os.path.realpath(lib.path) == os.path.realpath(answer.path), answer
        elif f"dlerror: {lib.soname}: cannot open" in (answer.error or ""):
            assert lib.path is None, (answer, lib)
    return loader, libs


def answers(loader: TfLoaderFacts) -> dict[str, str]:
    return {a.name: a.path or a.error or "" for a in loader.answers}


def test_stock(tf_cuda_python):
    """Stock 2.21: TF opens every pip library but libcusolver.so.11, as tfdoctor predicts."""
    loader, libs = judge_layout(host(tf_cuda_python))
    said = answers(loader)
    assert "libcusolver.so.11: cannot open shared object file" in said["cusolver"]
    assert libs["cusolver"].path is None
    for name in ("cudart", "cublas", "cublasLt", "cufft", "cusparse", "cupti", "cudnn", "nccl"):
        assert "/nvidia/" in said[name] and libs[name].origin == "pip", name
    assert "libcuda.so.1: cannot open" in said["cuda"]  # no driver here
    assert "curand" not in said  # TF 2.21's loader has no cuRAND function
    assert said["nvjitlink"] == libs["nvjitlink"].path


def test_ld_library_path_adds_the_missing_dir(tf_cuda_python):
    """With cuSOLVER's pip dir on LD_LIBRARY_PATH both find it there."""
    site = site_of(tf_cuda_python)
    loader, libs = judge_layout(host(tf_cuda_python, [str(site / "nvidia/cusolver/lib")]))
    assert answers(loader)["cusolver"].endswith("/nvidia/cusolver/lib/libcusolver.so.11")
    assert libs["cusolver"].found_via == "ld_library_path"


def test_a_pip_wheel_removed_in_a_copy(tf_cuda_python, tmp_path):
    """A copy of site-packages without nvidia-cudnn: TF's RUNPATH finds no cuDNN, nor does the model."""
    site = site_of(tf_cuda_python)
    copy = tmp_path / "site-packages"
    (copy / "tensorflow").mkdir(parents=True)
    (copy / "nvidia").mkdir()
    framework = site / "tensorflow/libtensorflow_framework.so.2"
    # $ORIGIN is the directory of the name the framework was opened by, so a link is a copy here.
    (copy / "tensorflow" / framework.name).symlink_to(framework)
    for wheel in (site / "nvidia").iterdir():
        if wheel.is_dir() and wheel.name not in ("cudnn", "__pycache__"):
            (copy / "nvidia" / wheel.name).symlink_to(wheel)
    loader, libs = judge_layout(host(tf_cuda_python), copy)
    assert "libcudnn.so.9: cannot open shared object file" in answers(loader)["cudnn"]
    assert libs["cudnn"].path is None and libs["cublas"].path
    assert libs["cublas"].path.startswith(str(copy))


def test_cuda_13_toolkit_on_the_loader_path(tf_cuda_python):
    """The CUDA 13.0 toolkit first on LD_LIBRARY_PATH: its .so.13 sonames are not TF's .so.12,
    so both still take the pip CUDA 12 libraries."""
    need(TOOLKIT.is_dir(), "no CUDA 13.0 toolkit at /usr/local/cuda-13.0")
    loader, libs = judge_layout(host(tf_cuda_python, [str(TOOLKIT / "lib64")]))
    assert "/nvidia/cuda_runtime/lib/libcudart.so.12" in answers(loader)["cudart"]
    assert libs["cudart"].found_via == "runpath"


def test_ld_library_path_shadows_the_runpath(tf_cuda_python, tmp_path):
    """A directory on LD_LIBRARY_PATH with its own libcudnn.so.9 wins over the RUNPATH, for both."""
    site = site_of(tf_cuda_python)
    shadow = tmp_path / "lib"
    shadow.mkdir()
    (shadow / "libcudnn.so.9").symlink_to(site / "nvidia/cudnn/lib/libcudnn.so.9")
    loader, libs = judge_layout(host(tf_cuda_python, [str(shadow)]))
    assert answers(loader)["cudnn"] == str(shadow / "libcudnn.so.9")
    assert libs["cudnn"].found_via == "ld_library_path"


@pytest.mark.parametrize("quick", [True, False])
def test_only_the_full_run_asks_tensorflow(tf_cuda_python, quick):
    """--quick never loads the framework (its 0.5 s budget); the full run records the answers."""
    from tfdoctor.probes import collect_facts

    facts = collect_facts(host(tf_cuda_python), tf_loader=not quick)
    assert (facts.tf_loader is None) == quick
    if not quick:
        assert facts.tf_loader is not None and len(facts.tf_loader.answers) >= 10
        assert facts.to_dict()["tf_loader"]["loader"] == "tsl::internal::DsoLoader"


def test_tf_2_17_cupti_from_the_unversioned_fallback(tf_cuda_217_python):
    """TF 2.17 (older Abseil Status): its RUNPATH lacks cuda_cupti and nccl, and when
    libcupti.so.12 is not found its loader falls back to plain libcupti.so, which the ldconfig
    cache gives from the CUDA 13.0 toolkit. tfdoctor's model knows no such fallback: TensorFlow's
    answer wins and the disagreement is reported; every other library agrees."""
    need(TOOLKIT.is_dir(), "no CUDA 13.0 toolkit at /usr/local/cuda-13.0")
    h = host(tf_cuda_217_python)
    issues: list = []
    python, tf = probe_target(h, issues)
    assert tf is not None and tf.version == "2.17.1"
    loader = probe_tf_loader(h, issues, find_framework(tf.package_dir), tf)
    assert loader is not None and loader.loader == "tsl::internal::DsoLoader"
    said = answers(loader)
    libs = {lib.name: lib for lib in probe_libraries(h, issues, python, tf, loader)}
    assert said["cupti"].endswith("/libcupti.so") and "cuda-13.0" in said["cupti"]
    cupti = libs["cupti"]
    assert cupti.model_disagrees and cupti.model_path is None and cupti.found_via == "tensorflow"
    assert cupti.path == said["cupti"]
    assert "libcudnn.so.8" in said["cudnn"] and libs["cudnn"].soname == "libcudnn.so.8"
    assert "libnccl.so.2: cannot open" in said["nccl"] and libs["nccl"].path is None
    assert [n for n, lib in libs.items() if lib.model_disagrees] == ["cupti"]
    from tfdoctor.facts import Facts, PythonFacts
    from tfdoctor.report import build_report

    facts = Facts(schema_version="2", tool_version="t", collected_at="t", python=PythonFacts(
        executable=tf_cuda_217_python), tensorflow=tf, libraries=tuple(libs.values()), tf_loader=loader)
    found = [f for f in build_report(facts).findings if f.id == "tf-loader-disagrees"]
    assert len(found) == 1 and "libcupti.so.12" in found[0].message
