"""GPU visible, kernels could not run: TensorFlow lists a GPU but no operation runs on it.

Real TensorFlow 2.21 on the fake driver (tests/oracle/test_full_run.py) lists the stub GPU, then
fails to create its devices in cudart; the smoke child reports that error on the devices recipe
and marks every later recipe not-run with it. smoke-run reports it (smoke-gpus' causes explain a
GPU TensorFlow does not list, not one it cannot run on).
"""

from __future__ import annotations

from tfdoctor.facts import Facts, SmokeFacts
from tfdoctor.findings import Finding, Severity
from tfdoctor.smoke import logmap


def kernels_could_not_run(s: SmokeFacts) -> tuple[int, str] | None:
    """(GPUs TensorFlow listed, its error) when it listed GPUs but could not run a kernel on any.

    Either creating its devices failed (the devices recipe's device_creation_error: then no op
    runs anywhere) or the placement op raised on every GPU it listed.
    """
    listed = len([d for d in s.devices if d.device_type == "GPU"])
    r = next((r for r in s.recipes if r.name == "devices" and r.status == "error"), None)
    if not listed or r is None:
        return None
    if "device_creation_error" in r.info:
        return listed, r.info["device_creation_error"]
    errors = [v for k, v in r.info.items() if k.startswith("placement.GPU") and k.endswith(".error")]
    placed = [k for k in r.info if k.startswith("placement.GPU") and not k.endswith(".error")]
    return (listed, errors[0]) if errors and not placed else None


def _log(tail: tuple[str, ...], total: int) -> dict[str, str]:
    return {"log": logmap.frame(tail, total)} if tail else {}


# TensorFlow's error -> what usually causes it. cudart's error 36 (cudaErrorCallRequiresNewerDriver,
# "API call is not supported in the installed CUDA driver") and 35 (cudaErrorInsufficientDriver)
# mean the libcuda.so.1 it reached is older than its CUDA runtime, or is not a real driver (CUDA
# Runtime API, cudaError); 803 (cudaErrorSystemDriverMismatch) is libcuda against another kernel
# module version.
KERNEL_FAILURES = (
    (("not supported in the installed cuda driver", "requires a newer", "driver version is insufficient"),
     "the libcuda.so.1 TensorFlow loaded is older than the CUDA runtime it ships, or is not the real "
     "driver's (a stub or compat libcuda from a container image or a CUDA toolkit ahead of the driver "
     "on the loader path)"),
    (("unsupported display driver", "system_driver_mismatch", "driver/library version mismatch"),
     "libcuda.so.1 belongs to another driver version than the loaded kernel module (a driver upgrade "
     "without a reboot, or a container's driver libraries)"),
    (("out of memory",), "another process holds the GPU's memory"),
    (("busy or unavailable", "device_unavailable", "exclusive"),
     "the GPU is in an exclusive compute mode and another process uses it"),
    (("no kernel image", "no_binary_for_gpu", "invalid device function"),
     "this TensorFlow wheel has no kernels for this GPU's compute capability"),
)
KERNEL_COLLECT = ("nvidia-smi", "cat /proc/driver/nvidia/version", "ldconfig -p | grep libcuda",
                  "TF_CPP_MAX_VLOG_LEVEL=1 python -c 'import tensorflow as tf; print(tf.ones(1) * 2)'")


def kernels_failed(facts: Facts, s: SmokeFacts, listed: int, error: str) -> Finding:
    """The smoke-gpu-kernels-failed finding: TensorFlow's own error is its evidence."""
    devices_error = s.recipe("devices")
    created = devices_error is None or "device_creation_error" not in devices_error.info
    models = sorted({d.model for d in s.devices if d.device_type == "GPU" and d.model})
    lower = error.lower()
    cause = next((why for needles, why in KERNEL_FAILURES if any(n in lower for n in needles)), None)
    evidence = {
        "tensorflow_error": error,
        "tensorflow_gpus": str(listed),
        "nvml_gpus": str(len(facts.driver.gpus)),
        **({"models": ", ".join(models)} if models else {}),
        **(_log(devices_error.log_tail, devices_error.log_lines)
           if devices_error and devices_error.log_tail else _log(s.log_tail, s.log_lines)),
    }
    what = "the first operation on each GPU raised an error" if created else \
        "creating its devices failed, so no operation runs, on the CPU either"
    return Finding(
        "smoke-gpu-kernels-failed",
        Severity.ERROR,
        f"GPU visible, kernels could not run: TensorFlow lists {listed} GPU(s) but {what}.",
        evidence,
        (f"Likely cause: {cause}. " if cause else
         "Likely causes: a libcuda.so.1 that does not match the driver or is older than TensorFlow's "
         "CUDA runtime, a GPU held by another process, or a wheel without kernels for this GPU. ")
        + "Collect for a report: " + "; ".join(f"`{c}`" for c in KERNEL_COLLECT) + ".",
    )
