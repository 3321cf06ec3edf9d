"""The smoke part of the facts snapshot: TensorFlow work run in a child of the target interpreter.

Part of `tfdoctor.facts` (which re-exports every class here and round-trips them in
`Facts.to_dict()` / `Facts.from_dict()`); split out only to keep facts.py short. `None` always
means "not collected".
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class SmokeDevice:
    """A device TensorFlow itself listed in the smoke child."""

    name: str
    """Short name, e.g. "GPU:0", "CPU:0"."""
    device_type: str
    """"CPU" or "GPU" as tf.config.list_physical_devices reports it ("?" when missing)."""
    model: str | None = None
    """GPU name as TF reports it (the same string as NVML's, e.g. "NVIDIA A100-SXM4-40GB")."""
    compute_capability: str | None = None
    """"major.minor" from tf.config.experimental.get_device_details; None for CPUs."""


@dataclass(frozen=True, slots=True)
class LogCause:
    """A known TensorFlow log line seen in the child's output, mapped to a cause id."""

    id: str
    """Stable kebab-case cause id from smoke/logmap.py, e.g. "cudnn-version-mismatch"."""
    line: str
    """The log line, stripped, at most 500 characters."""
    subject: str | None = None
    """What the line is about: a library file, an error name, a version pair."""
    recipe: str | None = None
    """Recipe during which the line was logged; None before the first recipe began."""


@dataclass(frozen=True, slots=True)
class NvmlSample:
    """One NVML reading of one GPU taken while the smoke work ran."""

    gpu: int
    """NVML device index (NVML's order, not CUDA's)."""
    t: float
    """Wall-clock seconds (time.time())."""
    sm_clock_mhz: int | None = None
    """SM clock in MHz (nvmlDeviceGetClockInfo, NVML_CLOCK_SM)."""
    sm_clock_max_mhz: int | None = None
    """Maximum SM clock in MHz (nvmlDeviceGetMaxClockInfo, NVML_CLOCK_SM)."""
    power_w: float | None = None
    """Power draw in W (nvmlDeviceGetPowerUsage, mW / 1000)."""
    power_limit_w: float | None = None
    """Enforced power limit in W (nvmlDeviceGetEnforcedPowerLimit, mW / 1000)."""
    power_default_limit_w: float | None = None
    """The board's default power limit in W (nvmlDeviceGetPowerManagementDefaultLimit, mW / 1000)."""
    utilization_pct: int | None = None
    """Percent of the last sample period in which a kernel ran, 0-100 (nvmlDeviceGetUtilizationRates .gpu)."""
    temperature_c: int | None = None
    """GPU core temperature in degrees Celsius (nvmlDeviceGetTemperature, NVML_TEMPERATURE_GPU)."""
    throttle_reasons: tuple[str, ...] = ()
    """Active pynvml `nvmlClocksThrottleReason*` names in snake case, sorted, e.g. ("gpu_idle",
    "sw_power_cap"); unlike GpuFacts, gpu_idle and aliases (user_defined_clocks) stay; empty when the call
    failed."""
    pcie_gen: int | None = None
    """Current PCIe link generation (nvmlDeviceGetCurrPcieLinkGeneration)."""
    pcie_gen_max: int | None = None
    """Highest PCIe link generation (nvmlDeviceGetMaxPcieLinkGeneration)."""
    pcie_width: int | None = None
    """Current PCIe link width in lanes (nvmlDeviceGetCurrPcieLinkWidth)."""
    pcie_width_max: int | None = None
    """Highest PCIe link width in lanes (nvmlDeviceGetMaxPcieLinkWidth)."""


@dataclass(frozen=True, slots=True)
class RecipeResult:
    """One smoke recipe on one device."""

    name: str
    """Recipe name: "import" or one of smoke/recipes.py RECIPES (devices, matmul, conv2d, ...)."""
    device: str | None = None
    """TF device it ran on, e.g. "GPU:0"; None for recipes run once (import, devices, multi-device) and
    not-run ones."""
    status: str = "not-run"
    """passed, failed (wrong numbers), error (raised, or a status the child should not send), skipped,
    timeout, crashed, not-run."""
    seconds: float | None = None
    """Wall-clock seconds it took (the child's clock; the parent's for one that never reported); None when not
    run."""
    metrics: dict[str, float] = field(default_factory=dict)
    """Finite numbers it measured, e.g. float32_rel_err, float32_tflops, bandwidth_gbs."""
    info: dict[str, str] = field(default_factory=dict)
    """Text it reported (placement.GPU:0, float16.error, traceback, ...); non-finite metrics land here as
    "inf" or "nan"."""
    detail: str | None = None
    """One line: why it did not pass."""
    log_tail: tuple[str, ...] = ()
    """Last lines (at most 25) TensorFlow logged during this recipe (known noise removed)."""
    log_lines: int = 0
    """How many lines it logged in all (known noise and blank lines not counted)."""
    causes: tuple[LogCause, ...] = ()
    """Recognised log lines of this recipe, once per (id, subject), in order."""
    nvml: tuple[NvmlSample, ...] = ()
    """NVML samples of every GPU taken between this recipe's begin and result; empty when none were taken."""


@dataclass(frozen=True, slots=True)
class SmokeFacts:
    """TensorFlow work run in a child of the target interpreter, and how that child ended."""

    python: str
    """The interpreter the child ran in (--python as given)."""
    outcome: str
    """completed, timeout, crashed, exited, garbage, could-not-start, budget, cancelled, internal-error (a bug
    in tfdoctor's runner), ticket (not a run of tfdoctor's: TensorFlow output pasted in a ticket, read by
    `tfdoctor triage`)."""
    exit: str | None = None
    """How the child ended when not cleanly: "SIGSEGV", "status 1", "killed after the time limit of 60 s in
    matmul on GPU:0", "cancelled", the OSError (could-not-start), the exception (internal-error)."""
    seconds: float = 0.0
    """Wall-clock seconds of the whole run (tfdoctor's monotonic clock), to the millisecond."""
    limit_seconds: float | None = None
    """The time limit that was hit (per recipe or whole budget), when one was."""
    tf_version: str | None = None
    """`tf.__version__` of the TensorFlow the child imported; None when the import failed."""
    is_cuda_build: bool | None = None
    """is_cuda_build of tf.sysconfig.get_build_info() at run time; None when the import failed or it lacks the
    key."""
    devices: tuple[SmokeDevice, ...] = ()
    """Physical devices (CPU and GPU) TensorFlow listed in the devices recipe."""
    recipes: tuple[RecipeResult, ...] = ()
    """One result per recipe and device in run order, then the one that never reported, then those not run."""
    causes: tuple[LogCause, ...] = ()
    """Every recognised log line of the run, once per (id, subject), in order."""
    log_tail: tuple[str, ...] = ()
    """Last lines (at most 25) of the child's stderr (known noise removed)."""
    log_lines: int = 0
    """How many stderr lines the child wrote in all (known noise and blank lines not counted)."""
    garbage: tuple[str, ...] = ()
    """First stdout lines (at most 5, 300 characters each) that were not the smoke protocol."""
    nvml_error: str | None = None
    """Why no NVML samples were taken, e.g. "NVMLError_LibraryNotFound: ..."; None when sampling worked or was
    not needed."""
    survivors: tuple[int, ...] = ()
    """Pids that outlived SIGKILL when the run ended: the child's process group and everything it
    started, found by the token in their environment (a `setsid` daemon too) or by holding the
    child's output pipes (must stay empty; a process in uninterruptible sleep is the only expected
    case)."""
    output_dropped: int = 0
    """Characters of the child's output read and dropped beyond the 8 MiB kept per stream."""

    def recipe(self, name: str, device: str | None = None) -> RecipeResult | None:
        """The result of a recipe, on a device when given."""
        return next((r for r in self.recipes if r.name == name and
                     (device is None or r.device == device)), None)
