"""The facts snapshot: everything the probes learned about one machine, as plain frozen data.

Only probes create facts; checks and renderers read them. `Facts.to_dict()` / `Facts.from_dict()`
round-trip, and that dict is the replay format (`tfdoctor --save`, `tfdoctor replay`).

Unknown is never absent. `None` on an optional field means "not collected"; for fields whose
empty or false value means absence (no GPUs, no TensorFlow, an unset variable), a fact that
could not be read is named in `Facts.unknown` (see UNKNOWABLE), and checks ask `Facts.known()`
before they conclude that something is missing.
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

SCHEMA_VERSION = "2"
"""Version of the facts and report JSON; changes only on a breaking change (docs/json-report.md).
2: `unknown` and `provenance` (a false or empty fact listed in `unknown` was not collected)."""

READABLE_SCHEMAS = ("1", "2")
"""Schema versions replay reads; a version 1 document has no `unknown` list (see implied_unknown)."""

UNKNOWABLE: dict[str, str] = {
    "driver": "the NVIDIA driver as NVML or nvidia-smi reports it (its error, version, GPUs)",
    "driver.gpus": "the GPU list and count",
    "driver.kernel_module": "the kernel module state (loaded modules, nouveau, its version, Secure Boot)",
    "driver.device_nodes": "the /dev/nvidia* device files",
    "cuda_driver": "libcuda.so.1 as TensorFlow would load it (path, cuInit result)",
    "tensorflow": "the installed TensorFlow (distributions, version, build)",
    "tensorflow.distributions": "which TensorFlow distributions are installed",
    "tensorflow.version": "the installed TensorFlow's release (a ticket that says only what build it is)",
    "tensorflow.build": "the build's CUDA, cuDNN, compute capabilities and sonames",
    "tensorflow.requirements": "TensorFlow's Requires-Dist pins",
    "libraries": "which CUDA library files TensorFlow's loader opens",
    "xla": "ptxas and libdevice as XLA finds them",
    "tf_loader": "TensorFlow's own DSO loader's answers (the full run)",
    "toolkits": "the installed CUDA toolkits",
    "python.version": "the target interpreter's version",
    "python.packages": "the installed Python packages",
    "env": "the environment variables (a variable in `env` is known even when this is listed)",
    "platform.system": "the operating system",
    "platform.machine": "the CPU architecture",
    "platform.distro": "the Linux distribution",
    "platform.glibc": "the C library version",
    "platform.cpu_flags": "the CPU's instruction-set flags",
    "platform.in_container": "whether it runs in a container",
    "platform.is_wsl": "whether it runs under WSL",
    "host": "the kernel log's GPU-related lines (Xid, IOMMU faults)",
}
"""Every path `Facts.unknown` may list, and what it covers; a path also covers the paths below it."""


@dataclass(frozen=True, slots=True)
class ProbeIssue:
    """A probe that could not finish: a time limit, a crash, an unreadable file."""

    probe: str
    """Name of the probe: driver, cuda-driver, platform, target, libraries, xla or env."""
    kind: str
    """One of: timeout (its time limit), crash (killed by a signal, or a bug in the probe itself), error."""
    message: str
    """One line for people: what failed and where, e.g. "_nvml_child.py killed by SIGSEGV in
    nvmlInitWithFlags"."""


