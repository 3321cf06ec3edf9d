"""Performance checks over the smoke run: Tensor Cores, throughput against spec, multi-GPU."""

from __future__ import annotations

from collections.abc import Iterator

from tfdoctor.checks.smoke import smoke_facts
from tfdoctor.checks.smoke_inputs import gpu_expected, recipe_results
from tfdoctor.facts import Facts, RecipeResult
from tfdoctor.findings import Finding, Severity
from tfdoctor.registry import CheckConfig, NotApplicable, NotRun, check
from tfdoctor.smoke import peaks

LOW_PEAK_PCT = 50.0
"""Below this share of the spec peak a result is low (cuBLAS large GEMMs reach 70-90 %)."""


def _gpu_results(
    facts: Facts, config: CheckConfig, name: str
) -> list[tuple[RecipeResult, str | None, str | None]]:
    """(result, GPU model, compute capability) for a recipe's passed GPU runs.

    NotRun when there are none to judge and a GPU should have been usable (the recipe did not
    run or failed, or TensorFlow saw no GPU); NotApplicable when no GPU was expected.
    """
    s = smoke_facts(facts)
    results = recipe_results(s, name)
    gpu = [r for r in results if (r.device or "").startswith("GPU")]
    if gpu and not [r for r in gpu if r.status == "passed"]:
        raise NotRun(f"the {name} recipe did not pass on any GPU (see smoke-recipes)")
    if not gpu:
        if not gpu_expected(facts, config):
            raise NotApplicable
        raise NotRun("no GPU visible to TensorFlow (see smoke-gpus)")
    out = []
    for r in gpu:
        if r.status == "passed":
            dev = next((d for d in s.devices if d.name == r.device), None)
            out.append((r, dev.model if dev else None, dev.compute_capability if dev else None))
    return out


