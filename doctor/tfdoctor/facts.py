"""The facts snapshot: everything the probes learned about one machine, as plain frozen data.

Only probes create facts; checks and renderers read them. `Facts.to_dict()` / `Facts.from_dict()`
round-trip, and that dict is the replay format (`tfdoctor --save`, `tfdoctor replay`). `None`
always means "not collected", never "absent": absence has its own field (empty tuple, False).
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar

# Re-exported: the smoke facts live in facts_smoke.py, and _from_plain resolves every field's type
# in this module's namespace, so they must be names here too.
from tfdoctor.facts_smoke import LogCause as LogCause
from tfdoctor.facts_smoke import NvmlSample as NvmlSample
from tfdoctor.facts_smoke import RecipeResult as RecipeResult
from tfdoctor.facts_smoke import SmokeDevice as SmokeDevice
from tfdoctor.facts_smoke import SmokeFacts as SmokeFacts

SCHEMA_VERSION = "1"
"""Version of the facts and report JSON; changes only on a breaking change (docs/json-report.md)."""


@dataclass(frozen=True, slots=True)
class ProbeIssue:
    """A probe that could not finish: a time limit, a crash, an unreadable file."""

    probe: str
    kind: str
    """One of: timeout, crash, error."""
    message: str


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """One GPU as NVML sees it; a field is None when this driver or GPU does not report it."""

    index: int
    name: str | None = None
    uuid: str | None = None
    serial: str | None = None
    pci_bus_id: str | None = None
    compute_capability: str | None = None
    """"major.minor", e.g. "9.0"."""
    memory_total_mib: int | None = None
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    mig_mode: bool | None = None
    persistence_mode: bool | None = None
    throttle_reasons: tuple[str, ...] | None = None
    """Active clock-event reasons by NVML name without prefix, e.g. ("hw_thermal_slowdown",)."""
    ecc_uncorrected_volatile: int | None = None
    ecc_corrected_volatile: int | None = None
    temperature_c: int | None = None
    power_limit_w: float | None = None
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    utilization_pct: int | None = None
    process_count: int | None = None
    errors: dict[str, str] = field(default_factory=dict)
    """NVML field -> error name for calls that failed with something other than NOT_SUPPORTED."""


@dataclass(frozen=True, slots=True)
class DriverFacts:
    """The NVIDIA kernel driver and its user-space NVML library."""

    nvml_error: str | None = None
    """NVML init failure by NVML_ERROR_* name; NVML_ERROR_LIBRARY_NOT_FOUND when absent."""
    nvml_library: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    """Highest CUDA version the driver supports, "12.2" (not an installed toolkit)."""
    kernel_module_version: str | None = None
    """From /proc/driver/nvidia/version; None when the module is not loaded."""
    nouveau_loaded: bool = False
    nvidia_module_loaded: bool = False
    device_nodes: tuple[str, ...] = ()
    unreadable_device_nodes: tuple[str, ...] = ()
    nvidia_smi: str | None = None
    """Path of nvidia-smi if on PATH."""
    gpus: tuple[GpuFacts, ...] = ()
    nvml_library_version: str | None = None
    """Version in the file name of the NVML library that loaded (libnvidia-ml.so.580.65.06), or
    the "NVML library version" nvidia-smi prints on a mismatch; compare with kernel_module_version."""
    device_count: int | None = None
    """GPUs NVML counts (0 = driver loaded but no GPU); None when NVML did not answer."""
    errors: dict[str, str] = field(default_factory=dict)
    """System-level NVML call -> error name (driver_version, cuda_driver_version, device_count)."""
    kernel_module_open: bool | None = None
    """True for NVIDIA's open kernel modules ("Open Kernel Module" in /proc/driver/nvidia/version)."""
    nvidia_modules: tuple[str, ...] = ()
    """Loaded NVIDIA kernel modules from /proc/modules (nvidia, nvidia_uvm, nvidia_drm, ...)."""
    secure_boot: bool | None = None
    """UEFI Secure Boot state (efivars SecureBoot); None when not readable or not UEFI."""
    nvidia_smi_error: str | None = None
    """First line nvidia-smi printed when it failed (it was run only because NVML failed)."""


