"""The GPU table: one row per GPU NVML lists, with the smoke run's throughput against spec.

Everything comes from the facts (NVML's GPU list, the smoke `throughput` and `multi-device`
recipes) and the GPU spec table (compat_tables/gpus.toml); nothing is measured here.
"""

from __future__ import annotations

from tfdoctor.facts import Facts, GpuFacts, NvmlSample, RecipeResult
from tfdoctor.pictures.model import Bar, GpuRow, GpuTable, TopologyMatrix
from tfdoctor.pictures.topology import topology_matrix

LOW_PCT = 50.0
"""A bar under this share of its spec peak is flagged "low" (the same line as the
smoke-throughput check's LOW_PEAK_PCT: cuBLAS large GEMMs reach 70-90 %)."""

METRICS = (
    ("fp32", "float32_tflops", "fp32_tflops", "TFLOPS"),
    ("fp16", "float16_tflops", "fp16_tensor_tflops", "TFLOPS"),
    ("bf16", "bfloat16_tflops", "bf16_tensor_tflops", "TFLOPS"),
    ("memory", "bandwidth_gbs", "bandwidth_gbs", "GB/s"),
)
"""(bar label, the throughput recipe's metric, the GpuModel spec field, unit)."""


def gpu_table(facts: Facts) -> GpuTable | None:
    """The GPU table of these facts; None when NVML listed no GPU."""
    gpus = facts.driver.gpus
    if not gpus:
        return None
    measured, unmatched = _measured_by_gpu(facts)
    smoke = facts.smoke
    note = None
    if smoke is None:
        note = "Throughput not measured: the smoke run did not run (--quick, or a ticket)."
    elif not any(r.name == "throughput" for r in smoke.recipes):
        note = f"Throughput not measured: the smoke run ({smoke.outcome}) has no throughput result."
    rows = []
    sources: list[str] = []
    for g in gpus:
        result = measured.get(g.index)
        bars = () if note else _bars(g, result, sources)
        rows.append(_row(g, result, bars))
    allreduce = _allreduce(facts)
    matrix = _topology(facts, allreduce.value if allreduce else None)
    return GpuTable(
        rows=tuple(rows),
        peak_source=", ".join(dict.fromkeys(sources)) or None,
        note=note,
        allreduce=None if matrix else allreduce,
        unmatched=tuple(unmatched),
        topology=matrix,
    )


def _topology(facts: Facts, busbw: float | None) -> TopologyMatrix | None:
    """The machine's topology facts in the cluster's `topology[]` shape, as a matrix (one
    reading of them: pictures/topology.py and cluster/topology.py's prediction)."""
    topo = facts.driver.topology
    if topo is None:
        return None
    shape = {
        "gpus": [{"index": g.index, "name": g.name, "pcie_gen": g.pcie_gen_current,
                  "pcie_width": g.pcie_width_current} for g in facts.driver.gpus],
        "nvlink": [list(links) if links is not None else None for links in topo.nvlink],
        "p2p": {"read": [list(r) for r in topo.p2p_read or ()],
                "nvlink": [list(r) for r in topo.p2p_nvlink or ()]},
    }
    return topology_matrix(shape, busbw, "this machine")


def _measured_by_gpu(facts: Facts) -> tuple[dict[int, RecipeResult], list[str]]:
    """NVML index -> the throughput result measured on it, and the results not matched.

    TensorFlow's GPU:i is the i-th GPU CUDA_VISIBLE_DEVICES leaves visible; CUDA orders those
    fastest first, which is NVML's (PCI) order for identical GPUs. A result whose device
    model names another GPU than the one at that place is not attached to any row.
    """
    from tfdoctor.checks.common import visible_gpus

    smoke = facts.smoke
    if smoke is None:
        return {}, []
    visible = list(visible_gpus(facts))
    out: dict[int, RecipeResult] = {}
    unmatched = []
    for r in smoke.recipes:
        device = r.device or ""
        if r.name != "throughput" or not device.startswith("GPU:"):
            continue
        try:
            place = int(device.split(":", 1)[1])
        except ValueError:
            place = -1
        model = next((d.model for d in smoke.devices if d.name == device), None)
        gpu = visible[place] if 0 <= place < len(visible) else None
        if gpu is None or (model and gpu.name and model != gpu.name):
            unmatched.append(f"{device} ({model or 'model unknown'}): not matched to an NVML GPU")
            continue
        out[gpu.index] = r
    return out, unmatched


