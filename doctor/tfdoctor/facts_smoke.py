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
    """Short name, e.g. "GPU:0"."""
    device_type: str
    model: str | None = None
    """GPU name as TF reports it (the same string as NVML's, e.g. "NVIDIA A100-SXM4-40GB")."""
    compute_capability: str | None = None


@dataclass(frozen=True, slots=True)
class LogCause:
    """A known TensorFlow log line seen in the child's output, mapped to a cause id."""

    id: str
    """Stable kebab-case cause id from smoke/logmap.py, e.g. "cudnn-version-mismatch"."""
    line: str
    subject: str | None = None
    """What the line is about: a library file, an error name, a version pair."""
    recipe: str | None = None
    """Recipe during which the line was logged."""


@dataclass(frozen=True, slots=True)
class NvmlSample:
    """One NVML reading of one GPU taken while the smoke work ran."""

    gpu: int
    t: float
    """Wall-clock seconds (time.time())."""
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    utilization_pct: int | None = None
    temperature_c: int | None = None
    throttle_reasons: tuple[str, ...] = ()
    pcie_gen: int | None = None
    pcie_gen_max: int | None = None
    pcie_width: int | None = None
    pcie_width_max: int | None = None


@dataclass(frozen=True, slots=True)
class RecipeResult:
    """One smoke recipe on one device."""

    name: str
    device: str | None = None
    status: str = "not-run"
    """passed, failed (wrong numbers), error (raised), skipped, timeout, crashed, not-run."""
    seconds: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    info: dict[str, str] = field(default_factory=dict)
    detail: str | None = None
    """One line: why it did not pass."""
    log_tail: tuple[str, ...] = ()
    """Last lines TensorFlow logged during this recipe (known noise removed)."""
    log_lines: int = 0
    """How many lines it logged in all."""
    causes: tuple[LogCause, ...] = ()
    nvml: tuple[NvmlSample, ...] = ()


@dataclass(frozen=True, slots=True)
class SmokeFacts:
    """TensorFlow work run in a child of the target interpreter, and how that child ended."""

    python: str
    outcome: str
    """completed, timeout, crashed, exited, garbage, could-not-start, budget, cancelled."""
    exit: str | None = None
    """How the child ended when not cleanly: "SIGSEGV", "SIGILL", "status 1", "killed after 60 s"."""
    seconds: float = 0.0
    limit_seconds: float | None = None
    """The time limit that was hit (per recipe or whole budget), when one was."""
    tf_version: str | None = None
    is_cuda_build: bool | None = None
    devices: tuple[SmokeDevice, ...] = ()
    recipes: tuple[RecipeResult, ...] = ()
    causes: tuple[LogCause, ...] = ()
    """Every recognised log line of the run, in order."""
    log_tail: tuple[str, ...] = ()
    """Last lines of the child's stderr (known noise removed)."""
    log_lines: int = 0
    garbage: tuple[str, ...] = ()
    """First stdout lines that were not the smoke protocol."""
    nvml_error: str | None = None
    """Why no NVML samples were taken (None when sampling worked or was not needed)."""
    survivors: tuple[int, ...] = ()
    """Pids of the child's process group still alive after the run (must stay empty)."""

    def recipe(self, name: str, device: str | None = None) -> RecipeResult | None:
        """The result of a recipe, on a device when given."""
        return next((r for r in self.recipes if r.name == name and
                     (device is None or r.device == device)), None)
