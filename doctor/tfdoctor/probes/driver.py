"""The NVIDIA driver: NVML in an isolated child, plus what the kernel side shows without NVML.

NVML is loaded by nvidia-ml-py's own loader (`CDLL("libnvidia-ml.so.1")`) in `_nvml_child.py`,
run by tfdoctor's own interpreter with the host's environment and a time limit, so a crashing
or hanging driver library costs a ProbeIssue, never the doctor. Independently of NVML the probe
reads /proc/driver/nvidia/version, /proc/modules, /dev/nvidia* and the Secure Boot variable, and
falls back to `nvidia-smi` when NVML cannot answer. Together these tell apart: no driver, module
not loaded (nouveau, Secure Boot), user-space/kernel mismatch, no devices, no permission.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfdoctor.facts import DriverFacts, GpuFacts, MigDeviceFacts, ProbeIssue, TopologyFacts
from tfdoctor.host import Host

NVML_CHILD = Path(__file__).with_name("_nvml_child.py")
SECURE_BOOT_VAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d0-aa0d-00e098032b8c"
SMI_QUERY = "index,name,pci.bus_id,memory.total,uuid,driver_version"

Access = Callable[[str, int], bool]


@dataclass(frozen=True, slots=True)
class ChildOutcome:
    """What a probe child printed (`data`), or why it did not (`failure`)."""

    data: dict[str, Any] | None
    failure: str | None = None
    """"timed out", "crashed: SIGSEGV", "exited with status 1", "could not start ..."."""
    markers: dict[str, str] = dataclasses.field(default_factory=dict)
    """The last "@key value" line per key the child wrote to stderr: "step" is the call it was
    in when it ended, "library" the path it had loaded."""


def run_probe_child(host: Host, script: Path, probe: str, issues: list[ProbeIssue]) -> ChildOutcome:
    """Run a probe script in tfdoctor's own interpreter; a failure also makes a ProbeIssue."""
    result = host.run([host.own_python, "-I", str(script)], timeout=host.timeout)
    lines = result.stderr.splitlines()
    markers = dict(line[1:].partition(" ")[::2] for line in lines if line.startswith("@"))
    step = markers.get("step")
    where = f" in {step}" if step else ""
    tail = " | ".join([line for line in lines if not line.startswith("@")][-3:])
    evidence = f" ({tail})" if tail else ""
    if result.timed_out:
        issues.append(
            ProbeIssue(probe, "timeout", f"{script.name} timed out after {host.timeout:g} s{where}")
        )
        return ChildOutcome(None, "timed out", markers)
    if result.signal_name:
        issues.append(
            ProbeIssue(probe, "crash", f"{script.name} killed by {result.signal_name}{where}")
        )
        return ChildOutcome(None, f"crashed: {result.signal_name}", markers)
    if not result.ok:
        failure = result.describe_failure()
        issues.append(ProbeIssue(probe, "error", f"{script.name} {failure}{where}{evidence}"))
        return ChildOutcome(None, failure, markers)
    try:
        data = json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        data = None
    if not isinstance(data, dict):
        issues.append(ProbeIssue(probe, "error", f"{script.name} printed no JSON object{evidence}"))
        return ChildOutcome(None, "no output", markers)
    return ChildOutcome(data, None, markers)


# --- pure parsers over recorded text -------------------------------------------------------------

_PROC_VERSION = re.compile(r"NVRM version:.*?Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)")


def parse_proc_version(text: str | None) -> tuple[str | None, bool | None]:
    """(kernel module version, is the open module) from /proc/driver/nvidia/version."""
    if not text:
        return None, None
    match = _PROC_VERSION.search(text)
    if not match:
        return None, None
    return match.group(1), "Open Kernel Module" in match.group(0)


def parse_modules(text: str | None) -> tuple[str, ...]:
    """Names of the loaded kernel modules, from /proc/modules."""
    return tuple(line.split()[0] for line in (text or "").splitlines() if line.strip())


