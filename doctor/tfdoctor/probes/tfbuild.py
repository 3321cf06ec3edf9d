"""Pure parsers for the build facts a TensorFlow wheel ships as text: no I/O, no TensorFlow import.

Sources (research/compat.md sections 1, 5b, 8): `tensorflow/python/platform/build_info.py`
(what `tf.sysconfig.get_build_info()` returns; TF 2.22 dropped the CUDA keys from it),
`tensorflow/include/external/local_config_cuda/cuda/cuda/cuda_config.h` (the TF_*_VERSION strings
the DSO loader turns into sonames; every wheel ships it), the bundled cuDNN / NCCL headers, and
the wheel's `Requires-Dist` lines.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from typing import Any

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

# Keys of TF <= 2.3's module-level build_info constants, renamed to the later dict keys.
_OLD_BUILD_INFO_KEYS = {
    "cuda_version_number": "cuda_version",
    "cudnn_version_number": "cudnn_version",
}

_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)[ \t]*(.*?)\s*$", re.MULTILINE)
_CONSTEXPR = re.compile(r"constexpr\s+static\s+char\s+(\w+)\s*\[\]\s*=\s*\"([^\"]*)\"")

# Library short name -> (soname stem, cuda_config.h macro). XLA/TSL dso_loader.cc builds
# "lib<name>.so.<version>" from these macros; cublasLt shares TF_CUBLAS_VERSION.
SONAME_MACROS: dict[str, tuple[str, str]] = {
    "cudart": ("libcudart.so", "TF_CUDART_VERSION"),
    "cublas": ("libcublas.so", "TF_CUBLAS_VERSION"),
    "cublasLt": ("libcublasLt.so", "TF_CUBLAS_VERSION"),
    "cufft": ("libcufft.so", "TF_CUFFT_VERSION"),
    "curand": ("libcurand.so", "TF_CURAND_VERSION"),
    "cusolver": ("libcusolver.so", "TF_CUSOLVER_VERSION"),
    "cusparse": ("libcusparse.so", "TF_CUSPARSE_VERSION"),
    "cupti": ("libcupti.so", "TF_CUPTI_VERSION"),
    "cudnn": ("libcudnn.so", "TF_CUDNN_VERSION"),
    "nccl": ("libnccl.so", "TF_NCCL_VERSION"),
    "nvshmem": ("libnvshmem_host.so", "XLA_NVSHMEM_VERSION"),
}

AND_CUDA = "and-cuda"


def parse_build_info(text: str) -> dict[str, Any] | None:
    """The build_info dict of a build_info.py, read with ast (never executed); None if unparsable.

    TF >= 2.4 writes `build_info = collections.OrderedDict([(key, value), ...])`; TF <= 2.3 wrote
    module-level constants (`is_cuda_build = True`, `cuda_version_number = '10.1'`).
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    info: dict[str, Any] = {}
    for node in tree.body:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        name = node.targets[0].id
        if name == "build_info":
            info.update(_literal_mapping(node.value))
            continue
        try:
            info[_OLD_BUILD_INFO_KEYS.get(name, name)] = ast.literal_eval(node.value)
        except ValueError:
            continue
    return info or None


def _literal_mapping(node: ast.expr) -> dict[str, Any]:
    """A dict literal, or a call like OrderedDict([(k, v), ...]) / dict(...), as a plain dict."""
    if isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return {}
    try:
        return {str(k): v for k, v in dict(value).items()}
    except (TypeError, ValueError):
        return {}


def parse_defines(text: str) -> dict[str, str]:
    """`#define NAME value` (unquoted) and `constexpr static char NAME[] = "v";` of a header."""
    defines = {name: value.strip().strip('"') for name, value in _DEFINE.findall(text)}
    defines.update(_CONSTEXPR.findall(text))
    return defines


