"""PyTorch's `python -m torch.utils.collect_env` report (and the copies vLLM and others ship).

Its lines are "Key: value"; read only inside a report, which starts at "Collecting environment
information..." or "PyTorch version:" and ends at a code fence. "CUDA runtime version" is what
`nvcc --version` printed (collect_env's get_running_cuda_version), so it is the toolkit's nvcc;
"cuDNN version" lists library files found through ldconfig; "GPU models and configuration" is
`nvidia-smi -L`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from tfdoctor.triage.observe import Observation

from . import pip_list, uname
from ._text import Trigger, Walk, is_fence

NAME = "collect_env"

TF_CPU_FLAGS = frozenset(
    {
        "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512cd", "avx512bw", "avx512dq",
        "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16",
        "amx_int8",
    }
)  # fmt: skip
"""CPU features TensorFlow's cpu_feature_guard checks or its kernels dispatch on."""

_START = ("Collecting environment information", "PyTorch version:")
_GPU = re.compile(r"GPU (\d{1,3}): (.{1,200}?)(?: \(UUID: [^)]{1,80}\))?")
_NVCC = re.compile(r"\d+\.\d+\.\d+")
_DRIVER = re.compile(r"\d+\.\d+(?:\.\d+)?")
_PLATFORM = re.compile(
    r"(Linux)-(.{1,120}?)-(x86_64|aarch64|ppc64le|s390x)-with-(?:glibc([\d.]{1,10})|.{0,60})"
)
_PIP_LINE = re.compile(r"\[(?:pip3?|conda)\] (.{1,300})")
# Outside a report, only these lines are read
_TRIGGER = Trigger(("Collecting environment information", "PyTorch version:", "Versions of relevant libraries",
                     "Flags:", "flags"))
_NOT_COLLECTED = ("Could not collect", "N/A", "No CUDA", "None", "")


def _obs(path: str, value: Any, line: int) -> Observation:
    return Observation(path, value, line, NAME)


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """Observations from every collect_env report in the ticket."""
    inside = False
    field = ""  # the multi-line field being read: "gpu", "cudnn", "cpu", "libs"
    gpus = 0
    gpu_line = 0
    conda_said = False
    flags_seen: set[tuple[str, ...]] = set()
    walk = Walk(lines, _TRIGGER, lambda: inside)
    for number, s in walk:
        t = s.strip()
        if t.startswith(_START):
            inside, field, gpus = True, "", 0
            continue
        if t.startswith("Versions of relevant libraries"):
            inside, field = True, "libs"
            continue
        if not inside:
            if t[:6] in ("Flags:", "flags\t", "flags ", "flags:"):
                yield from _flags(t, number, flags_seen)
            continue
        if is_fence(t):
            inside = False
            continue
        if t.startswith("====="):  # newer reports frame each section with banners
            continue
        if field == "gpu" and t.startswith("GPU "):
            gpus += 1
            yield from _gpu(t, number)
            continue
        if field == "gpu":
            yield _obs("driver.device_count", gpus, gpu_line)
            field = ""
        if field == "cudnn" and t.startswith("/"):
            yield _obs("library.file", t, number)
            continue
        if field == "cpu":
            if not t:
                field = ""
                continue
            yield from _cpu(t, number, flags_seen)
            continue
        if field == "libs" and t.startswith("["):
            m = _PIP_LINE.fullmatch(t)
            if m:
                conda = t.startswith("[conda]")
                yield from _library(m.group(1), number)
                if conda and not conda_said and m.group(1) != "Could not collect":
                    conda_said = True
                    yield _obs("python.conda", True, number)
            continue
        key, _, value = t.partition(":")
        field = ""
        yield from _field(key, value.strip(), number)
        if key == "GPU models and configuration":
            field, gpus, gpu_line = "gpu", 0, number
            if value.strip().startswith("GPU "):
                gpus = 1
                yield from _gpu(value.strip(), number)
            elif value.strip() in _NOT_COLLECTED:
                field = ""
        elif key == "cuDNN version":
            field = "cudnn"
            if value.strip().startswith("/"):
                yield _obs("library.file", value.strip(), number)
        elif key in ("CPU", "CPU Info") and not value.strip():
            field = "cpu"
        elif key == "Versions of relevant libraries":
            field = "libs"
    if field == "gpu":
        yield _obs("driver.device_count", gpus, gpu_line)


