"""The target interpreter (`--python`) and its TensorFlow, learned without importing TensorFlow.

A standalone child (`_target_child.py`) runs in the target interpreter under a time limit and
reports its packages and where the `tensorflow` package lives; this side then reads the build
facts from the files the wheel ships (tfbuild.py parses them) and TF's own ELF RUNPATH (elf.py).
The full run's smoke child is where TensorFlow is imported (and get_build_info() asked).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tfdoctor.docload import DocumentError, one_line, parse_document
from tfdoctor.facts import Distribution, ProbeIssue, PythonFacts, TensorFlowFacts
from tfdoctor.host import MAX_OUTPUT, CommandResult, Host
from tfdoctor.probes import tfbuild
from tfdoctor.probes.elf import expand_origin, read_dynamic

CHILD = Path(__file__).with_name("_target_child.py")
PROBE = "target"
"""Importing TensorFlow cold takes seconds to tens of seconds on a slow disk."""

BUILD_INFO = "python/platform/build_info.py"
CUDA_CONFIG = "include/external/local_config_cuda/cuda/cuda/cuda_config.h"
NCCL_CONFIG = "include/external/local_config_nccl/nccl_config.h"
NVSHMEM_CONFIG = "include/external/nvshmem/nvshmem_config.h"
# Where wheels bundle the headers they were compiled against (hermetic CUDA builds, TF >= 2.18,
# use external/cuda_*; older ones third_party/gpus). Checked in order; the first that parses wins.
CUDNN_HEADERS = (
    "include/external/cuda_cudnn/include/cudnn_version.h",
    "include/third_party/gpus/cudnn/include/cudnn_version.h",
    "include/third_party/gpus/cudnn/cudnn_version.h",
    "include/external/local_config_cuda/cuda/cudnn/cudnn_version.h",
    "include/external/local_config_cuda/cuda/cuda/include/cudnn_version.h",
)
NCCL_HEADERS = (
    "include/external/cuda_nccl/include/nccl.h",
    "include/external/local_config_nccl/nccl/nccl.h",
    "include/third_party/nccl/nccl.h",
)
# The shared object that holds TF's DSO loader (research/compat.md section 8c): its RUNPATH is
# what dlopen uses to find the pip nvidia/*/lib directories.
FRAMEWORK = "libtensorflow_framework.so.2"


def probe_target(
    host: Host, issues: list[ProbeIssue]
) -> tuple[PythonFacts, TensorFlowFacts | None]:
    """Python facts of host.python and its TensorFlow (None when none is installed)."""
    data, error = run_child(host, issues, "static", PROBE, host.timeout)
    if data is not None:
        wrong = malformed(data)
        if wrong is None:
            try:
                return python_facts(host.python, data), tensorflow_facts(data)
            except (KeyError, TypeError, ValueError, AttributeError, OSError) as exc:
                wrong = f"{type(exc).__name__}: {exc}"
        # Not "no TensorFlow": an answer we cannot read says nothing about what is installed.
        error = (f"{host.python} is not a usable Python interpreter: its report is malformed "
                 f"({one_line(wrong, 160)}) [report: {one_line(json.dumps(data)[:EVIDENCE], EVIDENCE)}]")
        issues.append(ProbeIssue(PROBE, "error", error))
    return PythonFacts(executable=host.python, error=error), None


EVIDENCE = 400
"""Characters of a child's output kept as evidence in a message (the file keeps the rest)."""


