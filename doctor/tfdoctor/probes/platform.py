"""The platform (OS, distro, glibc, CPU features, container, WSL) and the environment allowlist.

Files are read under host.root (/etc/os-release, /proc/cpuinfo, /proc/1/cgroup ...), so tests run
this against a fake root; uname and glibc come from the running system.
"""

from __future__ import annotations

import os
import platform as _platform
import re

from tfdoctor.facts import NodeFacts, PlatformFacts, ProbeIssue
from tfdoctor.host import Host

PROBE = "platform"

# The only environment variables that may enter the facts: each changes how TensorFlow, CUDA,
# NCCL or XLA find or use GPUs. An allowlist, never a denylist, so no secret can leak into a
# shared report.
ENV_ALLOWLIST = (
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PATH",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_ROOT",
    "CUDNN_PATH",
    "CONDA_PREFIX",
    "VIRTUAL_ENV",
    "XLA_FLAGS",
    "TF_XLA_FLAGS",
    "TF_CPP_MIN_LOG_LEVEL",
    "TF_CPP_MAX_VLOG_LEVEL",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "TF_GPU_ALLOCATOR",
    "TF_USE_LEGACY_KERAS",
    "TF_ENABLE_ONEDNN_OPTS",
    "TF_ENABLE_AUTO_MIXED_PRECISION",
    "TF_GPU_THREAD_MODE",
    "CUDA_DEVICE_ORDER",
    "CUDA_FORCE_PTX_JIT",
    "CUDA_CACHE_PATH",
    "CUDA_CACHE_MAXSIZE",
    "CUDA_MODULE_LOADING",
    "NCCL_DEBUG",
    "NCCL_P2P_DISABLE",
    "NCCL_IB_DISABLE",
    "NCCL_SOCKET_IFNAME",
    "TF_CONFIG",
    "KERAS_BACKEND",
)

# x86 CPU features that decide whether a TF wheel runs (AVX since TF 1.6; official wheels are
# built with -mavx; oneDNN uses AVX-512 / VNNI / BF16 / AMX when present). /proc/cpuinfo names.
CPU_FLAGS = (
    "sse3",
    "ssse3",
    "sse4_1",
    "sse4_2",
    "popcnt",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512cd",
    "avx512bw",
    "avx512dq",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "avx_vnni",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    # aarch64 ("Features" line): what tensorflow-cpu-aws / oneDNN ACL builds use.
    "asimd",
    "sve",
    "sve2",
    "bf16",
    "i8mm",
)
_CPUINFO_ALIASES = {"pni": "sse3"}  # the kernel calls SSE3 "pni" (Prescott New Instructions)

_CONTAINER_CGROUP = re.compile(r"docker|kubepods|containerd|libpod|lxc|podman|/ecs/|garden")


def probe_node(host: Host) -> NodeFacts:
    """The host name and the user running tfdoctor: recorded so that redaction can hide them in
    these facts on any machine, not only on this one."""
    import socket

    try:
        name: str | None = socket.gethostname() or None
    except OSError:
        name = None
    user = host.env.get("USER") or host.env.get("LOGNAME") or None
    home = (host.env.get("HOME") or "").rstrip("/") or None
    return NodeFacts(host=name, user=user, home=home)


def probe_env(host: Host) -> dict[str, str]:
    """The allowlisted environment variables that are set, and nothing else."""
    return {name: host.env[name] for name in ENV_ALLOWLIST if name in host.env}


