"""NVML sampler child: one JSON line per GPU every interval until stdin closes (tfdoctor's python).

Standalone: imports only the standard library and pynvml (nvidia-ml-py). Prints
{"event": "unavailable", "error": ...} and exits when NVML does not load.
"""

# ruff: noqa: UP031  (runs in the target interpreter, kept to Python 3.7 syntax)

import json
import select
import sys
import time


def _try(func, *args):
    try:
        return func(*args)
    except Exception:  # noqa: BLE001  (NOT_SUPPORTED on many boards: the field stays null)
        return None


def _reasons(pynvml, mask):
    if mask is None:
        return []
    names = []
    for attr in dir(pynvml):
        if attr.startswith("nvmlClocksThrottleReason") and attr not in (
            "nvmlClocksThrottleReasonAll",
            "nvmlClocksThrottleReasonNone",
        ):
            bit = getattr(pynvml, attr)
            if isinstance(bit, int) and bit and mask & bit:
                # nvmlClocksThrottleReasonHwThermalSlowdown -> hw_thermal_slowdown
                raw = attr[len("nvmlClocksThrottleReason") :]
                names.append(
                    "".join("_" + c.lower() if c.isupper() else c for c in raw).lstrip("_")
                )
    return sorted(set(names))


def _event_reasons(pynvml, handle):
    """The clock-event bitmask: the current name first, the pre-R535 "throttle" name second,
    so a pynvml that dropped the old name still answers (as the NVML probe child does)."""
    for name in ("nvmlDeviceGetCurrentClocksEventReasons",
                 "nvmlDeviceGetCurrentClocksThrottleReasons"):
        func = getattr(pynvml, name, None)
        value = _try(func, handle) if func is not None else None
        if value is not None:
            return value
    return None


def sample(pynvml, index, handle):
    power = _try(pynvml.nvmlDeviceGetPowerUsage, handle)
    limit = _try(pynvml.nvmlDeviceGetEnforcedPowerLimit, handle)
    default = _try(pynvml.nvmlDeviceGetPowerManagementDefaultLimit, handle)
    util = _try(pynvml.nvmlDeviceGetUtilizationRates, handle)
    return {
        "gpu": index,
        "t": time.time(),
        "sm_clock_mhz": _try(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_SM),
        "sm_clock_max_mhz": _try(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_SM),
        "power_w": power / 1000.0 if power is not None else None,
        "power_limit_w": limit / 1000.0 if limit is not None else None,
        "power_default_limit_w": default / 1000.0 if default is not None else None,
        "utilization_pct": util.gpu if util is not None else None,
        "temperature_c": _try(pynvml.nvmlDeviceGetTemperature, handle, pynvml.NVML_TEMPERATURE_GPU),
        "throttle_reasons": _reasons(pynvml, _event_reasons(pynvml, handle)),
        "pcie_gen": _try(pynvml.nvmlDeviceGetCurrPcieLinkGeneration, handle),
        "pcie_gen_max": _try(pynvml.nvmlDeviceGetMaxPcieLinkGeneration, handle),
        "pcie_width": _try(pynvml.nvmlDeviceGetCurrPcieLinkWidth, handle),
        "pcie_width_max": _try(pynvml.nvmlDeviceGetMaxPcieLinkWidth, handle),
    }


def main():
    interval = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
    try:
        import pynvml

        pynvml.nvmlInit()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    except Exception as exc:  # noqa: BLE001
        print(
            json.dumps({"event": "unavailable", "error": "%s: %s" % (type(exc).__name__, exc)}),
            flush=True,
        )
        return
    while True:
        for i, handle in enumerate(handles):
            print(json.dumps(sample(pynvml, i, handle)), flush=True)
        ready, _, _ = select.select([sys.stdin], [], [], interval)
        if ready and not sys.stdin.read(1):
            return


if __name__ == "__main__":
    main()