@dataclass(frozen=True, slots=True)
class MigDeviceFacts:
    """One MIG device (a compute instance of a GPU instance) of a GPU in MIG mode, as NVML sees it."""

    index: int
    """Its index under the parent GPU (nvmlDeviceGetMigDeviceHandleByIndex)."""
    uuid: str | None = None
    """Its UUID, "MIG-..." from driver R470 on (nvmlDeviceGetUUID on the MIG handle): what
    CUDA_VISIBLE_DEVICES takes to select it."""
    name: str | None = None
    """Its name, the GPU's and the profile, e.g. "NVIDIA A100-SXM4-40GB MIG 1g.5gb"."""
    memory_total_mib: int | None = None
    """Its share of the GPU's memory in MiB (nvmlDeviceGetMemoryInfo on the MIG handle)."""


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """One GPU as NVML sees it; a field is None when this driver or GPU does not report it."""

    index: int
    """NVML device index (0-based; NVML ignores CUDA_VISIBLE_DEVICES), or nvidia-smi's index when NVML
    failed."""
    name: str | None = None
    """Product name (nvmlDeviceGetName, or nvidia-smi), e.g. "NVIDIA A100-SXM4-40GB"."""
    uuid: str | None = None
    """GPU UUID (nvmlDeviceGetUUID, or nvidia-smi), e.g. "GPU-5fd4b3a2-..."."""
    serial: str | None = None
    """Board serial number (nvmlDeviceGetSerial); None on boards that have none (most GeForce)."""
    pci_bus_id: str | None = None
    """PCI bus id as NVML reports it (nvmlDeviceGetPciInfo_v3 busId), e.g. "00000000:3B:00.0"."""
    compute_capability: str | None = None
    """"major.minor" from nvmlDeviceGetCudaComputeCapability, e.g. "9.0"."""
    memory_total_mib: int | None = None
    """Total device memory in MiB, rounded down (nvmlDeviceGetMemoryInfo, or nvidia-smi's memory.total)."""
    memory_used_mib: int | None = None
    """Device memory in use when probed, in MiB, rounded down (nvmlDeviceGetMemoryInfo_v2 `used`, which
    leaves out the driver's reservation): what other processes hold before TensorFlow starts."""
    pcie_gen_current: int | None = None
    """Current PCIe link generation (nvmlDeviceGetCurrPcieLinkGeneration); an idle GPU may drop to gen 1."""
    pcie_gen_max: int | None = None
    """Highest PCIe link generation this GPU and system support (nvmlDeviceGetMaxPcieLinkGeneration)."""
    pcie_width_current: int | None = None
    """Current PCIe link width in lanes, e.g. 16 (nvmlDeviceGetCurrPcieLinkWidth)."""
    pcie_width_max: int | None = None
    """Highest PCIe link width in lanes this GPU and system support (nvmlDeviceGetMaxPcieLinkWidth)."""
    mig_mode: bool | None = None
    """Current MIG mode is enabled (nvmlDeviceGetMigMode); None on GPUs without MIG."""
    mig_devices: tuple[MigDeviceFacts, ...] | None = None
    """The MIG devices that exist on a GPU in MIG mode (each index below
    nvmlDeviceGetMaxMigDeviceCount that has one); None when MIG is off or they were not listed."""
    persistence_mode: bool | None = None
    """Persistence mode is on (nvmlDeviceGetPersistenceMode); None where NVML does not support it (e.g.
    WSL)."""
    throttle_reasons: tuple[str, ...] | None = None
    """Active clock-event reasons (nvmlDeviceGetCurrentClocksEventReasons, before driver 535
    `...ThrottleReasons`), snake-case nvml.h names without prefix, e.g. ("hw_thermal_slowdown",); gpu_idle is
    left out."""
    ecc_uncorrected_volatile: int | None = None
    """Uncorrected ECC errors since the driver last loaded (nvmlDeviceGetTotalEccErrors, volatile); None
    without ECC."""
    ecc_corrected_volatile: int | None = None
    """Corrected ECC errors since the driver last loaded (nvmlDeviceGetTotalEccErrors, volatile); None without
    ECC."""
    temperature_c: int | None = None
    """GPU core temperature in degrees Celsius (nvmlDeviceGetTemperature, NVML_TEMPERATURE_GPU)."""
    power_limit_w: float | None = None
    """Enforced power limit in W (nvmlDeviceGetEnforcedPowerLimit, mW / 1000)."""
    power_default_limit_w: float | None = None
    """The board's default power limit in W (nvmlDeviceGetPowerManagementDefaultLimit, mW / 1000):
    an enforced limit below it was lowered by someone (nvidia-smi -pl)."""
    sm_clock_mhz: int | None = None
    """SM clock in MHz when probed (nvmlDeviceGetClockInfo, NVML_CLOCK_SM)."""
    sm_clock_max_mhz: int | None = None
    """Maximum SM clock in MHz (nvmlDeviceGetMaxClockInfo, NVML_CLOCK_SM)."""
    utilization_pct: int | None = None
    """Percent of the last sample period in which a kernel ran, 0-100 (nvmlDeviceGetUtilizationRates .gpu)."""
    process_count: int | None = None
    """Compute processes NVML lists on this GPU (nvmlDeviceGetComputeRunningProcesses_v3, else _v2)."""
    errors: dict[str, str] = field(default_factory=dict)
    """NVML field -> `NVML_ERROR_*` name for calls that failed with something other than NOT_SUPPORTED; also
    "handle" (nvmlDeviceGetHandleByIndex failed, nothing else was asked) and "probe" (a bug in the NVML child:
    exception text)."""


