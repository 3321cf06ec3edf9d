"""Installed CUDA toolkits: every /usr/local/cuda-*, /opt/cuda*, CUDA_HOME / CUDA_PATH, a conda
environment's cuda-toolkit / cudatoolkit, and the nvcc on PATH.

Not what TensorFlow loads (that is the libraries probe): the toolkits a user installed, which
matter because before TF 2.14 they are where TensorFlow's CUDA libraries come from, and after
it a toolkit of another major on LD_LIBRARY_PATH shadows the pip wheels. Versions come from
files (version.json, version.txt, the nvidia_cuda_* dist-info names of a pip-built tree, the
directory name); nvcc is run only when the nvcc on PATH lies outside every toolkit found.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tfdoctor.facts import ToolkitFacts
from tfdoctor.host import Host

ROOTS = ("/usr/local", "/opt")
_DIR = re.compile(r"^cuda-?(\d+\.\d+)$")
_NVCC = re.compile(r"release \d+\.\d+, V(?P<v>\d+\.\d+\.\d+)")
_TXT = re.compile(r"CUDA Version (?P<v>\d+\.\d+(?:\.\d+)?)")
_DIST = re.compile(r"^nvidia_cuda_(?:nvcc|runtime)-(?P<v>\d+\.\d+\.\d+)\.dist-info$")
_CONDA = re.compile(r"^(?:cuda-toolkit|cudatoolkit|cuda-nvcc)-(?P<v>\d+\.\d+(?:\.\d+)?)-")


def probe_toolkits(host: Host) -> tuple[ToolkitFacts, ...]:
    """Every toolkit found, the one whose nvcc is on PATH first; never raises for a bad file."""
    found: dict[str, ToolkitFacts] = {}
    for root in ROOTS:
        base = host.path(root)
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            if name == "cuda" or _DIR.match(name):
                real = os.path.realpath(base / name)
                if os.path.isdir(real) and os.path.isdir(os.path.join(real, "bin")):
                    found.setdefault(_unroot(host, real), _toolkit(host, real, "dir"))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        value = host.env.get(var)
        if value and os.path.isdir(host.path(value)):
            real = os.path.realpath(host.path(value))
            key = _unroot(host, real)
            found[key] = ToolkitFacts(path=key, version=(found.get(key) or _toolkit(host, real, "")).version,
                                      via="cuda_home")
    conda = host.env.get("CONDA_PREFIX")
    if conda:
        kit = _conda(host, conda)
        if kit:
            found.setdefault(conda, kit)
    first = _nvcc_first(host, found)
    kits = list(found.values())
    if first is not None:
        kits = [first] + [k for k in kits if k.path != first.path]
    return tuple(kits)


def _unroot(host: Host, real: str) -> str:
    root = str(host.root)
    root = root.rstrip("/")
    return real[len(root):] if root and real.startswith(root + "/") else real


def _toolkit(host: Host, real: str, via: str) -> ToolkitFacts:
    return ToolkitFacts(path=_unroot(host, real), version=toolkit_version(Path(real)), via=via or "dir")


def toolkit_version(root: Path) -> str | None:
    """The toolkit's version from its own files, else from its directory name."""
    try:
        data = json.loads((root / "version.json").read_text(encoding="utf-8"))
        version = data.get("cuda", {}).get("version")
        if isinstance(version, str):
            return version
    except (OSError, ValueError, AttributeError):
        pass
    try:
        m = _TXT.search((root / "version.txt").read_text(encoding="utf-8", errors="replace"))
        if m:
            return m.group("v")
    except OSError:
        pass
    try:
        for name in sorted(os.listdir(root / "dist-info")):
            d = _DIST.match(name)
            if d:
                return d.group("v")
    except OSError:
        pass
    m = _DIR.match(root.name)
    return m.group(1) if m else None


def _conda(host: Host, prefix: str) -> ToolkitFacts | None:
    try:
        names = os.listdir(host.path(prefix) / "conda-meta")
    except OSError:
        return None
    for name in sorted(names):
        m = _CONDA.match(name)
        if m:
            return ToolkitFacts(path=prefix, version=m.group("v"), via="conda")
    return None


def _nvcc_first(host: Host, found: dict[str, ToolkitFacts]) -> ToolkitFacts | None:
    """The toolkit of the nvcc on PATH (marked via="nvcc"); nvcc runs only when it is outside all."""
    nvcc = host.which("nvcc")
    if not nvcc:
        return None
    real = os.path.realpath(nvcc)
    for path, kit in found.items():
        if real.startswith(os.path.realpath(host.path(path)) + os.sep):
            return ToolkitFacts(path=kit.path, version=kit.version, via="nvcc")
    result = host.run([nvcc, "--version"], timeout=5)
    m = _NVCC.search(result.stdout) if result.ok else None
    version = m.group("v") if m else None
    same = next((k for k in found.values() if version and k.version and
                 (k.version == version or version.startswith(k.version + "."))), None)
    if same is not None:
        return ToolkitFacts(path=same.path, version=version, via="nvcc")
    return ToolkitFacts(path=None, version=version, via="nvcc")