@check(
    id="smoke-tensor-cores",
    title="Tensor Cores are used",
    area="smoke",
    needs="smoke",
    emits=("tensor-cores-used", "tensor-cores-not-used", "tensor-cores-unknown"),
)
def check_tensor_cores(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """fp16/bf16 matmuls on a Volta-or-newer GPU should run on Tensor Cores: judge the evidence."""
    judged = False
    for r, model, cc in _gpu_results(facts, config, "tensor-cores"):
        kernels = tuple(k for k in r.info.get("kernels", "").split("\n") if k)
        v = peaks.tensor_core_verdict(
            cc, r.metrics.get("fp16_vs_fp32"), kernels, "profiler_error" not in r.info
        )
        if v.verdict == "not-available":
            continue
        judged = True
        evidence = {
            "device": r.device or "?",
            "model": model or "?",
            "compute_capability": cc or "?",
            "confidence": v.confidence,
            "reason": v.reason,
            **{
                k: f"{r.metrics[k]:.2f}" for k in ("fp16_vs_fp32", "bf16_vs_fp32") if k in r.metrics
            },
            **({"kernels": "\n".join(kernels[:8])} if kernels else {}),
            **({"profiler": r.info["profiler_error"]} if "profiler_error" in r.info else {}),
        }
        fid, sev, text = {
            "used": ("tensor-cores-used", Severity.INFO, "Tensor Cores are used"),
            "not-used": (
                "tensor-cores-not-used",
                Severity.WARNING,
                "Tensor Cores do not appear to be used",
            ),
        }.get(
            v.verdict, ("tensor-cores-unknown", Severity.INFO, "Tensor Core use could not be shown")
        )
        yield Finding(
            fid,
            sev,
            f"{text} on {r.device} ({v.confidence} confidence).",
            evidence,
            None
            if fid == "tensor-cores-used"
            else "Use mixed precision (mixed_float16 / mixed_bfloat16) and dimensions that are "
            "multiples of 8.",
        )
    if not judged:
        raise NotApplicable  # no GPU with Tensor Cores (pre-Volta): nothing to judge


@check(
    id="smoke-throughput",
    title="GPU throughput is near its spec",
    area="smoke",
    needs="smoke",
    emits=("gpu-throughput-low",),
)
def check_throughput(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Measured matmul TFLOPS and memory bandwidth against the GPU model's spec peak."""
    from tfdoctor import compat  # the GPU spec table; imported here so a replay needs no GPU

    judged = False
    for r, model, _cc in _gpu_results(facts, config, "throughput"):
        spec = compat.gpu_model(model) if model else None
        if spec is None:
            continue
        judged = True
        pairs = (
            ("fp32 matmul", "float32_tflops", spec.fp32_tflops, "TFLOPS"),
            ("fp16 matmul", "float16_tflops", spec.fp16_tensor_tflops, "TFLOPS"),
            ("bf16 matmul", "bfloat16_tflops", spec.bf16_tensor_tflops, "TFLOPS"),
            ("memory bandwidth", "bandwidth_gbs", spec.bandwidth_gbs, "GB/s"),
        )
        low = []
        evidence = {"device": r.device or "?", "model": model or "?"}
        for label, key, peak, unit in pairs:
            pct = peaks.percent_of_peak(r.metrics.get(key), peak)
            if pct is None:
                continue
            evidence[label] = f"{r.metrics[key]:.1f} {unit} = {pct:.0f} % of {peak:g}"
            if pct < LOW_PEAK_PCT:
                low.append(f"{pct:.0f} % of expected {label}")
        if not low:
            continue
        causes = peaks.likely_causes(r.nvml)
        if causes:
            evidence["likely_causes"] = "; ".join(causes)
        yield Finding(
            "gpu-throughput-low",
            Severity.WARNING,
            f"{r.device} ({model}) reached only " + ", ".join(low) + ".",
            evidence,
            "; ".join(causes)
            if causes
            else "Check clocks, power cap and other processes on the GPU (nvidia-smi -q -d "
            "PERFORMANCE,POWER).",
        )
    if not judged:
        raise NotApplicable  # no spec peak for this GPU model in compat_tables: no reference


@check(
    id="smoke-multi-gpu",
    title="Multi-GPU all-reduce and scaling",
    area="smoke",
    needs="smoke",
    emits=("nccl-not-run", "nccl-allreduce-measured", "multi-gpu-scaling-low", "tf-log-multi-gpu-nan"),
)
def check_multi_gpu(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """NCCL all-reduce bus bandwidth (nccl-tests formula) and 1 -> N GPU step scaling; numbers
    that come out wrong only when several GPUs work together (the recipe's checked all-reduce, or
    a ticket's multi-GPU training that gives NaN) are the sign of broken peer-to-peer transfers,
    the cause TensorFlow's "no peering could be enabled" names too."""
    r = recipe_results(smoke_facts(facts), "multi-device")[0]
    if r.status == "skipped":
        raise NotApplicable
    if r.status == "failed" and r.info.get("wrong_results"):
        yield Finding(
            "tf-log-multi-gpu-nan",  # one id with TensorFlow's own P2P error: one cause
            Severity.ERROR,
            "Numbers come out wrong only when several GPUs work together: the sign of broken "
            "peer-to-peer transfers between them (an IOMMU or PCIe ACS redirecting P2P traffic, "
            "NCCL's troubleshooting guide), not of the model.",
            {"wrong_on": r.info["wrong_results"], "result": r.detail or "wrong"},
            "Look for DMAR / AMD-Vi faults in `sudo dmesg`; test with NCCL_P2P_DISABLE=1; if that "
            "cures it, disable ACS in the BIOS or put the IOMMU in pass-through (iommu=pt).",
            links=("https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"
                   "#pci-access-control-services-acs",),
        )
        return
    if r.status != "passed":
        raise NotRun("the multi-device recipe failed (see smoke-recipes)")
    kind = r.info.get("cross_device_ops", "?")
    if kind != "nccl":
        # Say what TensorFlow used, not a guess: NVML may list 4 GPUs while TensorFlow used
        # fewer (CUDA_VISIBLE_DEVICES, a missing library) or another cross-device op.
        devices = r.info.get("devices", "?")
        used = sum(d.upper().startswith("GPU") for d in devices.split(","))
        why = (f"TensorFlow's strategy had {used} GPU(s) to use" if used < 2
               else f"TensorFlow's strategy chose {kind} for {used} GPUs")
        listed = f" (NVML lists {len(facts.driver.gpus)})" if facts.driver.gpus else ""
        yield Finding(
            "nccl-not-run",
            Severity.INFO,
            f"NCCL was not exercised: {why}{listed}; the strategy path ran with "
            f"{kind} over {devices}.",
            {"cross_device_ops": kind, "devices": devices},
        )
        return
    n = int(r.metrics.get("replicas", 0))
    evidence: dict[str, str] = {
        "gpus": str(n),
        **{
            k: f"{r.metrics[k]:.2f}"
            for k in ("algbw_gbs", "busbw_gbs", "scaling_efficiency")
            if k in r.metrics
        },
    }
    yield Finding(
        "nccl-allreduce-measured",
        Severity.INFO,
        f"NCCL all-reduce over {n} GPUs is correct; bus bandwidth "
        f"{r.metrics.get('busbw_gbs', 0):.1f} GB/s.",
        evidence,
    )
    eff = r.metrics.get("scaling_efficiency")
    if eff is not None and eff < 0.7:
        yield Finding(
            "multi-gpu-scaling-low",
            Severity.WARNING,
            f"A data-parallel step on {n} GPUs ran at {eff:.0%} of the one-GPU speed.",
            evidence,
            "Check the GPU interconnect (nvidia-smi topo -m) and PCIe links.",
        )
