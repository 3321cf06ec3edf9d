"""Compatibility knowledge from `compat_tables/*.toml`, loaded once into typed, frozen records.

Checks call these lookups and never read the tables themselves. Every lookup answers None
(or "none"/False where the API says so) for a version the tables do not know, so a check can
report "unknown to this table" instead of a wrong verdict. Records carry `verified`, `source`
and `checked` so findings can cite them and soften verdicts built on unconfirmed rows.
The dict fields of cached records are shared: treat them as read-only.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from typing import Any

from packaging.version import InvalidVersion, Version

from tfdoctor.resources import data_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

TABLES = ("tensorflow", "cuda_driver", "cudnn", "gpus")


@dataclass(frozen=True, slots=True)
class TfRelease:
    """One TensorFlow minor release: tested build configuration, wheel contents, pins."""

    version: str
    python_min: str
    python_max: str | None
    cuda: str
    cudnn: str
    cuda_build: str | None
    """Exact CUDA of the wheel's build (cuda_config.h), e.g. "12.5.1", where inspected."""
    cudnn_compiled: str | None
    """cuDNN headers the wheel was built with; runtime needs the same major, minor >= this."""
    compute_capabilities: tuple[str, ...] | None
    ptx_targets: tuple[str, ...] | None
    """PTX `.target`s in the wheel's fatbins (benchmarks/wheel_ptx.py); None = not measured."""
    glibc_min: str | None
    windows_gpu: bool | None
    and_cuda: dict[str, str]
    requires: dict[str, str]
    tf_keras: str | None
    """Specifier of the tf-keras that matches this release (Keras 2 via TF_USE_LEGACY_KERAS=1)."""
    sonames: dict[str, str]
    """Short name (cudart, cublasLt, cudnn, ...) -> soname TF dlopens; empty when unknown."""
    runpath_nvidia: tuple[str, ...] | None
    """`nvidia/<pkg>/lib` dirs in libtensorflow_framework.so.2's RUNPATH; None = not inspected."""
    prerelease: bool
    """Only a pre-release wheel exists (e.g. 2.22.0rc0): never recommended for install."""
    verified: bool
    unverified: tuple[str, ...]
    """Names of the fields the research could not confirm (see `reason`)."""
    reason: str | None
    source: str
    checked: str
    note: str | None

    @property
    def wheel_cuda(self) -> str:
        """The CUDA of the release's own wheels: the exact build's where inspected."""
        return self.cuda_build or self.cuda


@dataclass(frozen=True, slots=True)
class DriverRequirement:
    """Minimum NVIDIA driver for one CUDA runtime version on one platform."""

    cuda: str
    full: str | None
    """Driver the exact toolkit release shipped with (also what PTX from that toolkit needs)."""
    minor_compat: str | None
    """Family floor under CUDA minor-version compatibility (11.x and later); None before 11."""
    source: str


@dataclass(frozen=True, slots=True)
class CudnnRelease:
    """What a cuDNN release supports: CUDA majors, compute capabilities, driver floors."""

    version: str
    cuda_majors: tuple[int, ...]
    min_cc: str
    max_cc: str | None
    """Newest compute capability listed; None = "and later"."""
    driver_floor: dict[int, str]
    """CUDA major of the cuDNN build -> minimum Linux driver."""
    verified: bool
    """False also when the version asked for lies past the releases this row's source covers."""
    source: str


@dataclass(frozen=True, slots=True)
class GpuModel:
    """A GPU model with its spec peaks (dense tensor TFLOPS, FP32-accumulate for GeForce)."""

    key: str
    name: str
    compute_capability: str
    architecture: str | None
    memory_gb: float
    bandwidth_gbs: float
    fp32_tflops: float
    fp16_tensor_tflops: float | None
    bf16_tensor_tflops: float | None
    tensor_cores: bool
    verified: bool
    source: str


@cache
def _table(name: str) -> dict[str, Any]:
    with (data_dir("compat_tables") / f"{name}.toml").open("rb") as handle:
        return tomllib.load(handle)


