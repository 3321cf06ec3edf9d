"""NVML probe child: loads libnvidia-ml.so.1 through nvidia-ml-py's own loader; prints one JSON.

Run as `python -I _nvml_child.py` by tfdoctor.probes.driver, so a library that crashes or hangs
takes down only this process. Imports nothing from tfdoctor. Before each NVML call it writes
"@step <symbol>" to stderr, so the parent can say which call crashed.

Each call is wrapped on its own: NVML_ERROR_NOT_SUPPORTED and a symbol missing from an older
driver (NVMLError_FunctionNotFound) give null; any other error is reported by its NVML_ERROR_*
name under "errors".
"""

import json
import os
import signal
import sys

# `-I` implies `-P` from Python 3.11: the script's directory is not on sys.path. Appended, not
# prepended, so no module beside this one (probes/platform.py) can shadow the standard library.
sys.path.append(os.path.dirname(os.path.abspath(__file__)))

from _childlib import loaded_library, step  # noqa: E402  (needs the path above)

CHILD_PROTOCOL = 1


class Collector:
    """Calls NVML functions one by one, sorting failures into None or a named error."""

    def __init__(self, pynvml):
        self.nvml = pynvml
        self.names = {getattr(pynvml, n): n for n in dir(pynvml) if n.startswith("NVML_ERROR_")}
        self.quiet = (pynvml.NVMLError_NotSupported, pynvml.NVMLError_FunctionNotFound)

    def error_name(self, exc):
        return self.names.get(exc.value, f"NVML_ERROR_{exc.value}")

    def call(self, errors, field, symbol, func, *args, fallback=None):
        """func(*args); on a missing symbol try `fallback` (symbol, func) from an older API."""
        step(symbol)
        try:
            return func(*args)
        except self.nvml.NVMLError_FunctionNotFound:
            if fallback:
                return self.call(errors, field, fallback[0], fallback[1], *args)
            return None
        except self.quiet:
            return None
        except self.nvml.NVMLError as exc:
            errors[field] = self.error_name(exc)
            return None


def memory_info(handle, nvml):
    # The versioned struct (nvmlMemory_v2, driver >= 510) first: its `used` leaves out what the
    # driver reserves; the plain call has the same total and counts the reservation as used.
    try:
        return nvml.nvmlDeviceGetMemoryInfo(handle, version=nvml.nvmlMemory_v2)
    except nvml.NVMLError_FunctionNotFound:
        return nvml.nvmlDeviceGetMemoryInfo(handle)


def memory_total(handle, nvml):
    return memory_info(handle, nvml).total


REASONS = (
    # nvmlClocksEventReason* bits (nvml.h); gpu_idle is the normal state of an idle GPU: left out.
    ("applications_clocks_setting", 0x2),
    ("sw_power_cap", 0x4),
    ("hw_slowdown", 0x8),
    ("sync_boost", 0x10),
    ("sw_thermal_slowdown", 0x20),
    ("hw_thermal_slowdown", 0x40),
    ("hw_power_brake_slowdown", 0x80),
    ("display_clock_setting", 0x100),
)


def reason_names(mask):
    return None if mask is None else [name for name, bit in REASONS if mask & bit]


