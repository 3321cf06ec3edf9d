"""Every stub variant the suite uses, so `python tests/stubs/build.py` can build them all up front.

Helpers append their own entries to STUBS: (source, soname, defines). `stub()` is the one way
tests build a stub: it adds a hash of the shared C header to the defines, because build.py's
cache key covers only the .c file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from stubs.build import HERE, build_stub

NVML_SONAME = "libnvidia-ml.so.1"
CUDA_SONAME = "libcuda.so.1"

# Older drivers lack newer NVML symbols (nvml.h "@since" notes): nvmlDeviceGetMigMode (450),
# nvmlDeviceGetMemoryInfo_v2 and nvmlDeviceGetComputeRunningProcesses_v3 (510),
# nvmlDeviceGetCurrentClocksEventReasons (535, which renamed the "throttle" reasons).
DRIVER_470_OMITS = (
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetCurrentClocksEventReasons",
)

STUBS: list[tuple[str, str, tuple[str, ...]]] = [
    ("nvml.c", NVML_SONAME, ()),
    ("nvml.c", NVML_SONAME, DRIVER_470_OMITS),
    ("nvml.c", NVML_SONAME, ("nvmlDeviceGetMigMode",)),
    ("cuda.c", CUDA_SONAME, ()),
]
"""(source in tests/stubs, soname, symbols to omit) for every variant tests build."""


def _header_hash() -> str:
    return hashlib.sha256((HERE / "stub_json.h").read_bytes()).hexdigest()[:12]


def stub(source: str, soname: str, omit: Iterable[str] = ()) -> Path:
    """The cached stub built from `source` without the symbols in `omit`."""
    defines: dict[str, str | int] = {f"OMIT_{name}": 1 for name in sorted(set(omit))}
    defines["STUB_JSON_H"] = _header_hash()
    return build_stub(source, soname, defines)


# Versioned CUDA user-space library stubs from cudalib.c (tests/fakegpu/layout.py builds them
# with the same defines): (soname, defines). build_all() below also builds these.
CUDALIB_STUBS: list[tuple[str, dict[str, str | int]]] = [
    (soname, {kind: 1, "VMAJOR": major, "VMINOR": minor, "VPATCH": patch, **variant})
    for soname, kind, (major, minor, patch), variant in [
        ("libcudart.so.12", "KIND_CUDART", (12, 5, 82), {}),
        ("libcublas.so.12", "KIND_CUBLAS", (12, 5, 3), {}),
        ("libcublasLt.so.12", "KIND_CUBLASLT", (12, 5, 3), {}),
        ("libcufft.so.11", "KIND_CUFFT", (11, 2, 3), {}),
        ("libcurand.so.10", "KIND_CURAND", (10, 3, 6), {}),
        ("libcusolver.so.11", "KIND_CUSOLVER", (11, 6, 3), {}),
        ("libcusparse.so.12", "KIND_CUSPARSE", (12, 5, 1), {}),
        ("libcupti.so.12", "KIND_CUPTI", (12, 5, 82), {}),
        ("libcudnn.so.9", "KIND_CUDNN", (9, 3, 0), {}),
        ("libcudnn.so.9", "KIND_CUDNN", (9, 3, 0), {"CRASH": 1}),
        ("libnccl.so.2", "KIND_NCCL", (2, 21, 5), {}),
        ("libnvJitLink.so.12", "KIND_NVJITLINK", (12, 5, 82), {}),
    ]
]



def build_all() -> list[Path]:
    """Build (or find cached) every variant in STUBS and CUDALIB_STUBS."""
    return [stub(source, soname, omit) for source, soname, omit in STUBS] + [
        build_stub("cudalib.c", s, d) for s, d in CUDALIB_STUBS]
