"""MIG: which MIG device a CUDA process, TensorFlow included, gets on a GPU in MIG mode.

The MIG user guide ("CUDA Device Enumeration"): however many MIG devices exist, a single CUDA
process enumerates a single one; CUDA_VISIBLE_DEVICES=MIG-<uuid> (drivers >= R470, UUIDs as
`nvidia-smi -L` lists them) chooses which. Without it CUDA takes the first. What CUDA makes of
plain indices or GPU- UUIDs naming a GPU in MIG mode is not documented there: tfdoctor counts
no MIG device for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from tfdoctor.facts import Facts, GpuFacts, MigDeviceFacts
from tfdoctor.findings import Finding, Remediation, Severity

MIG_DOCS = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/"
MIG_ENUMERATION = ("https://docs.nvidia.com/datacenter/tesla/mig-user-guide/"
                   "mig-device-names.html#cuda-device-enumeration")


@dataclass(frozen=True)
class MigView:
    """The machine's MIG devices and the one this process's CUDA enumerates."""

    gpus: tuple[GpuFacts, ...]
    """GPUs in MIG mode."""
    devices: tuple[tuple[GpuFacts, MigDeviceFacts], ...]
    """Every MIG device NVML listed, with its GPU."""
    listed: bool
    """NVML listed the MIG devices of every GPU in MIG mode (else `devices` may be short)."""
    selected: tuple[GpuFacts, MigDeviceFacts] | None
    """The MIG device CUDA gives this process, when known."""
    usable: int
    """MIG devices TensorFlow can use: 1, or 0 when none exists or CUDA_VISIBLE_DEVICES names none."""
    how: str
    """Why that one (or none): a phrase for messages."""


def mig_view(facts: Facts) -> MigView | None:
    """None when no GPU is in MIG mode."""
    gpus = tuple(g for g in facts.driver.gpus if g.mig_mode)
    if not gpus:
        return None
    listed = all(g.mig_devices is not None for g in gpus)
    devices = tuple((g, m) for g in gpus for m in g.mig_devices or ())
    value = facts.env.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        if devices:
            return MigView(gpus, devices, listed, devices[0], 1,
                           "the first one, as CUDA_VISIBLE_DEVICES is unset")
        if listed:
            return MigView(gpus, devices, listed, None, 0, "no MIG device has been created")
        return MigView(gpus, devices, listed, None, 1, "the first one (NVML did not list them)")
    for raw in value.split(","):
        entry = raw.strip()
        if not entry.startswith("MIG-") or len(entry) <= 4:
            break
        match = [d for d in devices if d[1].uuid and d[1].uuid.startswith(entry)]
        if len(match) == 1:
            return MigView(gpus, devices, listed, match[0], 1, "the one CUDA_VISIBLE_DEVICES names")
        if listed:
            break  # an entry naming no MIG device (or several) ends CUDA's list
        return MigView(gpus, devices, listed, None, 1, "the one CUDA_VISIBLE_DEVICES names")
    return MigView(gpus, devices, listed, None, 0,
                   f"CUDA_VISIBLE_DEVICES={value!r} names no MIG device of this machine")


def describe(m: MigDeviceFacts) -> str:
    """"MIG-5c1f... (NVIDIA A100-SXM4-40GB MIG 1g.5gb, 4864 MiB)"."""
    extra = ", ".join(p for p in (m.name, f"{m.memory_total_mib} MiB" if m.memory_total_mib else None) if p)
    return f"{m.uuid or f'MIG device {m.index}'}" + (f" ({extra})" if extra else "")


def mig_finding(facts: Facts, g: GpuFacts, ev: dict[str, str]) -> Finding:
    """gpu-mig-enabled for GPU `g`: its MIG devices, the one TensorFlow gets, how to pick another."""
    view = mig_view(facts)
    assert view is not None  # g is in MIG mode
    mine = tuple(m for gpu, m in view.devices if gpu.index == g.index)
    evidence = {**ev, "gpu.mig_mode": "enabled"}
    if g.mig_devices is not None:
        evidence["gpu.mig_devices"] = "\n".join(describe(m) for m in mine) or "none"
    if "CUDA_VISIBLE_DEVICES" in facts.env:
        evidence["env.CUDA_VISIBLE_DEVICES"] = facts.env["CUDA_VISIBLE_DEVICES"]
    disable = Remediation("disable-mig", (f"sudo nvidia-smi -i {g.index} -mig 0",), needs_root=True)
    choose = ("Start each TensorFlow process with CUDA_VISIBLE_DEVICES=MIG-<uuid> of the MIG device it "
              "should use" + (f" ({', '.join(m.uuid for m in mine if m.uuid)})" if mine else
                              " (`nvidia-smi -L` lists them)")
              + f", or disable MIG with `sudo nvidia-smi -i {g.index} -mig 0` to use the whole GPU.")
    if g.mig_devices is not None and not mine:
        return Finding(
            "gpu-mig-enabled", Severity.ERROR,
            f"GPU {g.index} is in MIG mode with no MIG device: CUDA, and so TensorFlow, cannot use it.",
            evidence, hint="Create a MIG device (GPU and compute instance), e.g. "
            f"`sudo nvidia-smi mig -i {g.index} -cgi <profile> -C`, or disable MIG with "
            f"`sudo nvidia-smi -i {g.index} -mig 0`.", remediation=disable, links=(MIG_DOCS,))
    count = f"{len(mine)} MIG device(s)" if g.mig_devices is not None else "MIG devices"
    total = len(view.devices)
    if view.usable:
        seen = f"{describe(view.selected[1])}, {view.how}" if view.selected else view.how
        among = f" of the {total} on this machine" if total > 1 else ""
        message = (f"GPU {g.index} is in MIG mode with {count}; TensorFlow, like any CUDA process, sees "
                   f"one MIG device{among}: {seen}.")
    else:
        message = f"GPU {g.index} is in MIG mode with {count}, but TensorFlow gets none: {view.how}."
    return Finding(
        "gpu-mig-enabled", Severity.WARNING if view.usable else Severity.ERROR, message,
        evidence, hint=choose, remediation=disable, links=(MIG_ENUMERATION, MIG_DOCS))
