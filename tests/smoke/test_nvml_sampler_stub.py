"""The NVML sampler through nvidia-ml-py's real loader, against the stub libnvidia-ml.so.1.

On a GPU the sampler runs beside the throughput recipes; here the stub plays a throttled,
power-capped GPU on a narrowed link, so the sampling code and the cause naming run for real.
"""

from __future__ import annotations

import time
from pathlib import Path

from fakegpu.machine import FakeMachine
from tfdoctor.smoke.nvml import NvmlSampler
from tfdoctor.smoke.peaks import likely_causes

SLOW_GPU = {
    "name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_mib": 40960,
    "sm_clock_mhz": 1005, "sm_clock_max_mhz": 1410, "power_w": 398.0, "power_limit_w": 400,
    "utilization_pct": 97, "temperature_c": 88,
    "clocks_event_reasons": ["hw_thermal_slowdown", "sw_power_cap"],
    "pcie_gen_current": 3, "pcie_gen_max": 4, "pcie_width_current": 16, "pcie_width_max": 16,
}


def test_sampler_reads_the_stub_and_names_the_causes(tmp_path: Path) -> None:
    """Samples carry clocks, power, throttle reasons and link state; the causes name them all."""
    machine = FakeMachine(tmp_path)
    machine.kernel_module("580.65.06")
    machine.nvml({"driver_version": "580.65.06", "gpus": [SLOW_GPU]})
    sampler = NvmlSampler(machine.host())
    sampler.start()
    deadline = time.monotonic() + 10
    while len(sampler.samples()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    sampler.stop()
    samples = sampler.samples()
    assert sampler.error is None and len(samples) >= 2
    first = samples[0]
    assert (first.gpu, first.sm_clock_mhz, first.sm_clock_max_mhz) == (0, 1005, 1410)
    assert first.power_w == 398.0 and first.power_limit_w == 400.0
    assert set(first.throttle_reasons) >= {"hw_thermal_slowdown", "sw_power_cap"}
    causes = " | ".join(likely_causes(samples))
    for words in ("hw_thermal_slowdown", "SM clock peaked at 1005 MHz of 1410", "power limit",
                  "PCIe link at gen 3 of 4"):
        assert words in causes, causes


def test_sampler_without_nvml_reports_why(tmp_path: Path) -> None:
    """No libnvidia-ml on the loader path: no samples, and the reason is kept for the report."""
    machine = FakeMachine(tmp_path)
    sampler = NvmlSampler(machine.host())
    sampler.start()
    deadline = time.monotonic() + 10
    while sampler.error is None and time.monotonic() < deadline:
        time.sleep(0.05)
    sampler.stop()
    assert sampler.samples() == ()
    assert "nvml" in (sampler.error or "").lower(), sampler.error
