"""Multi-GPU machines for the picture tests: 4x A100 with one throttled and one narrow link, 8x
H100 with one GPU whose throughput run timed out, 2x A100 with MIG, 4 GPUs never measured
(--quick), and the recorded GPU-less container. Built with tests/helpers.py's `healthy` and
`gpu`; the smoke numbers are shaped like the smoke child's recipes (smoke/_perf.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from helpers import change, gpu, healthy
from tfdoctor.facts import (
    Facts,
    MigDeviceFacts,
    NvmlSample,
    RecipeResult,
    SmokeDevice,
    SmokeFacts,
)

RECORDED = Path(__file__).parents[1] / "recorded"
TOPOLOGIES = Path(__file__).parents[1] / "cluster" / "topologies"
A100 = "NVIDIA A100-SXM4-80GB"
H100 = "NVIDIA H100 80GB HBM3"


def throughput(i: int, fp32: float, fp16: float, bf16: float, bw: float,
               samples: tuple[NvmlSample, ...] = ()) -> RecipeResult:
    return RecipeResult("throughput", f"GPU:{i}", "passed", 2.0, nvml=samples, metrics={
        "float32_tflops": fp32, "float16_tflops": fp16, "bfloat16_tflops": bf16,
        "bandwidth_gbs": bw})


def allreduce(n: int, busbw: float) -> RecipeResult:
    return RecipeResult("multi-device", None, "passed", 3.0,
                        metrics={"replicas": float(n), "busbw_gbs": busbw,
                                 "algbw_gbs": busbw * n / (2 * (n - 1))},
                        info={"cross_device_ops": "nccl",
                              "devices": ",".join(f"GPU:{i}" for i in range(n))})


def smoke(model: str, n: int, recipes: list[RecipeResult]) -> SmokeFacts:
    return SmokeFacts(python="/venv/bin/python", outcome="completed", seconds=40.0,
                      tf_version="2.21.0", is_cuda_build=True,
                      devices=tuple(SmokeDevice(f"GPU:{i}", "GPU", model, None) for i in range(n)),
                      recipes=(RecipeResult("import", None, "passed", 4.0), *recipes))


def four_a100() -> Facts:
    """GPU 2 runs hot and throttles (bf16 at 32 % of peak) with 3.5 GiB held by another process,
    GPU 3's link is x8 of x16 and its memory use unknown."""
    gpus = tuple(gpu(i, A100, "8.0", memory_total_mib=81920, pcie_gen_current=4, pcie_gen_max=4,
                     memory_used_mib=(0, 0, 3584, None)[i], temperature_c=(41, 43, 84, 40)[i])
                 for i in range(4))
    gpus = (gpus[0], gpus[1], replace(gpus[2], throttle_reasons=("sw_thermal_slowdown",)),
            replace(gpus[3], pcie_width_current=8))
    hot = (NvmlSample(2, 100.0, temperature_c=88, throttle_reasons=("hw_thermal_slowdown",)),)
    recipes = [throughput(i, 17.1, 190.0, 190.0, 1700.0) for i in (0, 1, 3)]
    recipes.insert(2, throughput(2, 9.0, 100.0, 100.0, 1650.0, hot))
    base = healthy(4)
    return change(base, driver={"gpus": gpus},
                  smoke=smoke(A100, 4, [*recipes, allreduce(4, 180.0)]))


def eight_h100() -> Facts:
    """All measured but GPU 7, whose throughput recipe hit its time limit."""
    recipes = [throughput(i, 60.0, 700.0, 710.0, 2900.0) for i in range(7)]
    recipes.append(RecipeResult("throughput", "GPU:7", "timeout", 60.0,
                                detail="killed after the time limit of 60 s"))
    base = healthy(8)
    gpus = tuple(replace(g, temperature_c=35 + g.index) for g in base.driver.gpus)
    return change(base, driver={"gpus": gpus},
                  smoke=smoke(H100, 8, [*recipes, allreduce(8, 360.0)]))


def mig_a100() -> Facts:
    """GPU 1 in MIG mode with three instances; only GPU 0 was measured."""
    mig = tuple(MigDeviceFacts(i, f"MIG-{i:04d}", f"{A100} MIG 2g.20gb", 19968) for i in range(3))
    gpus = (gpu(0, A100, "8.0", memory_total_mib=81920),
            gpu(1, A100, "8.0", memory_total_mib=81920, mig_mode=True, mig_devices=mig))
    return change(healthy(2), driver={"gpus": gpus},
                  smoke=smoke(A100, 1, [throughput(0, 18.0, 250.0, 250.0, 1800.0)]))


def four_unmeasured() -> Facts:
    """A --quick run on 4 GPUs: NVML facts, no smoke run."""
    return healthy(4)


def no_gpu() -> Facts:
    """The recorded development container: TensorFlow 2.21 on a machine without a GPU."""
    data = json.loads((RECORDED / "no-gpu-tf-cuda-2-21" / "facts.json").read_text())
    return Facts.from_dict(data)


def save(facts: Facts, path: Path) -> Path:
    """The facts as `tfdoctor --save` writes them (the replay format)."""
    path.write_text(json.dumps(facts.to_dict()))
    return path


def probed_driver(tmp_path: Path, topology: str):  # type: ignore[no-untyped-def]
    """DriverFacts read by the real NVML child from the NVML stub with a recorded topology of
    tests/cluster/topologies (an HGX H100 node, one with a link down, L40S behind an IOMMU)."""
    from fakegpu.machine import FakeMachine
    from tfdoctor.probes.driver import probe_driver

    machine = FakeMachine(tmp_path)
    machine.kernel_module("550.90.07")
    machine.nvml(json.loads((TOPOLOGIES / topology).read_text()))
    return probe_driver(machine.host(), [])


def eight_h100_link_down(tmp_path: Path) -> Facts:
    """eight_h100's smoke run on the probed HGX node whose GPU 3 has two NVLink links down."""
    return replace(eight_h100(), driver=probed_driver(tmp_path, "hgx-h100-link-down.json"))