_CUDART_SONAME = re.compile(r"libcudart\.so\.(\d{1,2})(?:\.(\d))?|cudart64_(1\d|[2-9])(\d?)\.dll")


def cuda_of_cudart(soname: str) -> str | None:
    """The CUDA a TensorFlow was built with, from the runtime its loader asks for: a CUDA 10.x
    build asks for its own release (libcudart.so.10.1, cudart64_101.dll); from CUDA 11 on the
    runtime is versioned per major only (libcudart.so.11.0 and cudart64_110.dll for every 11.x,
    libcudart.so.12), so only the major is known ("11")."""
    m = _CUDART_SONAME.fullmatch(soname)
    if m is None:
        return None
    major, minor = (m[1], m[2]) if m[1] else (m[3], m[4])
    if not major.isdigit() or int(major) < 9:
        return None
    return f"{major}.{minor or 0}" if int(major) <= 10 else major


def same_cuda_build(shown: str, table: str) -> bool:
    """Whether a build shown to use CUDA `shown` ("10.1", "11.8", "11") can be the one of a
    release table's CUDA `table`: the same major.minor up to CUDA 10, the same major after."""
    a, b = driver_key(shown), driver_key(table)
    if not a or not b:
        return True
    return a[:2] == b[:2] if a[0] <= 10 or b[0] <= 10 else a[0] == b[0]


def _minor(version: str) -> str | None:
    try:
        release = Version(version).release
    except InvalidVersion:
        return None
    return f"{release[0]}.{release[1] if len(release) > 1 else 0}"


def driver_key(text: str | None) -> tuple[int, ...] | None:
    """An NVIDIA driver version as comparable numbers (580.65.06 > 580.9); None without digits.

    The first dotted run of digits is the version: a packaging suffix ("580.65.06-1",
    "580.65.06-0ubuntu1") is not part of it.
    """
    match = re.search(r"\d+(?:\.\d+)*", text or "")
    return tuple(int(part) for part in match.group().split(".")) if match else None


def _cc_key(cc: str) -> tuple[int, int]:
    major, _, minor = cc.partition(".")
    return int(major), int(minor or 0)


_TF_OPTIONAL: tuple[str, ...] = ("python_max", "cuda_build", "cudnn_compiled", "glibc_min", "windows_gpu")
_TF_OPTIONAL += ("tf_keras", "reason", "note")


@cache
def _tf_releases() -> dict[str, TfRelease]:
    releases = {}
    for row in _table("tensorflow")["release"]:
        caps, runpath = row.get("compute_capabilities"), row.get("runpath_nvidia")
        ptx = row.get("ptx_targets")
        releases[row["version"]] = TfRelease(
            **{key: row[key] for key in ("version", "python_min", "cuda", "cudnn")},
            **{key: row.get(key) for key in _TF_OPTIONAL},
            compute_capabilities=tuple(caps) if caps is not None else None,
            ptx_targets=tuple(ptx) if ptx is not None else None,
            and_cuda=dict(row.get("and_cuda", {})),
            requires=dict(row.get("requires", {})),
            sonames=dict(row.get("sonames", {})),
            runpath_nvidia=tuple(runpath) if runpath is not None else None,
            prerelease=Version(row.get("wheel_version", row["version"])).is_prerelease,
            verified=row["verified"],
            unverified=tuple(row.get("unverified", ())),
            source=row["source"],
            checked=row["checked"],
        )
    return releases


def tf_release(version: str) -> TfRelease | None:
    """The row for the major.minor of any TF version string ("2.22.0rc0" -> "2.22"), or None."""
    minor = _minor(version)
    return _tf_releases().get(minor) if minor else None


def known_tf_versions() -> tuple[str, ...]:
    """Every TF minor release the table knows, oldest first."""
    return tuple(sorted(_tf_releases(), key=Version))