@dataclass(frozen=True, slots=True)
class DriverFacts:
    """The NVIDIA kernel driver and its user-space NVML library."""

    nvml_error: str | None = None
    """NVML init failure by `NVML_ERROR_*` name (NVML_ERROR_LIBRARY_NOT_FOUND when absent), or how the NVML
    child failed: "timed out", "crashed: SIGSEGV", "exited with status 1", "no output". None when NVML
    initialised, and when nvidia-ml-py was not importable (a ProbeIssue says so)."""
    nvml_library: str | None = None
    """Path of the `libnvidia-ml.so*` the NVML child had mapped (its /proc/self/maps), set even when nvmlInit
    failed."""
    driver_version: str | None = None
    """Driver version, e.g. "580.65.06" (nvmlSystemGetDriverVersion, or nvidia-smi when NVML did not
    answer)."""
    cuda_driver_version: str | None = None
    """Highest CUDA version the driver supports, "major.minor" like "12.2" (nvmlSystemGetCudaDriverVersion;
    not an installed toolkit)."""
    kernel_module_version: str | None = None
    """Loaded kernel module version, e.g. "580.65.06", from /proc/driver/nvidia/version; None when the module
    is not loaded."""
    nouveau_loaded: bool = False
    """The nouveau module is in /proc/modules (it keeps the NVIDIA driver off the GPU)."""
    nvidia_module_loaded: bool = False
    """The nvidia kernel module is in /proc/modules."""
    device_nodes: tuple[str, ...] = ()
    """Existing `/dev/nvidia*` device files (nvidiactl, nvidia0, nvidia-uvm, ...) and /dev/dxg (WSL2),
    sorted."""
    unreadable_device_nodes: tuple[str, ...] = ()
    """Those of device_nodes this user cannot open for reading and writing (os.access)."""
    nvidia_smi: str | None = None
    """Path of nvidia-smi if on PATH."""
    gpus: tuple[GpuFacts, ...] = ()
    """Every GPU NVML lists, by index; when NVML failed, nvidia-smi's list (index, name, bus id, UUID and
    memory only)."""
    nvml_library_version: str | None = None
    """Version in the file name of the NVML library that loaded (libnvidia-ml.so.580.65.06), or
    the "NVML library version" nvidia-smi prints on a mismatch; compare with kernel_module_version."""
    device_count: int | None = None
    """GPUs NVML counts (0 = driver loaded but no GPU), or nvidia-smi's rows when NVML failed; None when
    neither answered."""
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
    topology: TopologyFacts | None = None
    """How the GPUs reach each other (NVLink, P2P), read when NVML lists two or more; None with
    fewer, when NVML failed, or in documents from before the field."""


@dataclass(frozen=True, slots=True)
class TopologyFacts:
    """The interconnect NCCL will use between a machine's GPUs, as NVML reports it."""

    nvlink: tuple[tuple[bool, ...] | None, ...] = ()
    """Per GPU (NVML's order), each NVLink link's state (nvmlDeviceGetNvLinkState: True active);
    () for a board without NVLink; None where NVML could not say."""
    p2p_read: tuple[tuple[str | None, ...], ...] | None = None
    """[a][b]: nvmlDeviceGetP2PStatus(READ) from GPU a to GPU b: ok, chipset-not-supported,
    gpu-not-supported, ioh-topology-not-supported, disabled-by-regkey, not-supported, unknown;
    None on the diagonal and where the call failed."""
    p2p_nvlink: tuple[tuple[str | None, ...], ...] | None = None
    """[a][b]: nvmlDeviceGetP2PStatus(NVLINK), the same words: "ok" where the pair talks over
    NVLink."""


@dataclass(frozen=True, slots=True)
class CudaDriverFacts:
    """The CUDA driver API (libcuda.so.1), probed in an isolated child."""

    library: str | None = None
    """Path of the `libcuda.so*` that dlopen("libcuda.so.1") mapped in the child (its /proc/self/maps); None
    when it did not load."""
    load_error: str | None = None
    """dlopen("libcuda.so.1") error text, or "libcuda.so.1 has no cuInit symbol"; None when it loaded."""
    init_result: str | None = None
    """CUresult name of cuInit(0), e.g. "CUDA_SUCCESS", "CUDA_ERROR_NO_DEVICE"; None when cuInit was not
    reached."""
    driver_version: str | None = None
    """CUDA version the driver API implements, "major.minor" like "12.2" (cuDriverGetVersion, asked before
    cuInit)."""
    device_count: int | None = None
    """Devices cuDeviceGetCount sees (after CUDA_VISIBLE_DEVICES); None when cuInit or the call failed."""
    is_stub: bool = False
    """The library that loads is a toolkit stub (a stubs/ directory in its path, or cuInit gave
    CUDA_ERROR_STUB_LIBRARY)."""
    copied_over: str | None = None
    """When the libcuda.so.1 that loads is a regular file beside the driver's own versioned
    libcuda.so.<version> (a copy where the driver's symlink belongs; ldconfig warns "is not a
    symbolic link"): that versioned file's name. None otherwise, and always under WSL's
    /usr/lib/wsl/lib, which ships regular files."""
    crash: str | None = None
    """How the child died: a signal name, e.g. "SIGSEGV", or "timed out"; None when it exited on its own."""
    errors: dict[str, str] = field(default_factory=dict)
    """Driver API call -> CUresult name for failed calls other than cuInit (cuDriverGetVersion,
    cuDeviceGetCount, "cuDeviceGet(0)"); "missing symbol" when cuDeviceGetCount is absent."""
    device_names: tuple[str, ...] = ()
    """cuDeviceGetName of each device, in CUDA's order (after CUDA_VISIBLE_DEVICES); "" where the call
    failed."""
    compute_capabilities: tuple[str, ...] = ()
    """"major.minor" of each device (cuDeviceGetAttribute), same order as device_names; "" where unknown."""


