"""Versions of a library file without asking it: its header, its pip package, its file name.

Used when the library cannot be asked (it crashed, it lacks the entry point, it gives only an API
level). Each answer says where it came from; a header is trusted only when its major matches the
soname's, and package metadata only for a file inside that pip package.
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from pathlib import Path

from tfdoctor.host import Host
from tfdoctor.probes import tfbuild

# Short name -> (header file names, version macros). One macro means the encoded CUDART_VERSION.
HEADERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "cudart": (("cuda_runtime_api.h",), ("CUDART_VERSION",)),
    "cublas": (("cublas_api.h",), ("CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH")),
    "cublasLt": (("cublas_api.h",), ("CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH")),
    "cufft": (("cufft.h",), ("CUFFT_VER_MAJOR", "CUFFT_VER_MINOR", "CUFFT_VER_PATCH")),
    "curand": (("curand.h",), ("CURAND_VER_MAJOR", "CURAND_VER_MINOR", "CURAND_VER_PATCH")),
    "cusolver": (
        ("cusolver_common.h",),
        ("CUSOLVER_VER_MAJOR", "CUSOLVER_VER_MINOR", "CUSOLVER_VER_PATCH"),
    ),
    "cusparse": (
        ("cusparse.h",),
        ("CUSPARSE_VER_MAJOR", "CUSPARSE_VER_MINOR", "CUSPARSE_VER_PATCH"),
    ),
    # cuDNN >= 8 keeps its version in cudnn_version.h (Debian packages: cudnn_version_v9.h);
    # cuDNN 7 had it in cudnn.h (research/compat.md section 5b).
    "cudnn": (
        ("cudnn_version.h", "cudnn_version_v{major}.h", "cudnn.h"),
        tfbuild.CUDNN_MACROS,
    ),
    "nccl": (("nccl.h",), tfbuild.NCCL_MACROS),
}

# The version macros sit in the first few KB of every header above; cuda_runtime_api.h is 650 KB.
_HEAD_BYTES = 32768

# Short name -> pip project (without the -cuXX suffix), e.g. nvidia-cudnn-cu12.
PIP_PROJECTS = {
    "cudart": "nvidia-cuda-runtime",
    "cublas": "nvidia-cublas",
    "cublasLt": "nvidia-cublas",
    "cufft": "nvidia-cufft",
    "curand": "nvidia-curand",
    "cusolver": "nvidia-cusolver",
    "cusparse": "nvidia-cusparse",
    "cupti": "nvidia-cuda-cupti",
    "cudnn": "nvidia-cudnn",
    "nccl": "nvidia-nccl",
    "nvjitlink": "nvidia-nvjitlink",
    "nvshmem": "nvidia-nvshmem",
}

_DIST_INFO = re.compile(r"^(.+?)-([^-]+)\.dist-info$")


def soname_major(soname: str) -> str | None:
    """ "9" for libcudnn.so.9, "11" for libcudart.so.11.0; None without a version."""
    _, _, version = soname.partition(".so.")
    return version.split(".")[0] or None


def header_version(host: Host, name: str, path: str, soname: str) -> str | None:
    """The version in the header installed beside the library (pip, toolkit) or in /usr/include."""
    if name not in HEADERS:
        return None
    files, macros = HEADERS[name]
    major = soname_major(soname)
    for directory in _include_dirs(host, path):
        for file in files:
            text = _head(os.path.join(directory, file.format(major=major)))
            version = tfbuild.header_version(text, macros) if text else None
            if version and (major is None or version.split(".")[0] == major):
                return version
    return None


def _include_dirs(host: Host, path: str) -> tuple[str, ...]:
    lib_dir = os.path.dirname(path)
    triplet = f"{platform.machine()}-linux-gnu"
    return (
        os.path.normpath(os.path.join(lib_dir, "..", "include")),
        str(host.path("/usr/include")),
        str(host.path(f"/usr/include/{triplet}")),
    )


def _head(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def metadata_version(
    name: str, path: str, cuda_major: str | None, packages: Mapping[str, str]
) -> str | None:
    """The pip package version for a file in site-packages/nvidia/<pkg>/lib, e.g. "9.3.0.75".

    `packages` are the target's normalised names -> versions; when it does not list the project,
    the dist-info directory names next to the nvidia/ package are read instead.
    """
    project = PIP_PROJECTS.get(name)
    parts = Path(path).parts
    if project is None or "nvidia" not in parts:
        return None
    site = Path(*parts[: len(parts) - parts[::-1].index("nvidia") - 1])
    wanted = [f"{project}-cu{cuda_major}", project] if cuda_major else [project]
    for candidate in wanted:
        if candidate in packages:
            return packages[candidate]
    installed = _dist_infos(str(site))
    return next((installed[c] for c in wanted if c in installed), None)


def _dist_infos(site: str) -> dict[str, str]:
    """Normalised project name -> version from the *.dist-info directory names of a site dir."""
    found = {}
    try:
        names = os.listdir(site)
    except OSError:
        return {}
    for entry in names:
        match = _DIST_INFO.match(entry)
        if match:
            found[re.sub(r"[-_.]+", "-", match.group(1)).lower()] = match.group(2)
    return found


def filename_version(soname: str, path: str) -> str | None:
    """The fuller version in the real file's name (libcudnn.so.9.1.0 gives 9.1.0)."""
    name = os.path.basename(os.path.realpath(path))
    stem, _, wanted = soname.partition(".so.")
    prefix = stem + ".so."
    if not name.startswith(prefix):
        return None
    version = name[len(prefix) :]
    if not re.fullmatch(r"\d+(\.\d+)*", version) or version.count(".") <= wanted.count("."):
        return None
    return version