def newest_tf() -> str:
    """The newest TF minor release with a final wheel: what a fix may install."""
    releases = _tf_releases()
    return [v for v in known_tf_versions() if not releases[v].prerelease][-1]


def min_driver(cuda: str, platform: str = "linux") -> DriverRequirement | None:
    """Minimum drivers for a CUDA runtime ("12.5", "12.5.1") on "linux" or "windows".

    `full` is the newest toolkit row of that major.minor at or below the version given (the GA
    row for a bare "12.5"); `minor_compat` is the family floor (CUDA Table 2). None when the
    tables know neither.
    """
    try:
        wanted = Version(cuda)
    except InvalidVersion:
        return None
    table = _table("cuda_driver")
    family = next((f for f in table["family"] if f["major"] == wanted.major), None)
    same_minor = [
        t for t in table["toolkit"] if Version(t["version"]).release[:2] == wanted.release[:2]
    ]
    at_or_below = [t for t in same_minor if Version(t["version"]) <= wanted]
    row = max(at_or_below or same_minor[:1], key=lambda t: Version(t["version"]), default=None)
    full = row.get(platform) if row else None
    floor = family.get(platform) if family else None
    if full is None and floor is None:
        return None
    source = row["source"] if row and full else family["source"] if family else ""
    return DriverRequirement(cuda=cuda, full=full, minor_compat=floor, source=source)


def driver_cuda_ok(driver_version: str, cuda: str, platform: str = "linux") -> bool | None:
    """Whether a driver can run a CUDA runtime, counting minor-version compatibility.

    From CUDA 11 a driver at or above the family floor runs any runtime of that major (CUDA
    compatibility guide), except PTX built by a newer toolkit: compare against `full` for that.
    Before 11 the toolkit's own driver is required. None when the tables cannot tell.
    """
    requirement = min_driver(cuda, platform)
    have = driver_key(driver_version)
    if requirement is None or have is None:
        return None
    # Either floor suffices: CUDA 11.0 shipped with drivers below the later 11.x family floor.
    floors = [key for key in map(driver_key, (requirement.minor_compat, requirement.full)) if key]
    return have >= min(floors)


@cache
def _cudnn_rows() -> tuple[dict[str, Any], ...]:
    return tuple(sorted(_table("cudnn")["release"], key=lambda r: Version(r["version"])))


def cudnn_release(version: str) -> CudnnRelease | None:
    """The support-matrix row at or below a cuDNN version ("9.3.0"), or None if older than all."""
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    rows = [r for r in _cudnn_rows() if Version(r["version"]) <= wanted]
    if not rows:
        return None
    row = rows[-1]
    covered = wanted.release[:3] <= Version(row["last"]).release[:3]
    cuda = row["cuda"]
    return CudnnRelease(
        version=row["version"],
        cuda_majors=tuple(sorted((int(m) for m in cuda), reverse=True)),
        min_cc=row["min_cc"],
        max_cc=row.get("max_cc"),
        driver_floor={int(m): build["linux"] for m, build in cuda.items()},
        verified=row.get("verified", True) and covered,
        source=row["source"],
    )


def cudnn_span(release: CudnnRelease, cc: str) -> str | None:
    """None when this cuDNN release supports compute capability `cc`; else "too-old" (the GPU is
    older than its oldest) or "too-new" (newer than its newest)."""
    key = driver_key(cc) or ()
    if key < (driver_key(release.min_cc) or ()):
        return "too-old"
    if release.max_cc is not None and key > (driver_key(release.max_cc) or ()):
        return "too-new"
    return None


@cache
def _cc_rows() -> dict[tuple[int, int], dict[str, Any]]:
    return {_cc_key(r["compute_capability"]): r for r in _table("gpus")["cc"]}


def first_cuda(cc: str) -> str | None:
    """The first CUDA toolkit that builds code for this compute capability (NVIDIA's architecture
    compatibility guides), where the table knows it."""
    row = _cc_row(cc)
    return str(row["first_cuda"]) if row and row.get("first_cuda") else None


