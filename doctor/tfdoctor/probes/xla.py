"""Where XLA will find ptxas and libdevice for this TensorFlow, following XLA's own search.

XLA (xla/stream_executor/cuda/subprocess_compilation.cc, tsl/platform/cuda_root_path.cc,
research/compat.md section 8d): ptxas is looked for in <--xla_gpu_cuda_data_dir>/bin, then on
$PATH (PreferPtxasFromPath() is true in open-source builds), then in <root>/bin for each
CandidateCudaRoots() entry; libdevice in <root>/nvvm/libdevice for the data dir and then each
candidate root. Candidate roots for a wheel: /usr/local/cuda, /opt/cuda, and, relative to TF's
shared objects, ../nvidia/cuda_nvcc and ../../nvidia/cuda_nvcc (nvidia/cu13 for CUDA 13
builds), plus the conda prefix.
"""

from __future__ import annotations

import os
import re
import shlex

from tfdoctor.facts import ProbeIssue, PythonFacts, TensorFlowFacts, XlaFacts
from tfdoctor.host import Host
from tfdoctor.probes.libraries import is_cuda_tf
from tfdoctor.probes.libresolve import unique

LIBDEVICE = os.path.join("nvvm", "libdevice", "libdevice.10.bc")
_DATA_DIR_FLAG = "--xla_gpu_cuda_data_dir"
_PTXAS_RELEASE = re.compile(r"release\s+(\d+\.\d+),\s+V(\d+(?:\.\d+)+)")


def parse_data_dir(xla_flags: str | None) -> str | None:
    """The value of --xla_gpu_cuda_data_dir in XLA_FLAGS (the last one wins), or None."""
    if not xla_flags:
        return None
    try:
        words = shlex.split(xla_flags)
    except ValueError:
        words = xla_flags.split()
    value = None
    for i, word in enumerate(words):
        if word.startswith(_DATA_DIR_FLAG + "="):
            value = word.split("=", 1)[1]
        elif word == _DATA_DIR_FLAG and i + 1 < len(words):
            value = words[i + 1]
    return value or None


def parse_ptxas_version(text: str) -> str | None:
    """ "12.5.82" from `ptxas --version` ("Cuda compilation tools, release 12.5, V12.5.82")."""
    match = _PTXAS_RELEASE.search(text)
    return match.group(2) if match else None


def candidate_roots(host: Host, python: PythonFacts, tf: TensorFlowFacts) -> tuple[str, ...]:
    """XLA's CandidateCudaRoots() for this wheel, in order (without the data dir)."""
    roots = [str(host.path("/usr/local/cuda")), str(host.path("/opt/cuda"))]
    if tf.package_dir:
        flavour = "cu13" if (tf.cuda_version or "").startswith("13") else "cuda_nvcc"
        for up in ("..", os.path.join("..", "..")):
            roots.append(os.path.normpath(os.path.join(tf.package_dir, up, "nvidia", flavour)))
    if host.env.get("CONDA_PREFIX"):
        roots.append(host.env["CONDA_PREFIX"])
    if python.is_conda and python.prefix:
        roots.append(python.prefix)
    return unique(roots)


def probe_xla(
    host: Host, issues: list[ProbeIssue], python: PythonFacts, tf: TensorFlowFacts | None
) -> XlaFacts | None:
    """ptxas (with its version) and libdevice as XLA would find them; None without a CUDA TF."""
    if tf is None or not is_cuda_tf(tf):
        return None
    data_dir = parse_data_dir(host.env.get("XLA_FLAGS"))
    roots = candidate_roots(host, python, tf)
    path_dirs = tuple(d for d in host.env.get("PATH", "").split(os.pathsep) if d)
    ptxas, via = _find_ptxas(data_dir, path_dirs, roots)
    library_roots = ((data_dir,) if data_dir else ()) + roots
    libdevice = next(
        (
            os.path.join(r, LIBDEVICE)
            for r in library_roots
            if os.path.isdir(os.path.join(r, "nvvm", "libdevice"))
        ),
        None,
    )
    if libdevice and not os.path.isfile(libdevice):
        libdevice = None  # XLA takes the first nvvm/libdevice dir, then fails on the missing file
    return XlaFacts(
        xla_flags_data_dir=data_dir,
        xla_flags_data_dir_exists=os.path.isdir(data_dir) if data_dir else None,
        ptxas=ptxas,
        ptxas_version=_ptxas_version(host, issues, ptxas) if ptxas else None,
        ptxas_found_via=via,
        libdevice=libdevice,
        searched=library_roots,
    )


def _find_ptxas(
    data_dir: str | None, path_dirs: tuple[str, ...], roots: tuple[str, ...]
) -> tuple[str | None, str | None]:
    stages = [
        ("xla_flags", (data_dir,) if data_dir else ()),
        ("path", path_dirs),
        ("cuda_root", tuple(os.path.join(r, "bin") for r in roots)),
    ]
    for via, dirs in stages:
        for directory in dirs:
            candidate = os.path.join(
                directory if via != "xla_flags" else os.path.join(directory, "bin"), "ptxas"
            )
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate, via
    return None, None


def _ptxas_version(host: Host, issues: list[ProbeIssue], ptxas: str) -> str | None:
    result = host.run([ptxas, "--version"], timeout=min(host.timeout, 5.0))
    if result.ok:
        return parse_ptxas_version(result.stdout)
    kind = "timeout" if result.timed_out else "error"
    issues.append(ProbeIssue("xla", kind, f"{ptxas} --version: {result.describe_failure()}"))
    return None
