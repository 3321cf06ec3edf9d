"""probe_xla on fake CUDA roots, the real pip cuda-nvcc wheel and the real CUDA 13.0 toolkit."""

from __future__ import annotations

import stat
from pathlib import Path

from helpers import need
from tfdoctor.facts import ProbeIssue, PythonFacts, TensorFlowFacts
from tfdoctor.host import Host
from tfdoctor.probes.xla import probe_xla

from .test_real import site_packages

TOOLKIT = Path("/usr/local/cuda-13.0")


def fake_root_with_cuda(root: Path, cuda_dir: str, release: str | None) -> Path:
    """<root>/<cuda_dir> with bin/ptxas (a script printing `release`) and nvvm/libdevice."""
    top = root / cuda_dir.lstrip("/")
    (top / "bin").mkdir(parents=True)
    (top / "nvvm/libdevice").mkdir(parents=True)
    (top / "nvvm/libdevice/libdevice.10.bc").write_bytes(b"BC\xc0\xde")
    ptxas = top / "bin/ptxas"
    body = (
        f"echo 'Cuda compilation tools, release {release}, V{release}.1'" if release else "exit 3"
    )
    ptxas.write_text(f"#!/bin/sh\n{body}\n")
    ptxas.chmod(ptxas.stat().st_mode | stat.S_IXUSR)
    return top


def tf_facts(package_dir: Path, cuda: str = "12.5.1") -> TensorFlowFacts:
    return TensorFlowFacts(
        version="2.21.0", package_dir=str(package_dir), is_cuda_build=True, cuda_version=cuda
    )


def test_xla_flags_data_dir_wins_for_ptxas_and_libdevice(tmp_path: Path) -> None:
    """--xla_gpu_cuda_data_dir is XLA's first choice for both, before $PATH and /usr/local/cuda."""
    data = fake_root_with_cuda(tmp_path, "/data/cuda", "12.4")
    fake_root_with_cuda(tmp_path / "root", "/usr/local/cuda", "12.8")
    host = Host(
        env={"PATH": "/usr/bin:/bin", "XLA_FLAGS": f"--xla_gpu_cuda_data_dir={data}"},
        root=tmp_path / "root",
    )
    xla = probe_xla(
        host, [], PythonFacts(executable="python"), tf_facts(tmp_path / "site/tensorflow")
    )
    assert xla is not None
    assert (xla.xla_flags_data_dir, xla.xla_flags_data_dir_exists) == (str(data), True)
    assert (xla.ptxas, xla.ptxas_found_via, xla.ptxas_version) == (
        str(data / "bin/ptxas"),
        "xla_flags",
        "12.4.1",
    )
    assert xla.libdevice == str(data / "nvvm/libdevice/libdevice.10.bc")
    assert xla.searched[:2] == (str(data), str(tmp_path / "root/usr/local/cuda"))


def test_data_dir_pointing_nowhere_falls_through_to_path_and_roots(tmp_path: Path) -> None:
    """A wrong XLA_FLAGS dir is recorded as missing; ptxas from $PATH wins over the CUDA roots,
    libdevice comes from the first root that has it (here the conda prefix)."""
    on_path = fake_root_with_cuda(tmp_path, "/tools", "12.3")
    conda = fake_root_with_cuda(tmp_path, "/conda/envs/tf", None)
    issues: list[ProbeIssue] = []
    host = Host(
        env={
            "PATH": f"{on_path / 'bin'}:/usr/bin",
            "XLA_FLAGS": "--xla_gpu_cuda_data_dir=/nowhere",
            "CONDA_PREFIX": str(conda),
        },
        root=tmp_path / "root",
    )
    xla = probe_xla(
        host, issues, PythonFacts(executable="python"), tf_facts(tmp_path / "site/tensorflow")
    )
    assert xla is not None and xla.xla_flags_data_dir_exists is False
    assert (xla.ptxas_found_via, xla.ptxas_version) == ("path", "12.3.1")
    assert xla.libdevice == str(conda / "nvvm/libdevice/libdevice.10.bc")
    # A ptxas that fails is an issue of the probe, not a crash.
    host = Host(env={"PATH": f"{conda / 'bin'}"}, root=tmp_path / "root")
    xla = probe_xla(
        host, issues, PythonFacts(executable="python"), tf_facts(tmp_path / "site/tensorflow")
    )
    assert xla is not None and xla.ptxas == str(conda / "bin/ptxas") and xla.ptxas_version is None
    assert [(i.probe, i.kind) for i in issues] == [("xla", "error")]


def test_nothing_found_and_no_cuda_tf(tmp_path: Path) -> None:
    """No ptxas, no libdevice anywhere: both None, with the roots XLA would have searched."""
    host = Host(env={"PATH": str(tmp_path)}, root=tmp_path)
    python = PythonFacts(executable="python", is_conda=True, prefix=str(tmp_path / "conda"))
    xla = probe_xla(host, [], python, tf_facts(tmp_path / "site/tensorflow", cuda="13.0"))
    assert (
        xla is not None
        and xla.ptxas is None
        and xla.libdevice is None
        and xla.xla_flags_data_dir is None
    )
    assert (
        str(tmp_path / "site/nvidia/cu13") in xla.searched
        and str(tmp_path / "conda") in xla.searched
    )
    assert probe_xla(host, [], python, None) is None
    assert (
        probe_xla(host, [], python, TensorFlowFacts(version="2.21.0", is_cuda_build=False)) is None
    )


def test_real_pip_cuda_nvcc_wheel(tf_cuda_python: str, tmp_path: Path) -> None:
    """The real venv without a system toolkit in reach: XLA uses nvidia/cuda_nvcc from pip."""
    site = site_packages(tf_cuda_python)
    host = Host(env={"PATH": "/usr/bin:/bin"}, root=tmp_path)
    xla = probe_xla(host, [], PythonFacts(executable=tf_cuda_python), tf_facts(site / "tensorflow"))
    assert xla is not None
    assert (xla.ptxas, xla.ptxas_found_via) == (
        str(site / "nvidia/cuda_nvcc/bin/ptxas"),
        "cuda_root",
    )
    assert xla.ptxas_version is not None and xla.ptxas_version.startswith("12.")
    assert xla.libdevice == str(site / "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc")


def test_real_toolkit_ptxas_on_path_shadows_the_pip_one(tf_cuda_python: str) -> None:
    """This machine as it is: the CUDA 13.0 ptxas on $PATH wins over the wheel's 12.x one, and
    /usr/local/cuda's libdevice over the pip one (PreferPtxasFromPath, root order)."""
    need(TOOLKIT.is_dir(), "no CUDA 13.0 toolkit at /usr/local/cuda-13.0")
    site = site_packages(tf_cuda_python)
    host = Host(env={"PATH": f"{TOOLKIT / 'bin'}:/usr/bin:/bin"})
    xla = probe_xla(host, [], PythonFacts(executable=tf_cuda_python), tf_facts(site / "tensorflow"))
    assert xla is not None
    assert (xla.ptxas, xla.ptxas_found_via, xla.ptxas_version) == (
        str(TOOLKIT / "bin/ptxas"),
        "path",
        "13.0.88",
    )
    assert xla.libdevice == "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"
