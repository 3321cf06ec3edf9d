"""NVML's sw_power_cap is a fault only when someone lowered the power limit: a GPU busy with
another job runs at its default cap (the lent H100 did, at 700 W: tests/recorded/h100-driver-580)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from helpers import change, gpu, healthy, judge
from tfdoctor.facts import NvmlSample
from tfdoctor.smoke.peaks import likely_causes

H = healthy()
LOAD = Path(__file__).resolve().parents[1] / "recorded" / "h100-driver-580" / "nvml-bf16-load.json"


def _throttled(**kw):
    report = judge(change(H, driver={"gpus": (gpu(0, throttle_reasons=("sw_power_cap",), **kw),)}))
    return [f for f in report.findings if f.id == "gpu-throttled"]


def test_at_the_default_cap_is_no_finding():
    assert _throttled(power_limit_w=700.0, power_default_limit_w=700.0) == []


def test_a_lowered_cap_names_both_limits_and_how_to_restore():
    [f] = _throttled(power_limit_w=350.0, power_default_limit_w=700.0)
    assert "power limit 350 W, lowered from the board's default 700 W" in f.message
    assert f.evidence["gpu.power_default_limit_w"] == "700.0"
    assert "nvidia-smi -i 0 -pl 700" in (f.hint or "")


def test_an_unknown_default_still_warns():
    """An older NVML that cannot say the default: the cap may have been lowered, so it warns."""
    [f] = _throttled(power_limit_w=350.0)
    assert "sw_power_cap" in f.message and "lowered" not in f.message


def test_real_h100_under_bf16_load_has_no_power_cause():
    """tfdoctor's NVML sampler on the lent H100 while PyTorch ran bf16 matmuls at 672 TFLOPS
    (68 % of 989.5): 700 W at the default 700 W cap, sw_power_cap set. Written by hand from those
    samples: the cap is the default, so it is no likely cause; the lowered one below is."""
    doc = json.loads(LOAD.read_text())
    samples = tuple(NvmlSample(**{**s, "throttle_reasons": tuple(s["throttle_reasons"])})
                    for s in doc["samples"])
    assert any("sw_power_cap" in s.throttle_reasons for s in samples)
    assert max(s.power_w or 0 for s in samples) >= 0.95 * 700
    assert not [c for c in likely_causes(samples) if "power" in c]
    lowered = tuple(replace(s, power_limit_w=300.0) for s in samples)
    assert "at the power limit (300 W, lowered from the board's default 700 W)" in likely_causes(lowered)
