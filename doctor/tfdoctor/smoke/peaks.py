"""Arithmetic of the performance verdicts: percent of spec peak, NCCL bus bandwidth, Tensor Cores.

Pure functions over measured numbers, tested against recorded GPU results.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tfdoctor.facts import NvmlSample


def allreduce_bandwidth(metrics: dict[str, float]) -> dict[str, float]:
    """algbw and busbw of an all-reduce, as nccl-tests computes them.

    nccl-tests doc/PERFORMANCE.md: algbw = S / t; for all-reduce busbw = algbw * 2(n-1)/n,
    which makes the figure comparable with the link's hardware bandwidth for any n.
    """
    size, seconds, n = (
        metrics.get(k) for k in ("allreduce_bytes", "allreduce_seconds", "replicas")
    )
    if not size or not seconds or not n or seconds <= 0 or n < 1:
        return {}
    algbw = size / seconds / 1e9
    return {"algbw_gbs": algbw, "busbw_gbs": algbw * 2.0 * (n - 1) / n}


def percent_of_peak(measured: float | None, peak: float | None) -> float | None:
    if measured is None or not peak or peak <= 0:
        return None
    return 100.0 * measured / peak


# cuBLAS/cuDNN/CUTLASS kernel names that only exist as Tensor Core (MMA) code paths:
# HMMA/XMMA/GMMA instruction families, "tensorop" CUTLASS kernels, the sm80 "16816"/"1688"
# MMA shapes, Hopper wgmma and Blackwell tcgen05 kernels.
_TC_KERNEL = re.compile(
    r"(hmma|xmma|gmma|wgmma|tensorop|tcgen05|s16816|h16816|bf16816|s1688|h1688|i8816|"
    r"884gemm|wmma|_tc_|mma_sync)",
    re.IGNORECASE,
)


def tensor_core_kernels(names: Iterable[str]) -> tuple[str, ...]:
    """The kernel names that prove Tensor Core use."""
    return tuple(n for n in names if _TC_KERNEL.search(n))


@dataclass(frozen=True, slots=True)
class TensorCoreVerdict:
    """Whether Tensor Cores ran, how sure we are, and the evidence."""

    verdict: str
    """used, not-used, not-available (GPU has none), unknown."""
    confidence: str
    """high (kernel names), medium (throughput ratio), low (capability only)."""
    reason: str


def tensor_core_verdict(
    cc: str | None, ratio: float | None, kernels: tuple[str, ...], profiled: bool
) -> TensorCoreVerdict:
    """Judge the evidence: kernel names beat the fp16/fp32 ratio, which beats the capability.

    Tensor Cores exist from compute capability 7.0 (Volta). With them, dense fp16 matmul runs
    several times faster than fp32 (V100: 125 vs 15.7 TFLOPS; A100: 312 vs 19.5); without,
    at best 2x (packed half2 arithmetic) - hence the 2.5x threshold.
    """
    major = _major(cc)
    if major is not None and major < 7:
        return TensorCoreVerdict(
            "not-available", "high", f"compute capability {cc} has no Tensor Cores"
        )
    tc = tensor_core_kernels(kernels)
    if tc:
        return TensorCoreVerdict("used", "high", f"Tensor Core kernel ran: {tc[0]}")
    if ratio is not None and ratio >= 2.5:
        return TensorCoreVerdict("used", "medium", f"fp16 matmul ran {ratio:.1f}x faster than fp32")
    if profiled and kernels and ratio is not None:
        return TensorCoreVerdict(
            "not-used", "high", f"only non-Tensor-Core kernels ran and fp16 was {ratio:.1f}x fp32"
        )
    if ratio is not None:
        return TensorCoreVerdict("not-used", "medium", f"fp16 matmul only {ratio:.1f}x fp32")
    if major is not None:
        return TensorCoreVerdict(
            "unknown", "low", f"compute capability {cc} has Tensor Cores; not measured"
        )
    return TensorCoreVerdict("unknown", "low", "no measurement")


def _major(cc: str | None) -> int | None:
    try:
        return int(str(cc).split(".")[0]) if cc else None
    except ValueError:
        return None


def power_cap_is_default(limit_w: float | None, default_w: float | None) -> bool:
    """Whether the enforced power limit is the board's default (within 5 %). A GPU under full
    load runs at that cap and NVML says sw_power_cap: seen on an H100 SXM at 700 W doing bf16
    matmuls at 68 % of its spec peak (tests/recorded/h100-driver-580), which is no fault. Only a
    limit someone lowered (nvidia-smi -pl) is one; unknown either way counts as not default."""
    return bool(limit_w and default_w and limit_w >= 0.95 * default_w)


def likely_causes(samples: tuple[NvmlSample, ...]) -> tuple[str, ...]:
    """What NVML saw that would slow the GPU down: throttling, low clocks, a power cap (lowered,
    or of unknown default), PCIe link."""
    if not samples:
        return ()
    causes: list[str] = []
    default_cap = all(power_cap_is_default(s.power_limit_w, s.power_default_limit_w) for s in samples)
    normal = {"gpu_idle"} | ({"sw_power_cap"} if default_cap else set())
    reasons = sorted({r for s in samples for r in s.throttle_reasons if r not in normal})
    if reasons:
        causes.append("clock throttled: " + ", ".join(reasons))
    clocks = [
        (s.sm_clock_mhz, s.sm_clock_max_mhz)
        for s in samples
        if s.sm_clock_mhz and s.sm_clock_max_mhz
    ]
    if clocks:
        best = max(c for c, _ in clocks)
        top = clocks[0][1] or 0
        if best < 0.8 * top:
            causes.append(f"SM clock peaked at {best} MHz of {top} MHz max")
    power = [(s.power_w, s.power_limit_w) for s in samples if s.power_w and s.power_limit_w]
    if power and not default_cap and max(p for p, _ in power) >= 0.95 * power[0][1]:
        default = next((s.power_default_limit_w for s in samples if s.power_default_limit_w), None)
        causes.append(f"at the power limit ({power[0][1]:.0f} W"
                      + (f", lowered from the board's default {default:.0f} W)" if default else ")"))
    # Links drop to a lower generation when idle to save power: judge the best seen under load.
    gen = max((s.pcie_gen for s in samples if s.pcie_gen), default=None)
    gen_max = max((s.pcie_gen_max for s in samples if s.pcie_gen_max), default=None)
    width = max((s.pcie_width for s in samples if s.pcie_width), default=None)
    width_max = max((s.pcie_width_max for s in samples if s.pcie_width_max), default=None)
    if gen and gen_max and gen < gen_max:
        causes.append(f"PCIe link at gen {gen} of {gen_max}")
    if width and width_max and width < width_max:
        causes.append(f"PCIe link x{width} of x{width_max}")
    util = [s.utilization_pct for s in samples if s.utilization_pct is not None]
    if util and max(util) < 50:
        causes.append(f"GPU utilisation peaked at {max(util)} %")
    return tuple(causes)