@dataclass(frozen=True, slots=True)
class CudaDriverFacts:
    """The CUDA driver API (libcuda.so.1), probed in an isolated child."""

    library: str | None = None
    load_error: str | None = None
    init_result: str | None = None
    """CUresult name of cuInit(0), e.g. "CUDA_SUCCESS", "CUDA_ERROR_NO_DEVICE"."""
    driver_version: str | None = None
    device_count: int | None = None
    is_stub: bool = False
    """The library that loads is a toolkit stub (lib64/stubs, CUDA_ERROR_STUB_LIBRARY)."""
    crash: str | None = None
    """Signal or error that killed the child, e.g. "SIGSEGV"."""
    errors: dict[str, str] = field(default_factory=dict)
    """Driver API call -> CUresult name for calls after cuInit that failed (cuDeviceGetCount, ...)."""
    device_names: tuple[str, ...] = ()
    """cuDeviceGetName of each device, in CUDA's order (after CUDA_VISIBLE_DEVICES)."""
    compute_capabilities: tuple[str, ...] = ()
    """"major.minor" of each device, same order as device_names."""


@dataclass(frozen=True, slots=True)
class LibraryFacts:
    """One CUDA user-space library that TensorFlow will dlopen, resolved as the loader would."""

    name: str
    """Short name, e.g. "cudnn"."""
    soname: str
    path: str | None = None
    found_via: str | None = None
    """runpath, ld_library_path, ldconfig, default_dirs."""
    origin: str | None = None
    """pip, conda, cuda-toolkit, wsl, system."""
    version: str | None = None
    version_source: str | None = None
    """library (asked the library itself), header, metadata, filename."""
    error: str | None = None
    """Set when asking the library crashed or failed, e.g. "SIGSEGV in cudnnGetVersion"."""
    other_copies: tuple[str, ...] = ()
    """Other files with the same soname later in the search order (shadowed by `path`)."""
    other_versions: tuple[str, ...] = ()
    """Files of the same library with another major, e.g. libcudnn.so.8 when TF needs .so.9."""
    search_path: tuple[str, ...] = ()
    """Directories searched in loader order (RPATH, LD_LIBRARY_PATH, RUNPATH, default dirs)."""


@dataclass(frozen=True, slots=True)
class Distribution:
    """An installed Python distribution."""

    name: str
    version: str
    location: str | None = None


@dataclass(frozen=True, slots=True)
class TensorFlowFacts:
    """The installed TensorFlow, read from its files without importing it."""

    distributions: tuple[Distribution, ...] = ()
    """Every TensorFlow-providing distribution (tensorflow, tensorflow-cpu, tf-nightly, ...)."""
    files_from: str | None = None
    """With several TF distributions: the one whose build_info.py is on disk (RECORD hash match)."""
    version: str | None = None
    package_dir: str | None = None
    is_cuda_build: bool | None = None
    cuda_version: str | None = None
    cudnn_version: str | None = None
    nccl_version: str | None = None
    """NCCL the wheel was compiled against (its bundled nccl.h), e.g. "2.27.7"."""
    compute_capabilities: tuple[str, ...] = ()
    """As built, e.g. ("sm_60", "compute_90")."""
    sonames: dict[str, str] = field(default_factory=dict)
    """Library short name -> soname TensorFlow dlopens (from cuda_config.h)."""
    build_info_source: str | None = None
    runpath: tuple[str, ...] = ()
    """Resolved RUNPATH dirs of the shared object that holds TF's DSO loader."""
    requirements: dict[str, str] = field(default_factory=dict)
    """Package -> specifier from TF's metadata (numpy, protobuf, keras, ml-dtypes ...)."""
    and_cuda_pins: dict[str, str] = field(default_factory=dict)
    """Package -> specifier of the [and-cuda] extra."""


