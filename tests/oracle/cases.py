"""The fake machines of the differential tests, and what real TensorFlow 2.21 did on each.

`tf_kept` is the number of GPUs TensorFlow kept when it created its devices, as observed on
the stub driver (tests/fakegpu); `log` maps a line TensorFlow printed to the tfdoctor finding
that explains it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from oracle.differential import Machine

WORKING = ("{site}/nvidia/cusolver/lib", "{site}/nvidia/curand/lib")
"""TF 2.21's RUNPATH lacks these two pip dirs: a working install puts them on LD_LIBRARY_PATH."""
UUID1 = "GPU-5ca1ab1f-1d2c-4e0f-9a7b-000000000001"  # fakegpu.machine.expand_gpus, index 1
MIG = ("--gpus", "1", "--model", "NVIDIA A100-SXM4-80GB", "--mig", "3")
"""An A100 in MIG mode with three 2g.20gb MIG devices (fakegpu.machine.mig_devices)."""
MIG2 = "MIG-3161d000-7e2a-5b1c-8d3f-000000000002"  # the third of them


@dataclass(frozen=True)
class Case:
    machine: Machine
    tf_kept: int
    log: dict[str, str] = field(default_factory=dict)
    """Substring of a TensorFlow log line -> the finding id tfdoctor must report for it."""
    venv: str = "stock"
    """stock: the tf-cuda venv; no-cudnn: a copy without the nvidia-cudnn wheel."""
    says: dict[str, str] = field(default_factory=dict)
    """Finding id -> words its message or hint must contain."""


LOST = ("h100x8_driver580.json", {"cuda": {"driver_version": 13000,
                                           "errors": {"cuInit": "CUDA_ERROR_UNKNOWN"}}})
"""NVML answers for 8 GPUs, then cuInit fails: a GPU lost between the two."""

CASES: dict[str, Case] = {
    "healthy-1": Case(Machine(("--gpus", "1"), WORKING), 1),
    "healthy-8": Case(Machine(("--gpus", "8"), WORKING), 8),
    "cusolver-not-reachable": Case(Machine(("--gpus", "2")), 0, {
        "Cannot dlopen some GPU libraries": "cuda-library-missing"}),
    "cudnn-missing": Case(Machine(("--gpus", "1"), WORKING), 0, {
        "Cannot dlopen some GPU libraries": "cuda-library-missing",
        "Failed to determine cuDNN version": "cuda-library-missing"}, venv="no-cudnn"),
    # TF 2.21 wants libcudnn.so.9; the only cuDNN on the path is the real 8.9 of the 2.17 venv.
    "cudnn-other-major": Case(Machine(("--gpus", "1"), (*WORKING, "{site:tf-cuda-2-17}/nvidia/cudnn/lib")),
                              0, {"Cannot dlopen some GPU libraries": "cuda-library-missing",
                                  "Failed to determine cuDNN version": "cuda-library-missing"},
                              venv="no-cudnn", says={"cuda-library-missing": "Only another major "
                                                     "version is installed"}),
    "cc-below-minimum": Case(Machine(("--gpus", "1", "--model", "Tesla K10", "--cc", "3.0"), WORKING),
                             0, {"Ignoring visible gpu device": "gpu-too-old-for-tf"}),
    # TF lists it and JIT-compiles its compute_90 PTX, which ptxas 13.0 compiles for sm_120
    # (test_wheel_ptx.py); 2.17 on the same machine: test_differential.py.
    "cc-newer-than-wheel": Case(Machine(("--gpus", "1", "--model", "NVIDIA GeForce RTX 5090"), WORKING),
                                1, {"not built with CUDA kernel binaries compatible": "gpu-ptx-jit-only"}),
    "driver-cuda-older": Case(Machine(("--gpus", "1", "--driver", "535.183.01", "--driver-cuda", "12020"),
                                      WORKING), 1),
    "visible-subset": Case(Machine(("--gpus", "4"), WORKING, {"CUDA_VISIBLE_DEVICES": "1,3"}), 2),
    # The stub's cuInit then answers CUDA_ERROR_NO_DEVICE, as the real driver does.
    "visible-none": Case(Machine(("--gpus", "4"), WORKING, {"CUDA_VISIBLE_DEVICES": "-1"}), 0, {
        "CUDA_ERROR_NO_DEVICE": "cuda-visible-devices-hides-all"}),
    "visible-garbage": Case(Machine(("--gpus", "4"), WORKING, {"CUDA_VISIBLE_DEVICES": "gpu0"}), 0, {
        "CUDA_ERROR_NO_DEVICE": "cuda-visible-devices-malformed"}),
    "visible-uuid": Case(Machine(("--gpus", "4"), WORKING, {"CUDA_VISIBLE_DEVICES": UUID1}), 1),
    # The MIG user guide: a CUDA process enumerates one MIG device, the first or the one named.
    "mig-instances": Case(Machine(MIG, WORKING), 1, says={"gpu-mig-enabled": "sees one MIG device of the 3"}),
    "mig-selected": Case(Machine(MIG, WORKING, {"CUDA_VISIBLE_DEVICES": MIG2}), 1,
                         says={"gpu-mig-enabled": f"{MIG2} (NVIDIA A100-SXM4-80GB MIG 2g.20gb"}),
    "mig-unknown-uuid": Case(Machine(MIG, WORKING, {"CUDA_VISIBLE_DEVICES": "MIG-ffff"}), 0, {
        "CUDA_ERROR_NO_DEVICE": "gpu-mig-enabled"}, says={"gpu-mig-enabled": "names no MIG device"}),
    "gpu-lost": Case(Machine((), WORKING, scenario=LOST), 0, {
        "failed call to cuInit": "libcuda-init-failed"}),
}
