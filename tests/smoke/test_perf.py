"""GPU-only branches judged from hand-written results: NCCL busbw, the Tensor Core verdict, peak
ratios with NVML samples; and the NVML sampler's real 'unavailable' path on this machine.

No figure here was recorded on a GPU (no machine that develops tfdoctor has one; the sampler's
real code runs against the stub NVML in test_nvml_sampler_stub.py). They are written by hand in
the formats the recipes and the sampler write, from NVIDIA's A100 SXM4 40GB datasheet: 1410 MHz
boost clock, 400 W maximum power, PCIe Gen4, 312 TFLOPS dense BF16/FP16 Tensor Core peak. Each
expectation below is worked out by hand from those figures, not read from compat_tables."""

from __future__ import annotations

import pytest
import tfdoctor.checks.smoke  # noqa: F401  (registers the smoke checks)
from conftest import make_facts
from tfdoctor.facts import Facts, NvmlSample, RecipeResult, SmokeDevice, SmokeFacts
from tfdoctor.findings import Severity
from tfdoctor.host import Host
from tfdoctor.registry import _REGISTRY, CheckConfig, run_check
from tfdoctor.smoke import peaks
from tfdoctor.smoke.nvml import NvmlSampler, parse_sample

A100 = SmokeDevice("GPU:0", "GPU", "NVIDIA A100-SXM4-40GB", "8.0")
A100_BF16_PEAK_TFLOPS = 312  # NVIDIA A100 datasheet, dense BF16 Tensor Core
# Hand-written sampler lines of a throttled A100 (the format of _nvml_sampler.py): the clock
# below the 1410 MHz boost, at the 400 W limit, thermal slowdown, a Gen3 link in a Gen4 slot.
SAMPLES = [
    parse_sample(line)
    for line in (
        '{"gpu": 0, "t": 100.5, "sm_clock_mhz": 1005, "sm_clock_max_mhz": 1410, "power_w": 399.0, '
        '"power_limit_w": 400.0, "utilization_pct": 100, "temperature_c": 88, '
        '"throttle_reasons": ["hw_thermal_slowdown", "sw_power_cap"], "pcie_gen": 3, '
        '"pcie_gen_max": 4, '
        '"pcie_width": 16, "pcie_width_max": 16}',
        '{"gpu": 0, "t": 101.0, "sm_clock_mhz": 1050, "sm_clock_max_mhz": 1410, "power_w": 400.0, '
        '"power_limit_w": 400.0, "utilization_pct": 100, "temperature_c": 89, '
        '"throttle_reasons": ["sw_power_cap"], "pcie_gen": 3, "pcie_gen_max": 4, "pcie_width": 16, '
        '"pcie_width_max": 16}',
    )
]


def _findings(check_id: str, facts: Facts):
    return run_check(_REGISTRY[check_id], facts, CheckConfig()).findings


def test_busbw_is_the_nccl_tests_formula() -> None:
    """nccl-tests all-reduce: busbw = algbw * 2(n-1)/n (8 GPUs: factor 1.75)."""
    bw = peaks.allreduce_bandwidth(
        {"allreduce_bytes": 1e9, "allreduce_seconds": 0.01, "replicas": 8}
    )
    assert bw == pytest.approx({"algbw_gbs": 100.0, "busbw_gbs": 175.0})
    assert peaks.allreduce_bandwidth({"allreduce_bytes": 1e9}) == {}


def test_nccl_run_reports_busbw_and_low_scaling() -> None:
    """A hand-written 4-GPU NCCL result: measured bus bandwidth as info, poor scaling as a warning
    (busbw worked out by hand with nccl-tests' formula, below)."""
    metrics = {
        "replicas": 4.0,
        "allreduce_bytes": 134217728.0,
        "allreduce_seconds": 0.004,
        "step_seconds_1": 0.010,
        "step_seconds_n": 0.020,
        "scaling_efficiency": 0.5,
    }
    metrics.update(peaks.allreduce_bandwidth(metrics))
    r = RecipeResult(
        "multi-device",
        None,
        "passed",
        metrics=metrics,
        info={"cross_device_ops": "nccl", "devices": "GPU:0,GPU:1,GPU:2,GPU:3"},
    )
    found = _findings(
        "smoke-multi-gpu", make_facts(SmokeFacts("python", "completed", recipes=(r,)))
    )
    assert [f.id for f in found] == ["nccl-allreduce-measured", "multi-gpu-scaling-low"]
    assert found[0].evidence["busbw_gbs"] == "50.33"  # 134217728 B / 4 ms = 33.55 GB/s x 1.5