def _gpu(t: str, number: int) -> Iterator[Observation]:
    m = _GPU.fullmatch(t)
    if m:
        yield _obs("driver.gpu", {"index": int(m.group(1)), "name": m.group(2)}, number)


def _field(key: str, value: str, number: int) -> Iterator[Observation]:
    if value in _NOT_COLLECTED:
        return
    if key == "OS":
        yield from _os(value, number)
    elif key == "Libc version" and value.startswith("glibc-"):
        yield _obs("platform.glibc", value[len("glibc-") :], number)
    elif key == "Python version":
        version = value.split()[0]
        if re.fullmatch(r"\d\.\d{1,2}(?:\.\d{1,3})?", version):
            yield _obs("python.version", version, number)
    elif key == "Python platform":
        m = _PLATFORM.fullmatch(value)
        if m:
            yield _obs("platform.system", "Linux", number)
            yield _obs("platform.release", m.group(2), number)
            yield _obs("platform.machine", m.group(3), number)
            if m.group(4):
                yield _obs("platform.glibc", m.group(4), number)
            yield from uname.wsl_observations(m.group(2), number, NAME)
        elif value.startswith("Windows-"):
            yield _obs("platform.system", "Windows", number)
    elif key == "CUDA runtime version" and _NVCC.fullmatch(value):
        yield _obs("toolkit.nvcc_version", value, number)
    elif key == "Nvidia driver version" and _DRIVER.fullmatch(value):
        yield _obs("driver.driver_version", value, number)


def _os(value: str, number: int) -> Iterator[Observation]:
    m = re.fullmatch(r"(.{1,200}?) \((x86_64|aarch64|ppc64le|s390x|arm64)\)", value)
    distro = m.group(1) if m else value
    if m:
        yield _obs("platform.machine", m.group(2), number)
    if distro.startswith("Microsoft Windows"):
        yield _obs("platform.system", "Windows", number)
    elif distro.startswith(("macOS", "Mac OSX")):
        yield _obs("platform.system", "Darwin", number)
    else:
        yield _obs("platform.distro", distro, number)


def _cpu(t: str, number: int, flags_seen: set[tuple[str, ...]]) -> Iterator[Observation]:
    key, _, value = t.partition(":")
    if key == "Model name" and value.strip():
        yield _obs("platform.cpu_model", value.strip(), number)
    elif key == "Flags":
        yield from _flags(t, number, flags_seen)
    elif t.startswith("Name="):  # Windows: wmic cpu get Name
        yield _obs("platform.cpu_model", t[len("Name=") :].strip(), number)


def _flags(t: str, number: int, seen: set[tuple[str, ...]]) -> Iterator[Observation]:
    """platform.cpu_flags from lscpu's "Flags:" or /proc/cpuinfo's "flags :" (once per distinct set)."""
    value = t.partition(":")[2].split()
    if "fpu" not in value[:3]:
        return  # not the kernel's CPU flag list
    flags = tuple(flag for flag in value if flag in TF_CPU_FLAGS)
    if flags not in seen:
        seen.add(flags)
        yield _obs("platform.cpu_flags", flags, number)


def _library(text: str, number: int) -> Iterator[Observation]:
    row = pip_list.parse_row(text, "freeze") or pip_list.parse_row(text, "conda")
    row = row or pip_list.parse_row(text, "pip")
    if row:
        yield from pip_list.package(row[0], row[1], number, NAME)