def cuda_predates(cuda: str, cc: str) -> str | None:
    """The first CUDA that builds code a GPU of `cc` runs, when a build for `cuda` ("10.1", or a
    bare major "11") is certainly older; else None. A GPU runs code built for its major and any
    minor up to its own (sm_80 on 8.6 and 8.9), so that is the first CUDA of the oldest
    capability of its major at or below it: 11.0 for an 8.6 GPU. An older build holds PTX of an
    older architecture at best."""
    device = _cc_key(cc)
    firsts = [driver_key(str(r["first_cuda"])) for key, r in _cc_rows().items()
              if r.get("first_cuda") and key[0] == device[0] and key <= device]
    have = driver_key(cuda)
    need = min((f for f in firsts if f), default=None)
    if not have or not need:
        return None
    first = ".".join(map(str, need))
    return first if (have[0] < need[0] if len(have) == 1 else have[:2] < need[:2]) else None


def _cc_row(cc: str) -> dict[str, Any] | None:
    try:
        return _cc_rows().get(_cc_key(cc))
    except ValueError:
        return None


def architecture(cc: str) -> str | None:
    """Architecture name of a compute capability ("8.9" -> "Ada Lovelace"), None if unknown."""
    row = _cc_row(cc)
    return row["architecture"] if row else None


def has_tensor_cores(cc: str) -> bool:
    """Whether GPUs of this compute capability have tensor cores (Volta 7.0 and later)."""
    row = _cc_row(cc)
    return bool(row and row["tensor_cores"])


@cache
def _gpu_models() -> tuple[tuple[tuple[re.Pattern[str], ...], GpuModel], ...]:
    models = []
    for row in _table("gpus")["gpu"]:
        cc = row["compute_capability"]
        model = GpuModel(
            key=row["key"],
            name=row["name"],
            compute_capability=cc,
            architecture=architecture(cc),
            memory_gb=float(row["memory_gb"]),
            bandwidth_gbs=float(row["bandwidth_gbs"]),
            fp32_tflops=float(row["fp32_tflops"]),
            fp16_tensor_tflops=row.get("fp16_tensor_tflops"),
            bf16_tensor_tflops=row.get("bf16_tensor_tflops"),
            tensor_cores=has_tensor_cores(cc),
            verified=row["verified"],
            source=row["source"],
        )
        patterns = tuple(re.compile(p, re.IGNORECASE) for p in row["patterns"])
        models.append((patterns, model))
    return tuple(models)


@cache
def _series() -> tuple[tuple[tuple[re.Pattern[str], ...], str, str], ...]:
    return tuple((tuple(re.compile(p, re.IGNORECASE) for p in row["patterns"]), row["compute_capability"],
                  row["name"]) for row in _table("gpus")["series"])


def compute_capability_of(name: str) -> tuple[str, str] | None:
    """(compute capability, the model or series it comes from) of a GPU by its name (a user's
    words, nvidia-smi's table): the [[gpu]] model table first, then NVIDIA's series; None when
    neither knows it."""
    model = gpu_model(name)
    if model is not None:
        return model.compute_capability, model.name
    return next(((cc, series) for patterns, cc, series in _series() if any(p.search(name) for p in patterns)),
                None)


def gpu_model(nvml_name: str) -> GpuModel | None:
    """The model whose patterns match an NVML device name, or None (never a guess between two)."""
    hits = [m for patterns, m in _gpu_models() if any(p.search(nvml_name) for p in patterns)]
    return hits[0] if len(hits) == 1 else None


def _target(target: str) -> tuple[str, int, int] | None:
    """ "sm_89" -> ("sm", 8, 9); "compute_90" -> ("compute", 9, 0); "sm_100a" -> ("sm", 10, 0)."""
    match = re.fullmatch(r"(sm|compute)_(\d+)(\d)[a-z]?", target.strip())
    return (match[1], int(match[2]), int(match[3])) if match else None