@dataclass(frozen=True, slots=True)
class LibraryFacts:
    """One CUDA user-space library that TensorFlow will dlopen, resolved as the loader would."""

    name: str
    """Short name, e.g. "cudnn", "cublasLt", "nvjitlink"."""
    soname: str
    """File name TF dlopens, e.g. "libcudnn.so.9": from cuda_config.h, else the TF release table; nccl
    defaults to libnccl.so.2, nvjitlink to `libnvJitLink.so.<CUDA major>` (CUDA >= 12)."""
    path: str | None = None
    """The file the loader would open (first loadable candidate in search order); None when no file is
    found."""
    found_via: str | None = None
    """Search stage that found path: rpath, ld_library_path, runpath, ldconfig (the ld.so cache),
    default_dirs or preload (tfdoctor's start-up preload loads it by path before TensorFlow asks);
    tensorflow when TensorFlow's own loader (full run) disagreed with that model; None when not found."""
    origin: str | None = None
    """Who installed path: pip (site-packages/nvidia), conda, cuda-toolkit (`/usr/local/cuda*`, `/opt/cuda*`),
    wsl (/usr/lib/wsl), else system."""
    version: str | None = None
    """Dotted version of the file at path, e.g. "9.3.0" (pip metadata gives the wheel's, e.g. "9.3.0.75");
    None when no source knew."""
    version_source: str | None = None
    """library (its own version call, in an isolated child), header (beside it or in /usr/include), metadata
    (its pip package), filename (the real file's name)."""
    error: str | None = None
    """Why asking the library its version failed: "dlopen failed: ...", "no symbol ...", "... returned status
    N", "SIGSEGV in cudnnGetVersion", "timed out while loading cudnn", "not asked: ..."; version may still
    come from a fallback."""
    other_copies: tuple[str, ...] = ()
    """Other files with the same soname: later candidates in search order, then ones in ldconfig-cache and
    known install dirs (pip `nvidia/*/lib`, CUDA toolkits, conda, WSL)."""
    other_versions: tuple[str, ...] = ()
    """Files of the same library with another major, e.g. libcudnn.so.8 when TF needs .so.9."""
    search_path: tuple[str, ...] = ()
    """Directories searched in loader order: RPATH (only without RUNPATH), LD_LIBRARY_PATH, RUNPATH, default
    dirs; the ldconfig cache, consulted before the default dirs, is not listed. For nvjitlink, RPATH/RUNPATH
    are those of the cusolver or cusparse that loads."""
    model_path: str | None = None
    """The file tfdoctor's own loader model resolved, kept only when TensorFlow's loader (`Facts.tf_loader`)
    answered otherwise and its answer replaced path; None otherwise."""
    model_disagrees: bool = False
    """TensorFlow's own DSO loader disagreed with tfdoctor's model for this library: path, found_via
    ("tensorflow") and error are then TensorFlow's answer, and model_path the model's."""


@dataclass(frozen=True, slots=True)
class LoaderAnswer:
    """TensorFlow's own DSO loader's answer for one library (the full run's loader oracle)."""

    name: str
    """Short name as in LibraryFacts.name; "cuda" is libcuda.so.1 (GetCudaDriverDsoHandle)."""
    function: str
    """The loader function asked, e.g. "GetCudnnDsoHandle"; nvjitlink is read from the process's maps."""
    path: str | None = None
    """The file TensorFlow's loader opened (dlinfo of its handle); None when it failed."""
    error: str | None = None
    """TensorFlow's status message when it failed ("Could not load dynamic library ...; dlerror: ..."), or
    why the call could not be read ("crashed: SIGSEGV", "timed out", an unexpected ABI)."""


@dataclass(frozen=True, slots=True)
class TfLoaderFacts:
    """TensorFlow's own answer to "which CUDA libraries load": its DsoLoader, asked in a child of the
    target interpreter that loads libtensorflow_framework without importing TensorFlow."""

    loader: str | None = None
    """The loader found, "tsl::internal::DsoLoader" (TF >= 2.12) or "stream_executor::internal::DsoLoader";
    None when none was found (error says why; the libraries then stay as tfdoctor's model resolved them)."""
    answers: tuple[LoaderAnswer, ...] = ()
    """One per loader function the framework exports, in the order asked."""
    error: str | None = None
    """Why TensorFlow could not be asked, or not about everything: the framework did not load, no loader
    symbols, the child crashed or timed out (its answers up to then are kept)."""


@dataclass(frozen=True, slots=True)
class Distribution:
    """An installed Python distribution."""

    name: str
    """PEP 503 normalised project name, e.g. "tensorflow-cpu"."""
    version: str
    """Version from its METADATA (else the .dist-info directory name); "unknown" when neither says."""
    location: str | None = None
    """The sys.path directory that holds its .dist-info or .egg-info directory."""


