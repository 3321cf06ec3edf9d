"""CUDA driver API probe child: dlopens libcuda.so.1 as the CUDA runtime would; prints one JSON.

Run as `python -I _cuda_child.py` by tfdoctor.probes.cuda_driver, so a driver library that
crashes or hangs takes down only this process. Imports nothing from tfdoctor. Before each call it
writes "@step <symbol>" to stderr, so the parent can say which call crashed.
"""

import ctypes
import json
import os
import signal
import sys

# `-I` implies `-P` from Python 3.11: the script's directory is not on sys.path. Appended, not
# prepended, so no module beside this one (probes/platform.py) can shadow the standard library.
sys.path.append(os.path.dirname(os.path.abspath(__file__)))

from _childlib import loaded_library, step  # noqa: E402  (needs the path above)

# CUresult names (cuda.h) for drivers without cuGetErrorName (added in CUDA 6.0).
CURESULT_NAMES = {
    0: "CUDA_SUCCESS",
    1: "CUDA_ERROR_INVALID_VALUE",
    2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED",
    4: "CUDA_ERROR_DEINITIALIZED",
    34: "CUDA_ERROR_STUB_LIBRARY",
    35: "CUDA_ERROR_INSUFFICIENT_DRIVER",
    36: "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
    46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
    100: "CUDA_ERROR_NO_DEVICE",
    101: "CUDA_ERROR_INVALID_DEVICE",
    102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
    304: "CUDA_ERROR_OPERATING_SYSTEM",
    800: "CUDA_ERROR_NOT_PERMITTED",
    801: "CUDA_ERROR_NOT_SUPPORTED",
    802: "CUDA_ERROR_SYSTEM_NOT_READY",
    803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
    804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
    999: "CUDA_ERROR_UNKNOWN",
}
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


def result_name(lib, code):
    """The CUresult's name, from the driver itself when it can say."""
    fn = getattr(lib, "cuGetErrorName", None)
    if fn is not None:
        text = ctypes.c_char_p()
        if fn(code, ctypes.byref(text)) == 0 and text.value:
            return text.value.decode(errors="replace")
    return CURESULT_NAMES.get(code, f"CUresult {code}")


def call(lib, symbol, *args):
    """lib.symbol(*args) -> CUresult; a missing symbol (older driver) reads as None."""
    fn = getattr(lib, symbol, None)
    if fn is None:
        return None
    step(symbol)
    return fn(*args)


def devices(lib, count, errors):
    names, capabilities = [], []
    for ordinal in range(count):
        dev = ctypes.c_int()
        rc = call(lib, "cuDeviceGet", ctypes.byref(dev), ordinal)
        if rc:
            errors[f"cuDeviceGet({ordinal})"] = result_name(lib, rc)
            continue
        name = ctypes.create_string_buffer(256)
        rc = call(lib, "cuDeviceGetName", name, 256, dev)
        names.append(name.value.decode(errors="replace") if rc == 0 else None)
        major, minor = ctypes.c_int(), ctypes.c_int()
        rc1 = call(
            lib,
            "cuDeviceGetAttribute",
            ctypes.byref(major),
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            dev,
        )
        rc2 = call(
            lib,
            "cuDeviceGetAttribute",
            ctypes.byref(minor),
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            dev,
        )
        capabilities.append(f"{major.value}.{minor.value}" if rc1 == rc2 == 0 else None)
    return names, capabilities


def main():
    errors = {}  # type: dict[str, str]
    result = {"errors": errors}  # type: dict[str, object]
    step("dlopen libcuda.so.1")
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        result["load_error"] = str(exc)
        return result
    result["library"] = loaded_library("libcuda.so")
    # Announce the path now: if cuInit kills us, the parent still knows which library it was.
    sys.stderr.write(f"@library {result['library']}\n")
    sys.stderr.flush()
    version = ctypes.c_int()
    rc = call(lib, "cuDriverGetVersion", ctypes.byref(version))  # allowed before cuInit (cuda.h)
    if rc == 0:
        result["driver_version"] = version.value
    elif rc is not None:
        errors["cuDriverGetVersion"] = result_name(lib, rc)
    rc = call(lib, "cuInit", 0)
    if rc is None:
        result["load_error"] = "libcuda.so.1 has no cuInit symbol"
        return result
    result["init_result"] = result_name(lib, rc)
    if rc != 0:
        return result
    count = ctypes.c_int()
    rc = call(lib, "cuDeviceGetCount", ctypes.byref(count))
    if rc != 0:
        errors["cuDeviceGetCount"] = (
            result_name(lib, rc) if rc is not None else "missing symbol"
        )
        return result
    result["device_count"] = count.value
    result["device_names"], result["compute_capabilities"] = devices(lib, count.value, errors)
    return result


if __name__ == "__main__":
    # Die with the parent's time limit even if tfdoctor itself was killed (no orphan stuck in a
    # driver call): SIGALRM's default action ends the process, wherever it is blocked.
    signal.alarm(int(os.environ.get("TFDOCTOR_CHILD_DEADLINE", "0") or 0))
    print(json.dumps(main()))