def has_kernels_for(compute_capabilities: tuple[str, ...], cc: str) -> str:
    """ "sass", "ptx" or "none": what a wheel built for these targets can run on a device `cc`.

    "sass": a target of the same major with minor <= the device's — TF's GetValidDeviceIds
    rule, which counts compute_XY too (TF's .bazelrc: compute_XY embeds PTX in addition to
    SASS). "ptx": no such target, but PTX (compute_XY) no newer than the device, which the
    driver JIT-compiles on first use. "none": neither; kernels fail ("device kernel image is
    invalid").
    """
    device = _cc_key(cc)
    targets = [t for t in map(_target, compute_capabilities) if t]
    if any(major == device[0] and minor <= device[1] for _, major, minor in targets):
        return "sass"
    if any(kind == "compute" and (major, minor) <= device for kind, major, minor in targets):
        return "ptx"
    return "none"


def ptx_jits_on(version: str | None, built: tuple[str, ...], cc: str) -> bool:
    """Whether the driver can JIT-compile every PTX module of this TensorFlow for a GPU of `cc`
    that has no SASS in the wheel (has_kernels_for said "ptx").

    PTX for an arch-specific target (sm_90a) compiles for that architecture only (ptxas:
    "cannot be compiled to future architecture"): one such module, and the first kernel fails
    with CUDA_ERROR_INVALID_PTX. The measured `ptx_targets` apply only to the wheel itself (the
    installed build's targets equal the row's). Otherwise the field rule holds: PTX JIT on
    CC >= 10 fails (tensorflow/tensorflow#99592, #101746).
    """
    release = tf_release(version or "")
    device = _cc_key(cc)
    if release is None or release.ptx_targets is None or release.compute_capabilities != built:
        return device[0] < 10
    return all(_cc_key(f"{m[1]}.{m[2]}") == device for t in release.ptx_targets
               if (m := re.fullmatch(r"sm_(\d+)(\d)a", t)))


def newest_cudnn_for(cc: str) -> str | None:
    """The newest cuDNN release whose support matrix lists this compute capability, or None when
    every known release does (no cap needed). Releases between two rows are unknown: the cap
    stops at the last row that lists the GPU (9.10.2 for CC < 7.5; 9.17.0 dropped it)."""
    key = driver_key(cc) or ()
    rows = _cudnn_rows()
    if all((driver_key(r["min_cc"]) or ()) <= key for r in rows):
        return None
    fits = [r["version"] for r in rows if (driver_key(r["min_cc"]) or ()) <= key]
    return fits[-1] if fits else None


def best_tf_for(python: str | None, driver: str | None, ccs: tuple[str, ...],
                platform: str = "linux", jit_ok: bool = False) -> str | None:
    """The newest final TF release with wheels for this Python (None: any) whose CUDA the driver
    runs and that has native kernels (SASS) for every GPU, or with `jit_ok` PTX the driver can
    JIT-compile for it (ptx_jits_on); None when no release fits (use a CPU build)."""
    releases = _tf_releases()
    py = Version(_minor(python or "") or "0")
    for version in reversed(known_tf_versions()):
        rel = releases[version]
        if rel.prerelease or not rel.compute_capabilities:
            continue
        wheels = Version(rel.python_min) <= py <= Version(rel.python_max or rel.python_min)
        if python is not None and not wheels:
            continue
        if platform == "windows" and not rel.windows_gpu:
            continue
        if driver is not None and not driver_cuda_ok(driver, rel.cuda, platform):
            continue
        caps = rel.compute_capabilities
        if all((kind := has_kernels_for(caps, cc)) == "sass"
               or (jit_ok and kind == "ptx" and ptx_jits_on(version, caps, cc)) for cc in ccs):
            return version
    return None


def tables_checked() -> str:
    """The newest `checked` date over every row of every table (shown in reports)."""
    dates = []
    for name in TABLES:
        for rows in _table(name).values():
            if isinstance(rows, list):
                dates += [r[k] for r in rows for k in ("checked", "metadata_checked") if k in r]
    return max(dates)