@dataclass(frozen=True, slots=True)
class PythonFacts:
    """The target interpreter (`--python`) and the packages in it that break TensorFlow."""

    executable: str
    version: str | None = None
    implementation: str | None = None
    prefix: str | None = None
    is_venv: bool | None = None
    is_conda: bool | None = None
    site_packages: tuple[str, ...] = ()
    packages: dict[str, str] = field(default_factory=dict)
    """Normalised name -> version, for TF, its pinned deps and every nvidia-* wheel."""
    error: str | None = None


@dataclass(frozen=True, slots=True)
class PlatformFacts:
    """Operating system, C library, CPU features and the kind of machine."""

    system: str | None = None
    release: str | None = None
    machine: str | None = None
    distro: str | None = None
    glibc: str | None = None
    cpu_flags: tuple[str, ...] | None = None
    """The CPU features TensorFlow wheels care about that this CPU has (avx, avx2, fma, ...)."""
    in_container: bool | None = None
    is_wsl: bool | None = None


@dataclass(frozen=True, slots=True)
class XlaFacts:
    """Where XLA will find ptxas and libdevice for this TensorFlow."""

    xla_flags_data_dir: str | None = None
    xla_flags_data_dir_exists: bool | None = None
    ptxas: str | None = None
    ptxas_version: str | None = None
    ptxas_found_via: str | None = None
    """xla_flags (--xla_gpu_cuda_data_dir), path ($PATH), or cuda_root (a candidate CUDA root)."""
    libdevice: str | None = None
    searched: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Facts:
    """One machine, as probed at one moment."""

    schema_version: str
    tool_version: str
    collected_at: str
    python: PythonFacts
    platform: PlatformFacts = PlatformFacts()
    env: dict[str, str] = field(default_factory=dict)
    """Allowlisted environment variables that change how TensorFlow finds or uses GPUs."""
    driver: DriverFacts = DriverFacts()
    cuda_driver: CudaDriverFacts = CudaDriverFacts()
    tensorflow: TensorFlowFacts | None = None
    libraries: tuple[LibraryFacts, ...] = ()
    xla: XlaFacts | None = None
    smoke: SmokeFacts | None = None
    """Results of smoke work in the target interpreter; None when it did not run (--quick)."""
    probe_issues: tuple[ProbeIssue, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The replay format: JSON-ready, stable key order."""
        return _to_plain(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Facts:
        """Rebuild facts from `to_dict` output; raises ValueError on a malformed document."""
        return _from_plain(cls, data, "facts")

    def library(self, name: str) -> LibraryFacts | None:
        """The resolved library with this short name, if TF needs it."""
        return next((lib for lib in self.libraries if lib.name == name), None)


T = TypeVar("T")


def _to_plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _to_plain(v) for k, v in value.items()}
    return value


def _from_plain(tp: Any, data: Any, where: str) -> Any:
    """Convert JSON data to the annotated type `tp`, naming `where` on a mismatch."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _from_plain(inner[0], data, where)
    if dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object")
        hints = typing.get_type_hints(tp, vars(sys.modules[__name__]))
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in data:
                kwargs[f.name] = _from_plain(hints[f.name], data[f.name], f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{where}.{f.name}: missing")
        return tp(**kwargs)
    if origin is tuple:
        if not isinstance(data, list):
            raise ValueError(f"{where}: expected a list")
        item = typing.get_args(tp)[0]
        return tuple(_from_plain(item, v, f"{where}[{i}]") for i, v in enumerate(data))
    if origin is dict:
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object")
        item = typing.get_args(tp)[1]
        return {str(k): _from_plain(item, v, f"{where}.{k}") for k, v in data.items()}
    if tp is Any:
        return data
    if tp is float and isinstance(data, int | float) and not isinstance(data, bool):
        return float(data)
    if tp in (str, int, bool) and type(data) is tp:
        return data
    raise ValueError(f"{where}: expected {getattr(tp, '__name__', tp)}, got {type(data).__name__}")