@dataclass(frozen=True, slots=True)
class TensorFlowFacts:
    """The installed TensorFlow, read from its files without importing it."""

    distributions: tuple[Distribution, ...] = ()
    """Every TensorFlow-providing distribution (tensorflow, tensorflow-cpu, tf-nightly, ...) on the target's
    import path, in import order."""
    files_from: str | None = None
    """With several TF distributions: the (normalised) one whose build_info.py is on disk (RECORD hash match);
    None when one or no unique match."""
    version: str | None = None
    """Version of the distribution that owns the importable files, e.g. "2.21.0" (files_from, else the one
    beside package_dir, else the first)."""
    package_dir: str | None = None
    """Directory of the importable `tensorflow` package, found by the target's PathFinder, never imported."""
    is_cuda_build: bool | None = None
    """build_info.py's is_cuda_build, else whether a CUDA version was found; None when neither build_info.py
    nor a config header was readable."""
    cuda_version: str | None = None
    """CUDA TF was built with, as build_info.py (else cuda_config.h TF_CUDA_VERSION) writes it, e.g. "12.5.1";
    None for CPU builds."""
    cudnn_version: str | None = None
    """cuDNN TF was built with: the bundled cudnn_version.h, e.g. "9.3.0", else build_info.py /
    TF_CUDNN_VERSION, often major only ("9")."""
    nccl_version: str | None = None
    """NCCL the wheel was compiled against (its bundled nccl.h), e.g. "2.27.7"; None for CPU builds or without
    a bundled nccl.h."""
    compute_capabilities: tuple[str, ...] = ()
    """As built, e.g. ("sm_60", "compute_90"): build_info.py's list, or cuda_config.h's numbers with the
    highest taken as PTX (compute_)."""
    sonames: dict[str, str] = field(default_factory=dict)
    """Library short name -> soname TensorFlow dlopens (`TF_*_VERSION` macros of cuda_config.h, nccl_config.h,
    nvshmem_config.h); empty for CPU builds."""
    build_info_source: str | None = None
    """Comma-separated files the build fields came from, e.g. "build_info.py, cuda_config.h, nccl_config.h,
    cudnn_version.h, nccl.h"."""
    runpath: tuple[str, ...] = ()
    """RUNPATH dirs of libtensorflow_framework.so.2 (holds TF's DSO loader), $ORIGIN expanded, normalised,
    de-duplicated; may name missing dirs."""
    requirements: dict[str, str] = field(default_factory=dict)
    """Normalised package -> specifier from TF's Requires-Dist, markers evaluated for the target (numpy,
    protobuf, keras, ml-dtypes ...)."""
    and_cuda_pins: dict[str, str] = field(default_factory=dict)
    """Normalised package -> specifier of the Requires-Dist lines gated by extra == "and-cuda" (the nvidia-*
    wheels)."""


@dataclass(frozen=True, slots=True)
class PythonFacts:
    """The target interpreter (`--python`) and the packages in it that break TensorFlow."""

    executable: str
    """sys.executable of the target interpreter, or the --python path as given when it did not answer."""
    version: str | None = None
    """Target's Python version (first word of sys.version), e.g. "3.11.7"."""
    implementation: str | None = None
    """sys.implementation.name, e.g. "cpython"."""
    prefix: str | None = None
    """sys.prefix: the venv or conda environment root when in one."""
    is_venv: bool | None = None
    """sys.prefix differs from sys.base_prefix (a venv or virtualenv)."""
    is_conda: bool | None = None
    """conda-meta/ exists in sys.prefix or sys.base_prefix, or CONDA_PREFIX is this prefix."""
    site_packages: tuple[str, ...] = ()
    """Existing site-packages / dist-packages dirs: site.getsitepackages(), the user site if enabled, other
    such dirs on sys.path."""
    packages: dict[str, str] = field(default_factory=dict)
    """Normalised name -> version ("unknown" when none), for TF, its pinned deps and every nvidia-* wheel; the
    first on sys.path wins."""
    preloads: tuple[str, ...] = ()
    """Libraries tfdoctor's start-up preload (`tfdoctor-preload.pth`, written by `tfdoctor fix`) loads by
    absolute path when TensorFlow is first imported, in load order: existing files only, and only while the
    TensorFlow it was written for is installed."""
    conda_packages: dict[str, str] | None = None
    """In a conda env: name -> "version build" from conda-meta/*.json for TensorFlow (tensorflow,
    tensorflow-base: the build string says cuda or cpu), cudatoolkit, cuda-*, cudnn, nccl, libcu*/libnv*; None
    outside conda."""
    error: str | None = None
    """Why the target interpreter gave no report (could not start, timed out, killed, printed no JSON); the
    other fields are then None."""
    chosen_by: str | None = None
    """Why this interpreter was diagnosed: "--python", "the active environment $VIRTUAL_ENV; ...",
    "tfdoctor's own interpreter: ..."; None in facts from before schema 2's field or a ticket."""


