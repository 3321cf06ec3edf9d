"""Run any command on a fake NVIDIA machine (docs/scenarios.md, "Running anything on a fake machine").

    python tests/fakegpu/run.py --gpus N [--model NAME] [--cc X.Y] [--memory-mib M] [--mig N]
        [--driver VERSION] [--driver-cuda NNNNN] [--scenario FILE] [--keep DIR] -- COMMAND ...

Builds the machine (stub NVML and libcuda from tests/stubs, /proc and /dev under a fake root),
then runs COMMAND with the stubs first on LD_LIBRARY_PATH, their scenario files in
TFDOCTOR_FAKE_NVML / TFDOCTOR_FAKE_CUDA, TFDOCTOR_FS_ROOT at the fake root and the fake bin dir
first on PATH, and exits with COMMAND's exit code. `--scenario` starts from a driver scenario
document (tests/probes_driver/scenarios/*.json; one without a "cuda" key gets a libcuda of the
NVML driver's CUDA version); the flags given override it.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from fakegpu.machine import FakeMachine, from_scenario  # noqa: E402

# Compute capability and memory of the models people ask for most (NVIDIA's CUDA GPUs page);
# any other name needs --cc.
MODELS: dict[str, tuple[str, int]] = {
    "NVIDIA H100 80GB HBM3": ("9.0", 81559),
    "NVIDIA H200": ("9.0", 143771),
    "NVIDIA A100-SXM4-80GB": ("8.0", 81920),
    "NVIDIA A100-SXM4-40GB": ("8.0", 40960),
    "NVIDIA L4": ("8.9", 23034),
    "NVIDIA GeForce RTX 4090": ("8.9", 24564),
    "NVIDIA GeForce RTX 5090": ("12.0", 32607),
    "NVIDIA B200": ("10.0", 183359),
    "Tesla T4": ("7.5", 15360),
    "Tesla V100-SXM2-16GB": ("7.0", 16384),
    "Tesla P100-PCIE-16GB": ("6.0", 16384),
    "Tesla K80": ("3.7", 11441),
}
DEFAULT_MODEL = "NVIDIA H100 80GB HBM3"
DEFAULT_DRIVER = "580.65.06"
DEFAULT_DRIVER_CUDA = 13000


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tests/fakegpu/run.py", description=__doc__.split("\n\n")[0],
        usage="%(prog)s --gpus N [options] -- COMMAND ...")
    parser.add_argument("--gpus", type=int, help="number of GPUs (default: the scenario's, else 1)")
    parser.add_argument("--model", help=f"GPU name (default {DEFAULT_MODEL!r})")
    parser.add_argument("--cc", help="compute capability X.Y (default: the model's)")
    parser.add_argument("--memory-mib", type=int, help="GPU memory in MiB (default: the model's)")
    parser.add_argument("--mig", type=int, metavar="N",
                        help="every GPU in MIG mode with N MIG devices (0: MIG on, none created)")
    parser.add_argument("--driver", help=f"driver version (default {DEFAULT_DRIVER})")
    parser.add_argument("--driver-cuda", type=int,
                        help=f"CUDA version the driver implements, cuDriverGetVersion's NNNNN "
                        f"(default {DEFAULT_DRIVER_CUDA})")
    parser.add_argument("--scenario", type=Path, help="a driver scenario document to start from")
    parser.add_argument("--keep", type=Path, help="build the machine in DIR and keep it")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ...")
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        parser.error("no COMMAND given (put it after --)")
    if args.model and args.model not in MODELS and not args.cc:
        parser.error(f"unknown model {args.model!r}: give --cc (known: {', '.join(MODELS)})")
    if args.gpus is not None and args.gpus < 0:
        parser.error("--gpus must be 0 or more")
    return args


def scenario_of(args: argparse.Namespace) -> dict[str, Any]:
    """The scenario document: the --scenario file (or a healthy driver) with the flags applied."""
    if args.scenario:
        doc: dict[str, Any] = json.loads(args.scenario.read_text())
    else:
        doc = {"kernel_module": {"version": DEFAULT_DRIVER, "open": True},
               "nvml": {"driver_version": DEFAULT_DRIVER, "cuda_driver_version": DEFAULT_DRIVER_CUDA,
                        "gpu_count": 1, "gpu": {}},
               "cuda": {"driver_version": DEFAULT_DRIVER_CUDA}}
    doc = copy.deepcopy(doc)
    doc.pop("expect", None)
    if "cuda" not in doc and doc.get("nvml"):
        # A driver ships libcuda with NVML; the driver-probe scenarios often leave it out because
        # they test NVML alone. `"cuda": null` still means none.
        doc["cuda"] = {"driver_version": doc["nvml"].get("cuda_driver_version", DEFAULT_DRIVER_CUDA)}
    nvml = doc.setdefault("nvml", {}) if doc.get("nvml") is not None else None
    cuda = doc.setdefault("cuda", {}) if doc.get("cuda") is not None else None
    if args.driver:
        doc.setdefault("kernel_module", {})["version"] = args.driver
        if nvml is not None:
            nvml["driver_version"] = args.driver
    if args.driver_cuda:
        if nvml is not None:
            nvml["cuda_driver_version"] = args.driver_cuda
        if cuda is not None:
            cuda["driver_version"] = args.driver_cuda
    if nvml is not None:
        gpu = dict(nvml.get("gpu", {}))
        if args.model or not args.scenario:
            name = args.model or DEFAULT_MODEL
            cc, memory = MODELS.get(name, (None, None))
            gpu.update(name=name, compute_capability=cc, memory_total_mib=memory or 16384)
        if args.cc:
            gpu["compute_capability"] = args.cc
        if args.memory_mib:
            gpu["memory_total_mib"] = args.memory_mib
        if args.mig is not None:
            gpu["mig"] = args.mig
        if "gpus" in nvml and (args.gpus is not None or args.model or args.cc or args.mig is not None):
            nvml.pop("gpus")  # flags describe a uniform machine
        if "gpus" not in nvml:
            nvml["gpu"] = {k: v for k, v in gpu.items() if v is not None}
            nvml["gpu_count"] = args.gpus if args.gpus is not None else nvml.get("gpu_count", 1)
        if cuda is not None:
            cuda.pop("devices", None)  # follow the NVML GPUs
    return doc


def environment(machine: FakeMachine, base: dict[str, str]) -> dict[str, str]:
    """`base` pointed at the fake machine: stub libraries first, the fake root and bin dir."""
    host = machine.host()
    env = dict(base)
    ld = [host.env["LD_LIBRARY_PATH"], base.get("LD_LIBRARY_PATH", "")]
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in ld if p)
    env["PATH"] = os.pathsep.join([str(machine.bin_dir), base.get("PATH", "/usr/bin:/bin")])
    env["TFDOCTOR_FS_ROOT"] = str(machine.root)
    env.update({k: v for k, v in machine.env.items()})
    return env


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    doc = scenario_of(args)
    with tempfile.TemporaryDirectory(prefix="fakegpu-") as tmp:
        base = args.keep or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        machine = from_scenario(base, doc)
        # The fake root replaces /proc for tfdoctor; the CPU is this machine's own.
        if not (machine.root / "proc/cpuinfo").exists() and os.path.exists("/proc/cpuinfo"):
            machine.write("/proc/cpuinfo", Path("/proc/cpuinfo").read_text())
        env = environment(machine, dict(os.environ))
        try:
            return subprocess.call(args.command, env=env)
        except OSError as exc:
            print(f"run.py: cannot run {args.command[0]}: {exc}", file=sys.stderr)
            return 127
        except KeyboardInterrupt:
            return 130


if __name__ == "__main__":
    sys.exit(main())