def gpu(c, index):
    """Everything the probe wants about GPU `index`; never raises NVMLError."""
    nvml = c.nvml
    errors = {}  # type: dict[str, str]
    out = {"index": index, "errors": errors}
    handle = c.call(
        errors, "handle", "nvmlDeviceGetHandleByIndex_v2", nvml.nvmlDeviceGetHandleByIndex, index
    )
    if handle is None:
        return out

    def get(field, symbol, func, *args, **kw):
        return c.call(errors, field, symbol, func, handle, *args, **kw)

    out["name"] = get("name", "nvmlDeviceGetName", nvml.nvmlDeviceGetName)
    out["uuid"] = get("uuid", "nvmlDeviceGetUUID", nvml.nvmlDeviceGetUUID)
    out["serial"] = get("serial", "nvmlDeviceGetSerial", nvml.nvmlDeviceGetSerial)
    pci = get("pci_bus_id", "nvmlDeviceGetPciInfo_v3", nvml.nvmlDeviceGetPciInfo_v3)
    bus_id = pci.busId if pci is not None else None  # bytes, or str where pynvml decodes it
    out["pci_bus_id"] = bus_id.decode() if isinstance(bus_id, bytes) else bus_id
    cc = get(
        "compute_capability",
        "nvmlDeviceGetCudaComputeCapability",
        nvml.nvmlDeviceGetCudaComputeCapability,
    )
    out["compute_capability"] = f"{cc[0]}.{cc[1]}" if cc else None
    info = get("memory_total_mib", "nvmlDeviceGetMemoryInfo_v2", memory_info, nvml)
    out["memory_total_mib"] = info.total // (1024 * 1024) if info is not None else None
    out["memory_used_mib"] = info.used // (1024 * 1024) if info is not None else None
    for field, symbol in (
        ("pcie_gen_current", "nvmlDeviceGetCurrPcieLinkGeneration"),
        ("pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
        ("pcie_width_current", "nvmlDeviceGetCurrPcieLinkWidth"),
        ("pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
    ):
        out[field] = get(field, symbol, getattr(nvml, symbol))
    mig = get("mig_mode", "nvmlDeviceGetMigMode", nvml.nvmlDeviceGetMigMode)
    out["mig_mode"] = bool(mig[0]) if mig else None
    if out["mig_mode"]:
        out["mig_devices"] = mig_devices(c, handle, errors)
    persistence = get(
        "persistence_mode", "nvmlDeviceGetPersistenceMode", nvml.nvmlDeviceGetPersistenceMode
    )
    out["persistence_mode"] = bool(persistence) if persistence is not None else None
    # Driver 535 renamed "throttle reasons" to "clocks event reasons"; older ones have the old name.
    reasons = get(
        "throttle_reasons",
        "nvmlDeviceGetCurrentClocksEventReasons",
        nvml.nvmlDeviceGetCurrentClocksEventReasons,
        fallback=(
            "nvmlDeviceGetCurrentClocksThrottleReasons",
            nvml.nvmlDeviceGetCurrentClocksThrottleReasons,
        ),
    )
    out["throttle_reasons"] = reason_names(reasons)
    out["ecc_uncorrected_volatile"] = get(
        "ecc_uncorrected_volatile",
        "nvmlDeviceGetTotalEccErrors",
        nvml.nvmlDeviceGetTotalEccErrors,
        nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
        nvml.NVML_VOLATILE_ECC,
    )
    out["ecc_corrected_volatile"] = get(
        "ecc_corrected_volatile",
        "nvmlDeviceGetTotalEccErrors",
        nvml.nvmlDeviceGetTotalEccErrors,
        nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED,
        nvml.NVML_VOLATILE_ECC,
    )
    out["temperature_c"] = get(
        "temperature_c",
        "nvmlDeviceGetTemperature",
        nvml.nvmlDeviceGetTemperature,
        nvml.NVML_TEMPERATURE_GPU,
    )
    limit = get(
        "power_limit_w", "nvmlDeviceGetEnforcedPowerLimit", nvml.nvmlDeviceGetEnforcedPowerLimit
    )
    out["power_limit_w"] = limit / 1000.0 if limit is not None else None
    default = get(
        "power_default_limit_w",
        "nvmlDeviceGetPowerManagementDefaultLimit",
        nvml.nvmlDeviceGetPowerManagementDefaultLimit,
    )
    out["power_default_limit_w"] = default / 1000.0 if default is not None else None
    out["sm_clock_mhz"] = get(
        "sm_clock_mhz", "nvmlDeviceGetClockInfo", nvml.nvmlDeviceGetClockInfo, nvml.NVML_CLOCK_SM
    )
    out["sm_clock_max_mhz"] = get(
        "sm_clock_max_mhz",
        "nvmlDeviceGetMaxClockInfo",
        nvml.nvmlDeviceGetMaxClockInfo,
        nvml.NVML_CLOCK_SM,
    )
    util = get(
        "utilization_pct", "nvmlDeviceGetUtilizationRates", nvml.nvmlDeviceGetUtilizationRates
    )
    out["utilization_pct"] = util.gpu if util is not None else None
    procs = get(
        "process_count",
        "nvmlDeviceGetComputeRunningProcesses_v3",
        nvml.nvmlDeviceGetComputeRunningProcesses_v3,
        fallback=(
            "nvmlDeviceGetComputeRunningProcesses_v2",
            nvml.nvmlDeviceGetComputeRunningProcesses_v2,
        ),
    )
    out["process_count"] = len(procs) if procs is not None else None
    return out


def mig_devices(c, handle, errors):
    """The MIG devices of a GPU in MIG mode: [{index, uuid, name, memory_total_mib}], or None.

    NVML API reference: nvmlDeviceGetMaxMigDeviceCount is the most MIG devices the GPU can have
    (0 with MIG off); nvmlDeviceGetMigDeviceHandleByIndex answers NVML_ERROR_NOT_FOUND for an
    index with no MIG device, and its handle takes the per-device queries (UUID "MIG-...").
    """
    nvml = c.nvml
    most = c.call(errors, "mig_devices", "nvmlDeviceGetMaxMigDeviceCount",
                  nvml.nvmlDeviceGetMaxMigDeviceCount, handle)
    if most is None:
        return None
    found = []
    for index in range(most):
        step("nvmlDeviceGetMigDeviceHandleByIndex")
        try:
            mig = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, index)
        except nvml.NVMLError_NotFound:
            continue
        except nvml.NVMLError as exc:
            errors["mig_devices"] = c.error_name(exc)
            return None
        info = {}  # type: dict[str, str]
        total = c.call(info, "memory", "nvmlDeviceGetMemoryInfo", memory_total, mig, nvml)
        found.append({
            "index": index,
            "uuid": c.call(info, "uuid", "nvmlDeviceGetUUID", nvml.nvmlDeviceGetUUID, mig),
            "name": c.call(info, "name", "nvmlDeviceGetName", nvml.nvmlDeviceGetName, mig),
            "memory_total_mib": total // (1024 * 1024) if total is not None else None,
        })
    return found


NVLINK_MAX_LINKS = 18
"""nvml.h NVML_NVLINK_MAX_LINKS of the drivers in the field (Hopper has 18); a board answers
NOT_SUPPORTED or INVALID_ARGUMENT past its last link, where the loop stops."""
P2P_STATUS = ("ok", "chipset-not-supported", "gpu-not-supported", "ioh-topology-not-supported",
              "disabled-by-regkey", "not-supported", "unknown")
"""nvmlGpuP2PStatus_t, in code order."""
P2P_CAPS = (("read", 0), ("nvlink", 2))
"""nvmlGpuP2PCapsIndex_t READ and NVLINK (pynvml's NVML_P2P_CAPS_INDEX_READ is a tuple)."""


def nvlink_states(c, handle, errors):
    """[True/False per NVLink link], [] for a board without NVLink, None when unknown."""
    nvml = c.nvml
    states = []
    for link in range(NVLINK_MAX_LINKS):
        step("nvmlDeviceGetNvLinkState")
        try:
            states.append(bool(nvml.nvmlDeviceGetNvLinkState(handle, link)))
        except (nvml.NVMLError_NotSupported, nvml.NVMLError_InvalidArgument):
            break
        except nvml.NVMLError_FunctionNotFound:
            return None
        except nvml.NVMLError as exc:
            errors["nvlink"] = c.error_name(exc)
            return None
    return states


def p2p_matrix(c, handles, errors):
    """{"read": [[status per peer] per GPU], "nvlink": ...}: NVML's P2P verdict per pair."""
    nvml = c.nvml
    out = {}
    for name, caps in P2P_CAPS:
        rows = []
        for a, ha in enumerate(handles):
            row = []
            for b, hb in enumerate(handles):
                code = None if a == b else c.call(
                    errors, "p2p_" + name, "nvmlDeviceGetP2PStatus", nvml.nvmlDeviceGetP2PStatus,
                    ha, hb, caps)
                row.append(P2P_STATUS[code] if isinstance(code, int) and 0 <= code < 7 else None)
            rows.append(row)
        out[name] = rows
    return out


def topology(c, count, errors):
    """NVLink link states per GPU and the P2P matrices (the interconnect NCCL will use)."""
    nvml = c.nvml
    handles = []
    for index in range(min(count or 0, 16)):
        handle = c.call(errors, "handle", "nvmlDeviceGetHandleByIndex_v2",
                        nvml.nvmlDeviceGetHandleByIndex, index)
        if handle is None:
            return None
        handles.append(handle)
    if not handles:
        return None
    links = [nvlink_states(c, h, errors) for h in handles]
    return {"nvlink": links, "p2p": p2p_matrix(c, handles, errors) if len(handles) > 1 else None}


def safe_gpu(c, index):
    """gpu(), with a bug of ours (or a pynvml API change) confined to this GPU's errors."""
    try:
        return gpu(c, index)
    except Exception as exc:  # noqa: BLE001
        return {"index": index, "errors": {"probe": f"{type(exc).__name__}: {exc}"}}


def main():
    result = {"protocol": CHILD_PROTOCOL, "errors": {}}
    try:
        import pynvml
    except Exception as exc:  # noqa: BLE001  (report, never traceback)
        result["import_error"] = f"{type(exc).__name__}: {exc}"
        return result
    c = Collector(pynvml)
    step("nvmlInitWithFlags")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        result["init_error"] = c.error_name(exc)
        result["library"] = loaded_library("libnvidia-ml.so")
        return result
    result["library"] = loaded_library("libnvidia-ml.so")
    errors = result["errors"]
    result["driver_version"] = c.call(
        errors, "driver_version", "nvmlSystemGetDriverVersion", pynvml.nvmlSystemGetDriverVersion
    )
    result["cuda_driver_version"] = c.call(
        errors,
        "cuda_driver_version",
        "nvmlSystemGetCudaDriverVersion",
        pynvml.nvmlSystemGetCudaDriverVersion,
    )
    count = c.call(errors, "device_count", "nvmlDeviceGetCount_v2", pynvml.nvmlDeviceGetCount)
    result["device_count"] = count
    result["gpus"] = [safe_gpu(c, i) for i in range(count or 0)]
    # The interconnect of a machine with two or more GPUs (the GPU table's matrix); tfdoctor
    # cluster asks for it with --topology on every node.
    if "--topology" in sys.argv or (count or 0) > 1:
        try:
            result["topology"] = topology(c, count, errors)
        except Exception as exc:  # noqa: BLE001  (a bug of ours stays in this field)
            result["topology_error"] = f"{type(exc).__name__}: {exc}"
    step("nvmlShutdown")
    try:
        pynvml.nvmlShutdown()
    except pynvml.NVMLError:
        pass  # nothing left to learn; the process exits anyway
    return result


if __name__ == "__main__":
    # Die with the parent's time limit even if tfdoctor itself was killed (no orphan stuck in a
    # driver call): SIGALRM's default action ends the process, wherever it is blocked.
    signal.alarm(int(os.environ.get("TFDOCTOR_CHILD_DEADLINE", "0") or 0))
    print(json.dumps(main()))