@pytest.mark.parametrize(
    "cc, ratio, kernels, profiled, verdict, confidence",
    [
        (
            "8.0",
            1.1,
            ("sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32",),
            True,
            "used",
            "high",
        ),
        ("8.0", 11.0, (), False, "used", "medium"),
        (
            "7.5",
            1.2,
            ("volta_sgemm_128x64_nn", "maxwell_hgemm_256x64_nt"),
            True,
            "not-used",
            "high",
        ),
        ("6.1", 1.0, (), False, "not-available", "high"),
        ("9.0", None, (), False, "unknown", "low"),
    ],
)
def test_tensor_core_verdict(cc, ratio, kernels, profiled, verdict, confidence) -> None:
    """Kernel names beat the throughput ratio, which beats the bare compute capability."""
    v = peaks.tensor_core_verdict(cc, ratio, kernels, profiled)
    assert (v.verdict, v.confidence) == (verdict, confidence)


def test_tensor_core_check_on_an_ampere_result() -> None:
    """A hand-written A100 result naming cuBLAS's Ampere Tensor Core GEMM kernels (s16816gemm:
    the mma.sync m16n8k16 shape): info finding with high confidence."""
    r = RecipeResult(
        "tensor-cores",
        "GPU:0",
        "passed",
        metrics={"fp16_vs_fp32": 12.4, "bf16_vs_fp32": 12.1},
        info={
            "kernels": "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn\n"
            "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn"
        },
    )
    found = _findings(
        "smoke-tensor-cores",
        make_facts(SmokeFacts("python", "completed", devices=(A100,), recipes=(r,))),
    )
    assert [(f.id, f.severity, f.evidence["confidence"]) for f in found] == [
        ("tensor-cores-used", Severity.INFO, "high")
    ]


def test_likely_causes_from_nvml_samples() -> None:
    """Throttle reasons, clocks under max, the power cap and a degraded PCIe link are named."""
    samples = tuple(s for s in SAMPLES if isinstance(s, NvmlSample))
    causes = peaks.likely_causes(samples)
    assert causes == (
        "clock throttled: hw_thermal_slowdown, sw_power_cap",
        "SM clock peaked at 1050 MHz of 1410 MHz max",
        "at the power limit (400 W)",
        "PCIe link at gen 3 of 4",
    )


def test_low_throughput_names_nvml_causes() -> None:
    """41 % of the A100's bf16 peak with throttling samples: warning naming the causes."""
    from tfdoctor import compat

    assert compat.gpu_model(A100.model) is not None
    assert round(100 * 128.0 / A100_BF16_PEAK_TFLOPS) == 41  # the figure the message must give
    samples = tuple(s for s in SAMPLES if isinstance(s, NvmlSample))
    r = RecipeResult(
        "throughput",
        "GPU:0",
        "passed",
        nvml=samples,
        metrics={
            "float32_tflops": 18.0,
            "float16_tflops": 128.0,
            "bfloat16_tflops": 128.0,
            "bandwidth_gbs": 1400.0,
        },
    )
    found = _findings(
        "smoke-throughput",
        make_facts(SmokeFacts("python", "completed", devices=(A100,), recipes=(r,))),
    )
    assert [f.id for f in found] == ["gpu-throughput-low"]
    assert "41 % of expected bf16 matmul" in found[0].message
    assert "hw_thermal_slowdown" in found[0].evidence["likely_causes"]


def test_sampler_reports_nvml_unavailable_here() -> None:
    """On this machine NVML does not load: the real sampler child says so and exits."""
    sampler = NvmlSampler(Host())
    sampler.start()
    sampler.stop()
    assert sampler.samples() == ()
    assert sampler.error is not None and "NVML" in sampler.error


def test_smoke_facts_round_trip() -> None:
    """Every smoke dataclass (samples, causes, devices) survives to_dict/from_dict."""
    samples = tuple(s for s in SAMPLES if isinstance(s, NvmlSample))
    smoke = SmokeFacts(
        "python",
        "timeout",
        exit="killed",
        limit_seconds=60.0,
        devices=(A100,),
        recipes=(
            RecipeResult(
                "throughput",
                "GPU:0",
                "timeout",
                60.0,
                {"x": 1.0},
                {"k": "v"},
                "hung",
                ("a",),
                1,
                (),
                samples,
            ),
        ),
    )
    facts = make_facts(smoke)
    assert Facts.from_dict(facts.to_dict()) == facts