def _bars(g: GpuFacts, result: RecipeResult | None, sources: list[str]) -> tuple[Bar, ...]:
    from tfdoctor import compat  # the spec table, loaded only when there is something to draw

    if result is None:
        return (Bar("throughput", None, None, "not measured (no throughput result on this GPU)"),)
    if result.status != "passed":
        why = f"{result.status}: {result.detail}" if result.detail else result.status
        return (Bar("throughput", None, None, f"not measured (throughput recipe {why})"),)
    spec = compat.gpu_model(g.name) if g.name else None
    if spec is not None:
        sources.append(f"{spec.name} (compat_tables/gpus.toml)")
    bars = []
    for label, key, field, unit in METRICS:
        value = result.metrics.get(key)
        peak = getattr(spec, field) if spec is not None else None
        bars.append(_bar(label, value, peak, unit))
    return tuple(bars)


def _bar(label: str, value: float | None, peak: float | None, unit: str) -> Bar:
    if value is None:
        return Bar(label, None, peak, "not measured")
    if not peak:
        return Bar(label, value, None, f"{value:.3g} {unit} (no spec peak for this model)")
    pct = 100.0 * value / peak
    return Bar(label, value, peak, f"{pct:.0f} % of {peak:g} {unit}",
               "low" if pct < LOW_PCT else None)


def _row(g: GpuFacts, result: RecipeResult | None, bars: tuple[Bar, ...]) -> GpuRow:
    seen = _throttled_while_measured(result.nvml if result else (), g.index)
    throttle = _throttle(g.throttle_reasons, seen)
    pcie_low = bool(g.pcie_width_current and g.pcie_width_max and
                    g.pcie_width_current < g.pcie_width_max)
    cells = (
        str(g.index),
        g.name or "?",
        g.compute_capability or "?",
        _memory(g.memory_used_mib, g.memory_total_mib),
        f"{_link(g.pcie_gen_current, g.pcie_width_current)}/"
        f"{_link(g.pcie_gen_max, g.pcie_width_max)}",
        f"{g.temperature_c}C" if g.temperature_c is not None else "?",
        _mig(g),
        throttle,
    )
    warn = any(b.flag for b in bars) or bool(g.throttle_reasons) or bool(seen) or pcie_low
    return GpuRow(g.index, cells, result.device if result else None, bars, warn)


def _memory(used: int | None, total: int | None) -> str:
    """`1.2/79.6 GiB`; `?` for what NVML did not say (used is not collected by nvidia-smi's
    fallback, nor in documents from before the field)."""
    def gib(mib: int | None) -> str:
        return "?" if mib is None else f"{mib / 1024:.1f}"

    return f"{gib(used)}/{gib(total)} GiB"


def _link(gen: int | None, width: int | None) -> str:
    return f"gen{gen if gen is not None else '?'}x{width if width is not None else '?'}"


def _mig(g: GpuFacts) -> str:
    if g.mig_mode is None:
        return "n/a"
    if not g.mig_mode:
        return "off"
    return f"on, {len(g.mig_devices)} dev" if g.mig_devices is not None else "on"


def _throttle(reasons: tuple[str, ...] | None, seen: tuple[str, ...]) -> str:
    at_probe = "?" if reasons is None else ", ".join(reasons) or "none"
    extra = [r for r in seen if r not in (reasons or ())]
    return at_probe + (f"; measuring: {', '.join(extra)}" if extra else "")


def _throttled_while_measured(samples: tuple[NvmlSample, ...], index: int) -> tuple[str, ...]:
    """Clock-event reasons NVML sampled on this GPU during its throughput run, idle left out."""
    return tuple(sorted({r for s in samples if s.gpu == index for r in s.throttle_reasons
                         if r != "gpu_idle"}))


def _allreduce(facts: Facts) -> Bar | None:
    """The multi-device recipe's NCCL busbw; None unless it ran NCCL over two or more GPUs."""
    smoke = facts.smoke
    r = smoke.recipe("multi-device") if smoke else None
    if r is None or r.status != "passed" or r.info.get("cross_device_ops", "nccl") != "nccl":
        return None
    busbw = r.metrics.get("busbw_gbs")
    n = int(r.metrics.get("replicas", 0))
    if n < 2:
        return None
    if busbw is None:
        return Bar("all-reduce", None, None, f"busbw not measured over {n} GPUs")
    return Bar("all-reduce", busbw, None,
               f"{busbw:.1f} GB/s busbw over {n} GPUs (NCCL); no topology here to predict "
               "from (tfdoctor cluster has one)")
