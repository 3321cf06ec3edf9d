"""The stub libraries themselves: warning-free C, every catalogued variant builds, real symbols."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest
from stubs import catalogue
from stubs.build import HERE


@pytest.mark.parametrize("source", ["nvml.c", "cuda.c"])
def test_compiles_without_warnings(source: str, tmp_path: Path) -> None:
    """-Wall -Wextra -Werror, all symbols in and one omitted: the stubs stay clean C."""
    cc = shutil.which("cc") or "gcc"
    for defines in ([], ["-DOMIT_nvmlDeviceGetMigMode=1", "-DOMIT_cuInit=1"]):
        argv = [
            cc,
            "-shared",
            "-fPIC",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            *defines,
            "-o",
            str(tmp_path / "out.so"),
            str(HERE / source),
        ]
        proc = subprocess.run(argv, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_catalogue_builds_every_variant() -> None:
    """`python tests/stubs/build.py` must be able to pre-build what the suite uses."""
    paths = catalogue.build_all()
    assert len(paths) == len(catalogue.STUBS) + len(catalogue.CUDALIB_STUBS)
    assert all(p.exists() for p in paths)


def test_omitted_symbol_is_really_absent() -> None:
    """An 'older driver' variant lacks the symbol for the dynamic linker, not just in behaviour."""
    full = ctypes.CDLL(str(catalogue.stub("nvml.c", catalogue.NVML_SONAME)))
    old = ctypes.CDLL(
        str(catalogue.stub("nvml.c", catalogue.NVML_SONAME, ["nvmlDeviceGetMigMode"]))
    )
    assert hasattr(full, "nvmlDeviceGetMigMode")
    assert not hasattr(old, "nvmlDeviceGetMigMode")
    assert hasattr(old, "nvmlDeviceGetCudaComputeCapability")