@dataclass(frozen=True, slots=True)
class PlatformFacts:
    """Operating system, C library, CPU features and the kind of machine."""

    system: str | None = None
    """OS name from uname of tfdoctor's own process, e.g. "Linux"."""
    release: str | None = None
    """Kernel release from uname, e.g. "6.8.0-45-generic"."""
    machine: str | None = None
    """CPU architecture from uname, e.g. "x86_64", "aarch64"."""
    distro: str | None = None
    """PRETTY_NAME (else NAME VERSION_ID) of /etc/os-release or /usr/lib/os-release, e.g. "Ubuntu 24.04.1
    LTS"."""
    glibc: str | None = None
    """glibc version of tfdoctor's own process (confstr CS_GNU_LIBC_VERSION), e.g. "2.39"; None on musl and
    off Linux."""
    cpu_flags: tuple[str, ...] | None = None
    """The CPU features TensorFlow wheels care about that the first CPU in /proc/cpuinfo has (avx, avx2, fma,
    ...); None when unreadable."""
    in_container: bool | None = None
    """Docker, Podman, containerd/Kubernetes or LXC (/.dockerenv, /run/.containerenv, environment,
    /proc/1/cgroup); False off Linux."""
    is_wsl: bool | None = None
    """"microsoft" in /proc/sys/kernel/osrelease or /proc/version (WSL1 or WSL2); False off Linux."""
    wsl_version: int | None = None
    """1 or 2 under WSL (WSL 1 kernels say "Microsoft", WSL 2 kernels "microsoft-standard" / "WSL2");
    None off WSL or when unknown."""
    wsl_driver_libs: tuple[str, ...] | None = None
    """The file names in /usr/lib/wsl/lib, where WSL 2 (and a container's NVIDIA runtime under it)
    mounts the Windows driver's libraries; None where that directory does not exist."""
    container_toolkit: str | None = None
    """The NVIDIA Container Toolkit's version on this machine (`nvidia-ctk --version`: "NVIDIA
    Container Toolkit CLI version 1.17.8" -> "1.17.8"); None where nvidia-ctk is not on PATH (inside
    a container it normally is not: the toolkit runs on the host)."""
    hosted: str | None = None
    """The hosted notebook runtime TensorFlow runs on ("Google Colab"), whose GPU runtime is set up
    for the TensorFlow it preinstalls (triage: the ticket says so); None when not known to be one."""


@dataclass(frozen=True, slots=True)
class XlaFacts:
    """Where XLA will find ptxas and libdevice for this TensorFlow."""

    xla_flags_data_dir: str | None = None
    """Value of --xla_gpu_cuda_data_dir in XLA_FLAGS (the last one wins); None when not set."""
    xla_flags_data_dir_exists: bool | None = None
    """That directory exists; None when the flag is not set."""
    ptxas: str | None = None
    """Path of the executable ptxas XLA would run; None when none is found."""
    ptxas_version: str | None = None
    """Version `ptxas --version` prints after "V", e.g. "12.5.82"; None without ptxas or when it failed."""
    ptxas_found_via: str | None = None
    """xla_flags (--xla_gpu_cuda_data_dir), path ($PATH), or cuda_root (a candidate CUDA root)."""
    libdevice: str | None = None
    """Path of nvvm/libdevice/libdevice.10.bc in the first searched root with an nvvm/libdevice dir; None when
    none has one or it lacks the file."""
    searched: tuple[str, ...] = ()
    """CUDA roots in XLA's order: the data dir, /usr/local/cuda, /opt/cuda, TF's pip nvidia/cuda_nvcc
    (nvidia/cu13 for CUDA 13) dirs, conda prefixes."""


@dataclass(frozen=True, slots=True)
class ToolkitFacts:
    """One installed CUDA toolkit."""

    path: str | None = None
    """Its root directory, e.g. "/usr/local/cuda-11.8"; None when only its nvcc's version is known."""
    version: str | None = None
    """Its version, e.g. "11.8.89" (nvcc --version, version.json or the directory name)."""
    via: str = "dir"
    """How it was found: dir (a known install directory), nvcc (the nvcc on PATH), cuda_home
    (CUDA_HOME / CUDA_PATH), conda (conda-meta), ticket (pasted text: nvcc or a directory),
    claimed (a ticket's words only: the issue template's "CUDA/cuDNN version", "CUDA 12.4"),
    tensorflow log (no toolkit: the cuDNN TensorFlow's log says it loaded, in cudnn_version)."""
    cudnn_version: str | None = None
    """The cuDNN installed with it, where known: a ticket's words ("cuDNN 7.4.1"), or the one
    TensorFlow's log says it loaded ("Loaded cuDNN version 8904"); None otherwise."""