def decode_cuda_version(value: int | None) -> str | None:
    """CUDA's integer version encoding (1000 * major + 10 * minor): 12020 -> "12.2"."""
    if not value or value < 1000:
        return None
    return f"{value // 1000}.{value % 1000 // 10}"


def nvml_library_version(path: str | None) -> str | None:
    """The driver version in a real NVML file name: libnvidia-ml.so.580.65.06 -> "580.65.06"."""
    match = re.search(r"libnvidia-ml\.so\.(\d+\.\d+(?:\.\d+)*)$", path or "")
    return match.group(1) if match else None


def parse_nvidia_smi_csv(text: str) -> tuple[str | None, tuple[GpuFacts, ...]]:
    """(driver version, GPUs) from `nvidia-smi --query-gpu=SMI_QUERY --format=csv,noheader,...`."""
    driver = None
    gpus = []
    for row in csv.reader(text.splitlines(), skipinitialspace=True):
        if len(row) != 6 or not row[0].strip().isdigit():
            continue
        index, name, bus_id, memory, uuid, version = (
            None if v.strip() in ("[N/A]", "") else v.strip() for v in row
        )
        driver = driver or version
        gpus.append(
            GpuFacts(
                index=int(index or 0),
                name=name,
                pci_bus_id=bus_id,
                uuid=uuid,
                memory_total_mib=int(memory) if memory and memory.isdigit() else None,
            )
        )
    return driver, tuple(gpus)


def parse_nvidia_smi_failure(text: str) -> tuple[str | None, str | None]:
    """(first line, NVML library version) of a failed nvidia-smi, e.g. after a driver upgrade:
    "Failed to initialize NVML: Driver/library version mismatch" / "NVML library version: 580.95".
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    match = re.search(r"NVML library version:\s*(\S+)", text)
    return (lines[0] if lines else None), (match.group(1) if match else None)


def parse_secure_boot(data: bytes | None) -> bool | None:
    """Secure Boot from its efivar: 4 bytes of attributes, then one byte 1 = on, 0 = off."""
    if not data or len(data) < 5:
        return None
    return data[4] == 1


# --- the probe -----------------------------------------------------------------------------------


def device_nodes(host: Host, access: Access) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(/dev/nvidia* nodes and /dev/dxg, those this user cannot open read-write)."""
    dev = host.path("/dev")
    try:
        names = sorted(
            n
            for n in os.listdir(dev)
            if (n.startswith("nvidia") or n == "dxg") and not (dev / n).is_dir()
        )
    except OSError:
        return (), ()
    nodes = tuple(f"/dev/{n}" for n in names)
    denied = tuple(f"/dev/{n}" for n in names if not access(str(dev / n), os.R_OK | os.W_OK))
    return nodes, denied


def _read_bytes(host: Host, path: str) -> bytes | None:
    try:
        return host.path(path).read_bytes()
    except OSError:
        return None


def _gpu_from_child(data: dict[str, Any]) -> GpuFacts:
    known = {f.name for f in dataclasses.fields(GpuFacts)}
    values = {k: v for k, v in data.items() if k in known and v is not None}
    if values.get("throttle_reasons") is not None:
        values["throttle_reasons"] = tuple(values["throttle_reasons"])
    if values.get("mig_devices") is not None:
        mig_known = {f.name for f in dataclasses.fields(MigDeviceFacts)}
        values["mig_devices"] = tuple(
            MigDeviceFacts(**{k: v for k, v in m.items() if k in mig_known})
            for m in values["mig_devices"] if isinstance(m, dict) and isinstance(m.get("index"), int))
    values["index"] = int(data.get("index", 0))
    return GpuFacts(**values)