def probe_platform(host: Host, issues: list[ProbeIssue]) -> PlatformFacts:
    """OS, distro, kernel, glibc, TF-relevant CPU features, container and WSL."""
    uname = _platform.uname()
    cpuinfo = host.read_text("/proc/cpuinfo")
    if cpuinfo is None and uname.system == "Linux":
        issues.append(ProbeIssue(PROBE, "error", f"cannot read {host.path('/proc/cpuinfo')}"))
    os_release = host.read_text("/etc/os-release") or host.read_text("/usr/lib/os-release")
    return PlatformFacts(
        system=uname.system or None,
        release=uname.release or None,
        machine=uname.machine or None,
        distro=parse_os_release(os_release) if os_release else None,
        glibc=glibc_version(),
        cpu_flags=parse_cpu_flags(cpuinfo) if cpuinfo is not None else None,
        in_container=in_container(host) if uname.system == "Linux" else False,
        is_wsl=is_wsl(host) if uname.system == "Linux" else False,
        wsl_version=wsl_version(host) if uname.system == "Linux" else None,
        wsl_driver_libs=wsl_driver_libs(host) if uname.system == "Linux" else None,
        container_toolkit=container_toolkit(host) if uname.system == "Linux" else None,
    )


_CTK_VERSION = re.compile(r"NVIDIA Container Toolkit CLI version (?P<v>\d+\.\d+\.\d+)")


def container_toolkit(host: Host) -> str | None:
    """The NVIDIA Container Toolkit's version from `nvidia-ctk --version`, when it is on PATH."""
    ctk = host.which("nvidia-ctk")
    if ctk is None:
        return None
    result = host.run([ctk, "--version"], timeout=3.0)
    match = _CTK_VERSION.search(result.stdout or "") if result.ok else None
    return match.group("v") if match else None


def wsl_driver_libs(host: Host) -> tuple[str, ...] | None:
    """The names in /usr/lib/wsl/lib (sorted, at most 200); None without the directory."""
    try:
        names = os.listdir(host.path("/usr/lib/wsl/lib"))
    except OSError:
        return None
    return tuple(sorted(names)[:200])


def parse_os_release(text: str) -> str | None:
    """The distro from os-release: PRETTY_NAME, else NAME VERSION_ID."""
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip("\"'")
    if values.get("PRETTY_NAME"):
        return values["PRETTY_NAME"]
    name = " ".join(v for v in (values.get("NAME"), values.get("VERSION_ID")) if v)
    return name or None


def parse_cpu_flags(cpuinfo: str) -> tuple[str, ...]:
    """The TF-relevant features of the first CPU in /proc/cpuinfo, in CPU_FLAGS order."""
    match = re.search(r"^(?:flags|Features)\s*:(.*)$", cpuinfo, re.MULTILINE)
    if not match:
        return ()
    present = {_CPUINFO_ALIASES.get(f, f) for f in match.group(1).split()}
    return tuple(f for f in CPU_FLAGS if f in present)


def glibc_version() -> str | None:
    """ "2.36" from confstr; None on musl, macOS and Windows."""
    try:
        value = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        return None
    if not value or not value.startswith("glibc "):
        return None
    return value.split()[1]


def in_container(host: Host) -> bool:
    """Docker, Podman, containerd / Kubernetes, LXC: their marker files, cgroups or environment."""
    if host.path("/.dockerenv").exists() or host.path("/run/.containerenv").exists():
        return True
    if "KUBERNETES_SERVICE_HOST" in host.env or host.env.get("container"):
        return True
    cgroup = host.read_text("/proc/1/cgroup") or ""
    return bool(_CONTAINER_CGROUP.search(cgroup))


def wsl_version(host: Host) -> int | None:
    """2 for WSL 2 kernels ("...-microsoft-standard-WSL2", "...-microsoft-standard"), 1 for WSL 1's
    ("4.4.0-19041-Microsoft"); None off WSL."""
    text = host.read_text("/proc/sys/kernel/osrelease") or ""
    if "microsoft" not in text.lower():
        return None
    return 2 if ("microsoft-standard" in text.lower() or "wsl2" in text.lower()) else 1


def is_wsl(host: Host) -> bool:
    """WSL kernels say "microsoft" in their release (WSL2: "...-microsoft-standard-WSL2")."""
    for name in ("/proc/sys/kernel/osrelease", "/proc/version"):
        text = host.read_text(name)
        if text and "microsoft" in text.lower():
            return True
    return False