@dataclass(frozen=True, slots=True)
class TensorRtFacts:
    """TF-TRT: the TensorRT this TensorFlow loads against the TensorRT on the machine, as a ticket
    shows them (a live run reads the installed one from pip's packages and the wanted one from the
    release table)."""

    wanted: str | None = None
    """What TensorFlow loads: the TensorRT version it was linked with (TF-TRT's
    `get_linked_tensorrt_version()`, "7.2.2") or the soname its DSO loader asked for
    ("libnvinfer.so.7", "libnvinfer.so.8.6.1"); None when not shown."""
    installed: str | None = None
    """The TensorRT installed: a version (apt or dpkg's libnvinfer package, TF-TRT's
    `get_loaded_tensorrt_version()`: "8.0.0") or a soname (an `ldconfig -p` entry, a file the user
    names: "libnvinfer.so.10"); None when not shown."""


@dataclass(frozen=True, slots=True)
class IntentFacts:
    """What a ticket's words say the user is after and saw, beside what its output shows (triage
    only: a live run leaves it empty); `provenance["intent.gpu"]` says where each was read."""

    gpu: str | None = None
    """A GPU the user says they have, as written ("RTX 5090"): the ticket is about using a GPU."""
    and_cuda: bool = False
    """The ticket installs tensorflow[and-cuda] (the pip CUDA wheels)."""
    worked_with: str | None = None
    """A TensorFlow release the user says the code worked with ("works in 2.15, fails in 2.16")."""
    pip_install: tuple[str, ...] = ()
    """The requirements of the ticket's pip install commands, as written ("tensorflow-gpu==2.12.0rc0")."""
    no_wheel: tuple[str, ...] = ()
    """Packages the ticket says pip has no wheel or distribution of ("there is no wheel for
    tensorflow-text 2.13"), by their PyPI name; pip's own "No matching distribution found" is a
    log line, not this."""
    start_seconds: float | None = None
    """How long the ticket says each start of GPU work takes ("a first-time delay of 90-120 seconds
    when we create the session", "takes 20 minutes to start"), in seconds, the least figure given."""
    multi_gpu: bool = False
    """The ticket runs TensorFlow on several GPUs at once: its code uses a tf.distribute strategy that
    spans GPUs (MirroredStrategy, MultiWorkerMirroredStrategy, CentralStorageStrategy), or its words
    say multi-GPU / multiple GPUs."""
    binding: str | None = None
    """The binding the ticket runs TensorFlow through when it is not Python's: "tfjs-node"
    (TensorFlow.js in Node.js, @tensorflow/tfjs-node or -gpu, whose native addon loads the
    libtensorflow it downloaded). Python's pip list and prints say nothing of that TensorFlow."""


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """Who collected the facts, and on which machine: the names redaction must hide in them,
    wherever the document is redacted (`report --from` runs on another machine)."""

    host: str | None = None
    """The collecting machine's host name (socket.gethostname()); None when unknown (a ticket
    that does not show it)."""
    user: str | None = None
    """The collecting user's name ($USER, $LOGNAME)."""
    home: str | None = None
    """The collecting user's home directory ($HOME)."""


@dataclass(frozen=True, slots=True)
class HostFacts:
    """Host state outside the driver that breaks GPUs: the kernel log's GPU lines, the hybrid-graphics
    profile."""

    kernel_log: tuple[str, ...] = ()
    """Kernel log lines about the GPU: NVRM Xid, "fallen off the bus", IOMMU / DMAR faults, a
    refused module (at most 20, stripped)."""
    kernel_log_read: bool | None = None
    """Whether the kernel log was read: True when a live run read /dev/kmsg, False when this user
    may not read it (kernel.dmesg_restrict, a container), None when the document does not say
    (a ticket, or tfdoctor before this field)."""
    prime_profile: str | None = None
    """nvidia-prime's profile of a hybrid-graphics laptop (Ubuntu's prime-select): "nvidia",
    "intel" (the NVIDIA GPU is off and its modules blacklisted) or "on-demand"; None when
    nvidia-prime is not in use (no /etc/prime-discrete) or not collected."""