def compute_capabilities(value: Any) -> tuple[str, ...]:
    """Normalise TF's compute-capability lists to ("sm_60", ..., "compute_90").

    build_info.py has the exact list (`['sm_60', ..., 'compute_90']`). cuda_config.h keeps only the
    numbers (`60, 70, 80, 89, 90`; TF <= 1.x `CudaVersion("3.5")`): cuda_configure.bzl writes
    `cc.split("_")[1]`. For those, the highest is taken as PTX, as in every official wheel since
    2.3 (research/compat.md section 3: sm_... for all, compute_ for the newest).
    """
    if isinstance(value, str):
        items = [v for v in re.split(r"[,\s]+", value) if v]
    elif isinstance(value, Iterable):
        items = [str(v) for v in value]
    else:
        return ()
    if items and all(re.fullmatch(r"(?:sm|compute)_\d+", i) for i in items):
        return tuple(items)
    numbers = [re.sub(r"\D", "", n) for n in re.findall(r"\d+(?:\.\d+)?", ",".join(items))]
    numbers = [n for n in numbers if n]
    if not numbers:
        return ()
    return tuple(f"sm_{n}" for n in numbers[:-1]) + (f"compute_{numbers[-1]}",)


def sonames(defines: Mapping[str, str]) -> dict[str, str]:
    """Library short name -> soname TF dlopens, for each non-empty TF_*_VERSION macro."""
    result = {}
    for name, (stem, macro) in SONAME_MACROS.items():
        version = defines.get(macro, "").strip()
        if version:
            result[name] = f"{stem}.{version}"
    return result


# Version macros of the cuDNN (cudnn_version.h from cuDNN 8, cudnn.h before) and NCCL headers.
CUDNN_MACROS = ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL")
NCCL_MACROS = ("NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH")


def header_version(text: str, macros: tuple[str, ...]) -> str | None:
    """ "9.3.0" from a header's numeric version macros, in order; None when one is missing.

    A single macro is CUDART_VERSION's encoding, 1000 * major + 10 * minor (cuda_runtime_api.h).
    """
    values = []
    for macro in macros:
        match = re.search(rf"^\s*#\s*define\s+{macro}\s+(\d+)\b", text, re.MULTILINE)
        if not match:
            return None
        values.append(int(match.group(1)))
    if len(values) == 1:
        return f"{values[0] // 1000}.{values[0] % 1000 // 10}"
    return ".".join(str(v) for v in values)


def cudnn_header_version(text: str) -> str | None:
    """ "9.3.0" from cudnn_version.h (cuDNN >= 8) or cudnn.h (cuDNN 7)."""
    return header_version(text, CUDNN_MACROS)


def nccl_header_version(text: str) -> str | None:
    """ "2.27.7" from nccl.h."""
    return header_version(text, NCCL_MACROS)


def parse_requirements(
    lines: Iterable[str],
    environment: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """(requirements, and_cuda_pins): normalised name -> specifier, markers evaluated for target.

    `environment` is the target interpreter's PEP 508 marker environment (the child reports it;
    tfdoctor's own Python may differ). A line gated by `extra == "and-cuda"` is a pin; other
    extras are ignored. Several matching lines for one name are joined (they all apply).
    """
    base: dict[str, list[str]] = {}
    pins: dict[str, list[str]] = {}
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        spec = str(req.specifier)
        if req.marker is None:
            base.setdefault(name, []).append(spec)
        elif _marker_true(req, environment, ""):
            base.setdefault(name, []).append(spec)
        elif _marker_true(req, environment, AND_CUDA):
            pins.setdefault(name, []).append(spec)
    return _joined(base), _joined(pins)


def _marker_true(req: Requirement, environment: Mapping[str, str] | None, extra: str) -> bool:
    env = dict(environment or {})
    env["extra"] = extra
    try:
        return bool(req.marker and req.marker.evaluate(env))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return False


def _joined(specs: dict[str, list[str]]) -> dict[str, str]:
    return {name: ",".join(s for s in parts if s) for name, parts in specs.items()}