def _nvml_fields(host: Host, issues: list[ProbeIssue]) -> dict[str, Any]:
    """DriverFacts fields learned through NVML (nvml_error set when it did not initialise)."""
    outcome = run_probe_child(host, NVML_CHILD, "driver", issues)
    if outcome.data is None:
        return {"nvml_error": outcome.failure}
    data = outcome.data
    if "import_error" in data:
        issues.append(
            ProbeIssue("driver", "error", f"nvidia-ml-py not importable: {data['import_error']}")
        )
        return {}
    fields: dict[str, Any] = {
        "nvml_library": data.get("library"),
        "nvml_library_version": nvml_library_version(data.get("library")),
    }
    if data.get("init_error"):
        return fields | {"nvml_error": data["init_error"]}
    return fields | {
        "driver_version": data.get("driver_version"),
        "cuda_driver_version": decode_cuda_version(data.get("cuda_driver_version")),
        "device_count": data.get("device_count"),
        "errors": dict(data.get("errors") or {}),
        "gpus": tuple(_gpu_from_child(g) for g in data.get("gpus") or ()),
        "topology": _topology_from_child(data.get("topology")),
    }


def _topology_from_child(data: Any) -> TopologyFacts | None:
    """The child's {"nvlink": [...], "p2p": {"read": [[...]], "nvlink": [[...]]}} as facts."""
    if not isinstance(data, dict):
        return None

    def matrix(rows: Any) -> tuple[tuple[str | None, ...], ...] | None:
        if not isinstance(rows, list):
            return None
        return tuple(tuple(v if isinstance(v, str) else None for v in row or ()) for row in rows)

    links: list[Any] = data["nvlink"] if isinstance(data.get("nvlink"), list) else []
    p2p: dict[str, Any] = data["p2p"] if isinstance(data.get("p2p"), dict) else {}
    return TopologyFacts(
        nvlink=tuple(tuple(bool(s) for s in g) if isinstance(g, list) else None for g in links),
        p2p_read=matrix(p2p.get("read")),
        p2p_nvlink=matrix(p2p.get("nvlink")),
    )


def _smi_fields(host: Host, smi: str, known: dict[str, Any]) -> dict[str, Any]:
    """What nvidia-smi adds when NVML could not answer: driver version and GPUs, or its error."""
    result = host.run([smi, f"--query-gpu={SMI_QUERY}", "--format=csv,noheader,nounits"])
    if result.ok:
        driver, gpus = parse_nvidia_smi_csv(result.stdout)
        return {"driver_version": driver, "gpus": gpus, "device_count": len(gpus)}
    first, lib_version = parse_nvidia_smi_failure(result.stdout + "\n" + result.stderr)
    fields: dict[str, Any] = {"nvidia_smi_error": first or result.describe_failure()}
    if lib_version and not known.get("nvml_library_version"):
        fields["nvml_library_version"] = lib_version
    return fields


def probe_driver(
    host: Host, issues: list[ProbeIssue], *, access: Access = os.access
) -> DriverFacts:
    """The driver as NVML, /proc, /dev and nvidia-smi see it.

    `access` decides which device nodes count as unusable; it defaults to os.access for the
    current user. Tests pass their own, since they run as root, for whom every node is open.
    """
    version, is_open = parse_proc_version(host.read_text("/proc/driver/nvidia/version"))
    modules = parse_modules(host.read_text("/proc/modules"))
    nodes, denied = device_nodes(host, access)
    fields: dict[str, Any] = {
        "kernel_module_version": version,
        "kernel_module_open": is_open,
        "nvidia_module_loaded": "nvidia" in modules,
        "nouveau_loaded": "nouveau" in modules,
        "nvidia_modules": tuple(m for m in modules if m.startswith("nvidia")),
        "device_nodes": nodes,
        "unreadable_device_nodes": denied,
        "secure_boot": parse_secure_boot(_read_bytes(host, SECURE_BOOT_VAR)),
        "nvidia_smi": host.which("nvidia-smi"),
    }
    fields |= _nvml_fields(host, issues)
    if fields["nvidia_smi"] and not fields.get("driver_version"):
        fields |= _smi_fields(host, fields["nvidia_smi"], fields)
    return DriverFacts(**fields)