@dataclass(frozen=True, slots=True)
class Facts:
    """One machine, as probed at one moment."""

    schema_version: str
    """SCHEMA_VERSION of the tfdoctor that wrote the document."""
    tool_version: str
    """tfdoctor version that collected the facts, e.g. "0.1.0"."""
    collected_at: str
    """UTC time the probes finished, ISO 8601 to the second, e.g. "2025-06-01T12:00:00+00:00"."""
    python: PythonFacts
    """The target interpreter (--python); always present, with error set when it could not be probed."""
    platform: PlatformFacts = PlatformFacts()
    """Operating system, C library, CPU features, container and WSL."""
    env: dict[str, str] = field(default_factory=dict)
    """Allowlisted environment variables that change how TensorFlow finds or uses GPUs."""
    driver: DriverFacts = DriverFacts()
    """The NVIDIA kernel driver and NVML."""
    cuda_driver: CudaDriverFacts = CudaDriverFacts()
    """libcuda.so.1 as TensorFlow would load it."""
    tensorflow: TensorFlowFacts | None = None
    """The TensorFlow installed in the target; None when it has none or the target could not be probed."""
    libraries: tuple[LibraryFacts, ...] = ()
    """CUDA libraries this TensorFlow will dlopen, in TF's load order; empty without a CUDA TensorFlow.
    A ticket's are only those its user says are not found (path None); "libraries" then stays in
    `unknown`, since a library nobody named may be missing too."""
    xla: XlaFacts | None = None
    """ptxas and libdevice as XLA will find them; None without a CUDA TensorFlow."""
    tf_loader: TfLoaderFacts | None = None
    """TensorFlow's own DSO loader's answers (full run only); None under --quick or without a CUDA
    TensorFlow."""
    smoke: SmokeFacts | None = None
    """Results of smoke work in the target interpreter; None when it did not run (--quick)."""
    probe_issues: tuple[ProbeIssue, ...] = ()
    """Probes that timed out, crashed or failed, in the order they ended."""
    toolkits: tuple[ToolkitFacts, ...] = ()
    """Installed CUDA toolkits (not what TensorFlow loads: see libraries), the one nvcc on PATH first."""
    host: HostFacts = HostFacts()
    """Kernel-log lines about the GPU."""
    unknown: tuple[str, ...] = ()
    """Facts that were not collected (a probe could not read them, a ticket was silent), as paths
    from UNKNOWABLE; their false or empty values then mean "unknown", never "absent"."""
    provenance: dict[str, str] = field(default_factory=dict)
    """Fact path -> where it was read, e.g. "driver.driver_version": "nvidia-smi, line 12" (triage);
    empty for a live probe run."""
    assumed: tuple[str, ...] = ()
    """Fact paths nobody showed but taken from the compatibility tables (a ticket's TensorFlow build
    configuration, from its release's tested one; its GPUs' compute capability, from their names in
    NVIDIA's list): checks judge with them, and triage still asks for the real value."""
    intent: IntentFacts = IntentFacts()
    """What a ticket's words say the user is after and saw (a GPU, the [and-cuda] install, the
    release the code worked with, what pip was asked to install)."""
    node: NodeFacts = NodeFacts()
    """The collecting machine and user (a ticket's, when it shows them); redacted documents carry
    their pseudonyms."""
    tensorrt: TensorRtFacts | None = None
    """TF-TRT's TensorRT, wanted and installed, where a ticket shows either; None otherwise."""

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

    def known(self, path: str) -> bool:
        """Whether the fact at `path` (a key of UNKNOWABLE or below one) was collected.

        A key present in `env` or `python.packages` is known even when the whole map is not.
        """
        head, _, key = path.partition(".")
        if head == "env" and key and key in self.env:
            return True
        if path.startswith("python.packages.") and path.split(".", 2)[2] in self.python.packages:
            return True
        missing = set(self.unknown) | implied_unknown(self)
        parts = path.split(".")
        return not any(".".join(parts[:i]) in missing for i in range(1, len(parts) + 1))

    def unknown_of(self, *paths: str) -> tuple[str, ...]:
        """Those of `paths` that were not collected."""
        return tuple(p for p in paths if not self.known(p))


def implied_unknown(facts: Facts) -> set[str]:
    """Unknowns that follow from a failed probe (also for schema 1 documents, which lack the list)."""
    out: set[str] = set()
    if facts.python.error:
        out |= {"tensorflow", "python.version", "python.packages", "libraries", "xla"}
    # A crashing NVML is evidence (a broken driver); one that hung told us nothing.
    if facts.driver.nvml_error == "timed out" and facts.driver.device_count is None:
        out.add("driver")
    if facts.cuda_driver.crash == "timed out":
        out.add("cuda_driver")
    return out


T = TypeVar("T")


_PLAIN = frozenset({str, int, float, bool, type(None)})
"""Types that are their own JSON form (exactly these: a str Enum is not)."""
_STR = frozenset({str})


def _to_plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        if set(map(type, value)) <= _PLAIN:  # (the types gathered in C, no call per item)
            return list(value)
        return [_to_plain(v) for v in value]
    if isinstance(value, dict):
        # A package map of 200 k names (a pasted pip list) is copied, not walked value by value.
        if set(map(type, value)) <= _STR and set(map(type, value.values())) <= _PLAIN:
            return dict(value)
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
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
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
        if (item in (str, int, bool) and set(map(type, data)) <= _STR
                and set(map(type, data.values())) <= {item}):
            return dict(data)  # what the loop below gives, for a 200 k-package map without its calls
        return {str(k): _from_plain(item, v, f"{where}.{k}") for k, v in data.items()}
    if tp is Any:
        return data
    if tp is float and isinstance(data, int | float) and not isinstance(data, bool):
        return float(data)
    if tp in (str, int, bool) and type(data) is tp:
        return data
    raise ValueError(f"{where}: expected {getattr(tp, '__name__', tp)}, got {type(data).__name__}")
