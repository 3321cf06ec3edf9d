"""Installed CUDA toolkits as facts: the real CUDA 13.0 tree of this machine, and fake layouts."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import need
from tfdoctor.host import Host
from tfdoctor.probes.toolkits import probe_toolkits, toolkit_version

REAL = Path("/usr/local/cuda-13.0")


def test_real_cuda_13_tree() -> None:
    """This machine's CUDA 13.0 (built from pip wheels: no version.json) is found with its version,
    and the nvcc on PATH is matched to it."""
    need(REAL.is_dir(), "needs the CUDA 13.0 toolkit at /usr/local/cuda-13.0")
    kits = probe_toolkits(Host())
    real = [k for k in kits if k.path == str(REAL)]
    assert real and real[0].version and real[0].version.startswith("13.0")


def _kit(root: Path, name: str, files: dict[str, str]) -> Path:
    d = root / "usr/local" / name
    (d / "bin").mkdir(parents=True)
    for rel, text in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    return d


def test_fake_layout_versions_and_conda(tmp_path: Path) -> None:
    """version.json, version.txt and the directory name give versions; CUDA_HOME and a conda
    env's cuda-toolkit package are toolkits too; no nvcc on PATH runs nothing."""
    _kit(tmp_path, "cuda-11.8", {"version.json": json.dumps({"cuda": {"version": "11.8.0"}})})
    _kit(tmp_path, "cuda-10.1", {"version.txt": "CUDA Version 10.1.243\n"})
    _kit(tmp_path, "cuda-12.4", {})
    conda = tmp_path / "env"
    (conda / "conda-meta").mkdir(parents=True)
    (conda / "conda-meta" / "cuda-toolkit-12.2.2-0.json").write_text("{}")
    host = Host(env={"PATH": "", "CONDA_PREFIX": "/env", "CUDA_HOME": "/usr/local/cuda-11.8"},
                root=tmp_path)
    kits = {k.path: (k.version, k.via) for k in probe_toolkits(host)}
    assert kits["/usr/local/cuda-10.1"] == ("10.1.243", "dir")
    assert kits["/usr/local/cuda-12.4"] == ("12.4", "dir")
    assert kits["/usr/local/cuda-11.8"] == ("11.8.0", "cuda_home")
    assert kits["/env"] == ("12.2.2", "conda")
    assert toolkit_version(tmp_path / "nowhere") is None
