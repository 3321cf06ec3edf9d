"""How many GPUs TensorFlow can really use, judged from static facts."""

from __future__ import annotations

from tfdoctor import compat
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
        return 0, "; ".join(reasons)
    assert tf is not None
    if facts.cuda_driver.is_stub or facts.cuda_driver.load_error or facts.cuda_driver.crash:
        return 0, "libcuda.so.1 is missing, a stub, or crashed"
    init = facts.cuda_driver.init_result
    if init and init != "CUDA_SUCCESS":
        return 0, f"cuInit failed ({init}): TensorFlow can use no GPU"
    missing = [lib.soname for lib in facts.libraries if lib.name in REQUIRED_LIBS and not loadable(lib)]
    if missing:
        return 0, "cannot load " + ", ".join(missing)
    # A GPU in MIG mode is not a CUDA device itself; the process gets one MIG device (checks/mig.py).
    gpus = tuple(g for g in visible_gpus(facts) if not g.mig_mode)
    ok = [g for g in gpus if _runs_kernels(tf.compute_capabilities, g.compute_capability)
          and "NVML_ERROR_GPU_IS_LOST" not in g.errors.values()]
    mig = mig_view(facts)
    if mig is not None and mig.usable:
        parent = mig.selected[0] if mig.selected else mig.gpus[0]
        if _runs_kernels(tf.compute_capabilities, parent.compute_capability):
            ok.append(parent)
    why = "" if len(ok) == len(facts.driver.gpus) else (
        f"{len(facts.driver.gpus) - len(gpus)} hidden by CUDA_VISIBLE_DEVICES or MIG, "
        f"{len(gpus) - len([g for g in ok if not g.mig_mode])} unsupported compute capability"
        + (f"; MIG: {mig.how}" if mig is not None else ""))
    return len(ok), why


def _runs_kernels(built: tuple[str, ...], cc: str | None) -> bool:
    """SASS, or PTX the driver JITs; not PTX on CC >= 10, which fails (gpu-newer-than-tf)."""
    if cc is None or not built:
        return True
    kind = compat.has_kernels_for(built, cc)
    return kind == "sass" or (kind == "ptx" and int(cc.split(".")[0]) < 10)
