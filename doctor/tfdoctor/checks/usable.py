"""How many GPUs TensorFlow can really use, judged from static facts."""

from __future__ import annotations

from typing import NamedTuple

from tfdoctor import stack
from tfdoctor.checks.common import visible_gpus
from tfdoctor.checks.mig import mig_view
from tfdoctor.facts import Facts, LibraryFacts

REQUIRED_LIBS = ("cudart", "cublas", "cublasLt", "cufft", "cusolver", "cusparse", "cudnn")
"""What TF's TryDlopenCUDALibraries needs; any missing one and TF skips every GPU."""


def loadable(lib: LibraryFacts) -> bool:
    """Found, and the loader accepted it when the version probe dlopened it."""
    error = lib.error or ""
    return lib.path is not None and not (error.startswith("dlopen failed") or " while loading " in error)


def usable_gpu_count(facts: Facts) -> tuple[int, str]:
    """The count, and a short reason when it is lower than the GPUs present."""
    counts = gpu_counts(facts)
    return counts.usable, counts.why


class GpuCounts(NamedTuple):
    listed: int
    """Devices TensorFlow creates: what its list_physical_devices('GPU') returns."""
    usable: int
    """Of those, the ones its kernels run on: TF also lists a GPU whose only PTX does not compile for it."""
    why: str


def gpu_counts(facts: Facts) -> GpuCounts:
    """What TensorFlow lists and what it can use, with the reason when fewer than present.

    Listed follows TF's device creation (gpu_device.cc): the driver, cuInit, every library of
    TryDlopenCUDALibraries, visibility, and a compute capability at or above the wheel's oldest.
    Usable drops the listed GPUs TF has only PTX for that the driver cannot JIT-compile for
    them (gpu-newer-than-tf).
    """
    tf = facts.tensorflow
    # Every reason that alone leaves 0 GPUs: a CPU-only TensorFlow must be named even when the
    # driver is missing too, or fixing the driver looks like enough.
    reasons = [f"driver: {facts.driver.nvml_error}"] if facts.driver.nvml_error else []
    if tf is None:
        reasons.append("TensorFlow is not installed")
    elif tf.is_cuda_build is False or (tf.is_cuda_build is None and tf.version):
        dists = ", ".join(d.name for d in tf.distributions) or "tensorflow"
        reasons.append(f"TensorFlow is a CPU-only build ({dists}), which never uses a GPU")
    if reasons:
        return GpuCounts(0, 0, "; ".join(reasons))
    assert tf is not None
    if facts.cuda_driver.is_stub or facts.cuda_driver.load_error or facts.cuda_driver.crash:
        return GpuCounts(0, 0, "libcuda.so.1 is missing, a stub, or crashed")
    init = facts.cuda_driver.init_result
    if init and init != "CUDA_SUCCESS":
        return GpuCounts(0, 0, f"cuInit failed ({init}): TensorFlow can use no GPU")
    missing = [lib.soname for lib in facts.libraries if lib.name in REQUIRED_LIBS and not loadable(lib)]
    if missing:
        return GpuCounts(0, 0, "cannot load " + ", ".join(missing))
    # A GPU in MIG mode is not a CUDA device itself; the process gets one MIG device (checks/mig.py).
    gpus = tuple(g for g in visible_gpus(facts) if not g.mig_mode)
    mig = mig_view(facts)
    if mig is not None and mig.usable:
        gpus += (mig.selected[0] if mig.selected else mig.gpus[0],)
    listed = [g for g in gpus if stack.kernels(tf, g.compute_capability) != "none"
              and "NVML_ERROR_GPU_IS_LOST" not in g.errors.values()]
    ok = [g for g in listed if stack.kernels(tf, g.compute_capability) in ("sass", "ptx")]
    present = len(facts.driver.gpus)
    reasons = []
    if hidden := present - len([g for g in gpus if not g.mig_mode]):
        reasons.append(f"{hidden} hidden by CUDA_VISIBLE_DEVICES or MIG")
    if old := len(gpus) - len(listed):
        reasons.append(f"{old} unsupported compute capability")
    if jit := len(listed) - len(ok):
        ccs = ", ".join(sorted({g.compute_capability or "?" for g in listed if g not in ok}))
        reasons.append(f"{jit} listed by TensorFlow, but its only code for compute capability {ccs} is "
                       "PTX that does not compile for it, so the first kernel fails")
    if mig is not None and reasons:
        reasons.append(f"MIG: {mig.how}")
    return GpuCounts(len(listed), len(ok), "; ".join(reasons) if len(ok) < present else "")