def malformed(data: Mapping[str, Any]) -> str | None:
    """Why the child's report does not have the shape `_target_child.py` writes; None if it does.

    The child runs in an interpreter we do not control (a wrapper script, a sitecustomize that
    prints): its answer is checked field by field before any of it becomes a fact.
    """
    dists = data.get("distributions")
    if not isinstance(dists, list):
        return "no package list"
    for key in ("executable", "version", "implementation", "prefix", "tensorflow_package"):
        if not isinstance(data.get(key), str | None):
            return f"{key} is not a string"
    for key in ("is_venv", "is_conda"):
        if not isinstance(data.get(key), bool | None):
            return f"{key} is not true or false"
    if not _strings(data.get("site_packages", [])):
        return "site_packages is not a list of strings"
    if not isinstance(data.get("marker_environment"), dict | None):
        return "marker_environment is not an object"
    for dist in dists:
        if not isinstance(dist, dict) or not isinstance(dist.get("normalised"), str):
            return "a package without a name"
        for key in ("name", "version", "location", "metadata_dir"):
            if not isinstance(dist.get(key), str | None):
                return f"package {key} is not a string"
        if not _strings(dist.get("requires_dist", [])):
            return "requires_dist is not a list of strings"
    return None


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def run_child(
    host: Host, issues: list[ProbeIssue], mode: str, probe: str, timeout: float
) -> tuple[dict[str, Any] | None, str | None]:
    """Run the child in the target interpreter: (its JSON object, None) or (None, why not)."""
    result = host.run([host.python, "-I", str(CHILD), mode], timeout=timeout)
    if result.truncated:  # the answer may be cut; say so rather than trust it silently
        issues.append(ProbeIssue(probe, "error", (
            f"{host.python} printed {result.output_bytes / 1e6:.0f} MB on "
            f"{' and '.join(result.truncated)}; only the last {MAX_OUTPUT // (1024 * 1024)} MiB "
            "of each were read")))
    if result.ok:
        data = _last_json_object(result.stdout)
        if data is not None:
            return data, None
        message = f"{host.python} is not a usable Python interpreter: it printed no JSON report"
        if result.stdout.strip():
            message += f" [stdout: {one_line(result.stdout.strip()[-EVIDENCE:], EVIDENCE)}]"
    else:
        message = f"{host.python}: {result.describe_failure()}"
    kind = _failure_kind(result)
    if kind == "timeout":
        message += f" after {timeout:g} s"
    tail = _tail(result.stderr)
    if tail:
        message += f" [stderr: {tail}]"
    issues.append(ProbeIssue(probe, kind, message))
    return None, message


def _failure_kind(result: CommandResult) -> str:
    if result.timed_out:
        return "timeout"
    if result.signal_name:
        return "crash"
    return "error"


def _last_json_object(stdout: str) -> dict[str, Any] | None:
    """The last line that parses as JSON, if it is an object (strict and bounded: docload)."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            data = parse_document(line)
        except DocumentError:
            continue
        return data if isinstance(data, dict) else None
    return None


def _tail(text: str, lines: int = 3, chars: int = EVIDENCE) -> str:
    return one_line(" | ".join(text.strip().splitlines()[-lines:])[-chars:], chars)


def python_facts(executable: str, data: Mapping[str, Any]) -> PythonFacts:
    """PythonFacts from the child's report; the first distribution of a name on sys.path wins."""
    packages: dict[str, str] = {}
    for dist in data.get("distributions", ()):
        packages.setdefault(dist["normalised"], dist.get("version") or "unknown")
    return PythonFacts(
        executable=data.get("executable") or executable,
        version=data.get("version"),
        implementation=data.get("implementation"),
        prefix=data.get("prefix"),
        is_venv=data.get("is_venv"),
        is_conda=data.get("is_conda"),
        site_packages=tuple(data.get("site_packages", ())),
        packages=dict(sorted(packages.items())),
        preloads=tuple(str(p) for p in data.get("preloads") or ()),
        conda_packages=_conda_packages(data.get("conda_packages")),
    )


def _conda_packages(value: Any) -> dict[str, str] | None:
    """conda-meta's packages as the child read them; None outside conda (or a malformed list)."""
    if not isinstance(value, dict):
        return None
    return {str(k): str(v) for k, v in sorted(value.items())}


def tensorflow_facts(data: Mapping[str, Any]) -> TensorFlowFacts | None:
    """What the installed TensorFlow is and how it was built, from its metadata and files."""
    tf_dists = [d for d in data.get("distributions", ()) if "requires_dist" in d]
    package_dir = data.get("tensorflow_package")
    if not tf_dists and not package_dir:
        return None
    files_from = _files_from(tf_dists, package_dir) if len(tf_dists) > 1 else None
    primary = _primary(tf_dists, files_from, package_dir)
    requirements, pins = tfbuild.parse_requirements(
        primary.get("requires_dist", ()) if primary else (), data.get("marker_environment")
    )
    build = read_build(package_dir) if package_dir else {}
    return TensorFlowFacts(
        distributions=tuple(
            Distribution(d["normalised"], d.get("version") or "unknown", d.get("location"))
            for d in tf_dists
        ),
        version=primary.get("version") if primary else None,
        package_dir=package_dir,
        files_from=files_from,
        requirements=requirements,
        and_cuda_pins=pins,
        runpath=read_runpath(package_dir) if package_dir else (),
        **build,
    )


