"""The CUDA driver API (libcuda.so.1), probed in an isolated child with a time limit.

`_cuda_child.py` dlopens "libcuda.so.1" exactly as the CUDA runtime inside TensorFlow does, so
the library it reports is the one TensorFlow would get (LD_LIBRARY_PATH, the ldconfig cache,
WSL2's /usr/lib/wsl/lib). A toolkit stub (lib64/stubs/libcuda.so, linked for building only)
answers cuInit with CUDA_ERROR_STUB_LIBRARY; a crash of the library is a finding, not our end.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from tfdoctor.facts import CudaDriverFacts, ProbeIssue
from tfdoctor.host import Host
from tfdoctor.probes.driver import decode_cuda_version, run_probe_child

CUDA_CHILD = Path(__file__).with_name("_cuda_child.py")


def is_stub_path(path: str | None) -> bool:
    """A CUDA toolkit's link-time stub: .../lib64/stubs/libcuda.so (cuda-toolkit layout)."""
    if not path:
        return False
    return "stubs" in Path(path).parts[:-1]


def copied_over(library: str | None) -> str | None:
    """The driver's versioned libcuda beside a libcuda.so.1 that is a file of its own (maps name the
    target of a symlink, so a path ending in libcuda.so.1 is a regular file)."""
    if not library or Path(library).name != "libcuda.so.1" or library.startswith("/usr/lib/wsl/"):
        return None
    try:
        names = os.listdir(os.path.dirname(library))
    except OSError:
        return None
    versioned = sorted(n for n in names if re.fullmatch(r"libcuda\.so\.\d+\.\d+(?:\.\d+)*", n))
    return versioned[-1] if versioned else None


def probe_cuda_driver(host: Host, issues: list[ProbeIssue]) -> CudaDriverFacts:
    """cuInit, driver version and device count as libcuda.so.1 answers them."""
    outcome = run_probe_child(host, CUDA_CHILD, "cuda-driver", issues)
    library = outcome.markers.get("library")
    if outcome.data is None:
        # Only a child that was killed (signal, time limit) says something about the library.
        failure = outcome.failure or ""
        crash = (
            failure.removeprefix("crashed: ")
            if failure.startswith("crashed: ") or failure == "timed out"
            else None
        )
        return CudaDriverFacts(library=library, crash=crash, is_stub=is_stub_path(library))
    data: dict[str, Any] = outcome.data
    library = data.get("library") or library
    init = data.get("init_result")
    return CudaDriverFacts(
        library=library,
        load_error=data.get("load_error"),
        init_result=init,
        driver_version=decode_cuda_version(data.get("driver_version")),
        device_count=data.get("device_count"),
        is_stub=init == "CUDA_ERROR_STUB_LIBRARY" or is_stub_path(library),
        copied_over=copied_over(library),
        errors=dict(data.get("errors") or {}),
        device_names=tuple(n or "" for n in data.get("device_names") or ()),
        compute_capabilities=tuple(c or "" for c in data.get("compute_capabilities") or ()),
    )