def _primary(
    tf_dists: list[dict[str, Any]], files_from: str | None, package_dir: str | None
) -> dict[str, Any] | None:
    """The distribution whose files are the importable package (best evidence first)."""
    if files_from:
        return next(d for d in tf_dists if d["normalised"] == files_from)
    location = os.path.dirname(package_dir) if package_dir else None
    return next(
        (d for d in tf_dists if d.get("location") == location), tf_dists[0] if tf_dists else None
    )


def _files_from(tf_dists: list[dict[str, Any]], package_dir: str | None) -> str | None:
    """Which of several TF distributions wrote the build_info.py on disk (RECORD hash match).

    pip lets tensorflow and tensorflow-cpu (or a leftover tensorflow-gpu) overwrite each other's
    files in one `tensorflow/` directory; the last install wins, and the RECORD says which.
    """
    import base64
    import hashlib

    if not package_dir:
        return None
    try:
        digest = hashlib.sha256(Path(package_dir, BUILD_INFO).read_bytes()).digest()
    except OSError:
        return None
    wanted = "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    entry = f"{Path(package_dir).name}/{BUILD_INFO},"
    matches = []
    for dist in tf_dists:
        record = _read(Path(dist.get("metadata_dir", ""), "RECORD"))
        line = next((ln for ln in (record or "").splitlines() if ln.startswith(entry)), None)
        if line and line.split(",")[1] == wanted:
            matches.append(dist["normalised"])
    return matches[0] if len(matches) == 1 else None


def read_build(package_dir: str) -> dict[str, Any]:
    """TensorFlowFacts build fields from build_info.py, cuda_config.h and the bundled headers."""
    root = Path(package_dir)
    sources = []
    info_text = _read(root / BUILD_INFO)
    info = tfbuild.parse_build_info(info_text) if info_text else None
    if info:
        sources.append("build_info.py")
    defines: dict[str, str] = {}
    for name in (CUDA_CONFIG, NCCL_CONFIG, NVSHMEM_CONFIG):
        text = _read(root / name)
        if text is not None:
            defines.update(tfbuild.parse_defines(text))
            sources.append(Path(name).name)
    info = info or {}
    cuda_version = info.get("cuda_version") or defines.get("TF_CUDA_VERSION") or None
    cudnn_version = (
        _first_version(root, CUDNN_HEADERS, tfbuild.cudnn_header_version, sources)
        if cuda_version
        else None
    )
    nccl_version = (
        _first_version(root, NCCL_HEADERS, tfbuild.nccl_header_version, sources)
        if cuda_version
        else None
    )
    is_cuda = info.get("is_cuda_build")
    if is_cuda is None and (info or defines):
        is_cuda = bool(cuda_version)
    caps = (
        info.get("cuda_compute_capabilities")
        or defines.get("TF_CUDA_COMPUTE_CAPABILITIES")
        or defines.get("TF_CUDA_CAPABILITIES")
    )
    return {
        "is_cuda_build": is_cuda,
        "cuda_version": str(cuda_version) if cuda_version else None,
        "cudnn_version": cudnn_version
        or _str_or_none(info.get("cudnn_version") or defines.get("TF_CUDNN_VERSION")),
        "nccl_version": nccl_version,
        "compute_capabilities": tfbuild.compute_capabilities(caps),
        # CPU wheels ship the same config headers (nccl_config.h ...) yet load nothing.
        "sonames": tfbuild.sonames(defines) if is_cuda else {},
        "build_info_source": ", ".join(sources) or None,
    }


def _first_version(
    root: Path,
    candidates: tuple[str, ...],
    parse: Callable[[str], str | None],
    sources: list[str],
) -> str | None:
    for name in candidates:
        text = _read(root / name)
        version = parse(text) if text else None
        if version:
            sources.append(Path(name).name)
            return version
    return None


def read_runpath(package_dir: str) -> tuple[str, ...]:
    """RUNPATH of TF's framework library: $ORIGIN expanded, normalised, de-duplicated in order."""
    path = Path(package_dir, FRAMEWORK)
    info = read_dynamic(path)
    if info is None:
        return ()
    expanded = (os.path.normpath(p) for p in expand_origin(info.runpath, path))
    return tuple(dict.fromkeys(expanded))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _str_or_none(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
