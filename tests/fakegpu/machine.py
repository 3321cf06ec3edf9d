"""A fake NVIDIA machine under a temporary directory, for probes that run their real code.

`FakeMachine(tmp_path)` lays out a root (/proc/driver/nvidia/version, /proc/modules, /dev/nvidia*,
/proc/version, efivars), a lib dir with the stub libnvidia-ml / libcuda built from tests/stubs,
their scenario JSON files, and fake commands (nvidia-smi) in a bin dir. `host()` returns a
tfdoctor Host whose environment points the real loaders at all that: LD_LIBRARY_PATH holds only
the fake lib dirs (this machine has no real driver libraries to leak in), TFDOCTOR_FAKE_NVML /
TFDOCTOR_FAKE_CUDA name the scenario files, PATH starts with the fake bin dir.

`from_scenario(tmp_path, doc)` builds one from a scenario document (docs/scenarios.md).
Permission denied on /dev/nvidia*: tests run as root, for whom every node is open, so a scenario
lists `denied_nodes` and `access()` gives the stand-in for os.access that probe_driver accepts.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stubs.build import install_stub
from stubs.catalogue import CUDA_SONAME, NVML_SONAME, stub
from tfdoctor.host import Host

SECURE_BOOT_VAR = "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d0-aa0d-00e098032b8c"
PROC_VERSION_OPEN = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {v}  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025\n"
    "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n"
)
PROC_VERSION_PROPRIETARY = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  {v}  Sat Oct  7 15:39:11 UTC 2023\n"
    "GCC version:  gcc version 9.4.0 (Ubuntu 9.4.0-1ubuntu1~20.04.2)\n"
)


class FakeMachine:
    """One fake machine: a root tree, stub libraries, scenario files and fake commands."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "root"
        self.lib_dir = base / "lib"
        self.bin_dir = base / "bin"
        self.library_dirs: list[Path] = [self.lib_dir]
        """LD_LIBRARY_PATH, in order; layout helpers append their trees here."""
        self.env: dict[str, str] = {}
        self.denied_nodes: set[str] = set()
        for d in (self.root / "proc", self.root / "dev", self.lib_dir, self.bin_dir):
            d.mkdir(parents=True, exist_ok=True)
        self.write(
            "/proc/version",
            "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) #45-Ubuntu SMP\n",
        )

    def write(self, machine_path: str, text: str) -> Path:
        """Write a file at a machine path under the root."""
        path = self.root / machine_path.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def kernel_module(
        self, version: str, *, open_module: bool = True, text: str | None = None
    ) -> None:
        """A loaded nvidia.ko: /proc/driver/nvidia/version (recorded format unless `text`)."""
        template = PROC_VERSION_OPEN if open_module else PROC_VERSION_PROPRIETARY
        self.write(
            "/proc/driver/nvidia/version", text if text is not None else template.format(v=version)
        )

    def modules(self, names: Iterable[str]) -> None:
        """/proc/modules listing `names` (in /proc/modules' own line format)."""
        lines = [f"{n} 1437696 0 - Live 0x0000000000000000 (POE)" for n in names]
        self.write("/proc/modules", "\n".join(lines) + "\n")

    def device_nodes(self, names: Iterable[str], denied: Iterable[str] = ()) -> None:
        """/dev/<name> as plain files; `denied` ones are unusable through `access()`."""
        for name in names:
            self.write(f"/dev/{name}", "")
        self.denied_nodes |= {f"/dev/{n}" for n in denied}

    def access(self, path: str, mode: int) -> bool:
        """Stand-in for os.access as a non-root user would see the device nodes."""
        machine_path = "/" + os.path.relpath(path, self.root)
        return machine_path not in self.denied_nodes and os.access(path, mode)

    def secure_boot(self, enabled: bool) -> None:
        """The SecureBoot efivar: 4 attribute bytes, then 1 (on) or 0 (off)."""
        path = self.root / SECURE_BOOT_VAR
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x06\x00\x00\x00" + bytes([1 if enabled else 0]))

    def nvml(
        self,
        config: dict[str, Any],
        *,
        omit: Iterable[str] = (),
        library_version: str | None = None,
        directory: Path | None = None,
    ) -> Path:
        """Install the stub NVML configured by `config`; named like a real driver's file when
        `library_version` is given (libnvidia-ml.so.<version> + the libnvidia-ml.so.1 link)."""
        directory = directory or self.lib_dir
        self.env["TFDOCTOR_FAKE_NVML"] = str(self._scenario_file("nvml.json", config))
        built = stub("nvml.c", NVML_SONAME, omit)
        if not library_version:
            return install_stub(built, directory)
        real = install_stub(built, directory, f"libnvidia-ml.so.{library_version}")
        (directory / NVML_SONAME).symlink_to(real.name)
        return real

    def cuda(
        self,
        config: dict[str, Any],
        *,
        omit: Iterable[str] = (),
        directory: Path | None = None,
        filename: str = CUDA_SONAME,
    ) -> Path:
        """Install the stub libcuda configured by `config` into `directory` (default: lib dir)."""
        self.env["TFDOCTOR_FAKE_CUDA"] = str(self._scenario_file("cuda.json", config))
        directory = directory or self.lib_dir
        if directory not in self.library_dirs:
            self.library_dirs.append(directory)
        return install_stub(stub("cuda.c", CUDA_SONAME, omit), directory, filename)

    def wsl(self) -> Path:
        """WSL2: a microsoft kernel, /dev/dxg, no nvidia module; returns /usr/lib/wsl/lib, where
        WSL mounts the Windows driver's libcuda / libnvidia-ml (on a real WSL2 the ldconfig
        cache lists it via /etc/ld.so.conf.d/ld.so.wsl.conf; here LD_LIBRARY_PATH stands in)."""
        self.write(
            "/proc/version",
            "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1)\n",
        )
        self.device_nodes(["dxg"])
        wsl_lib = self.root / "usr/lib/wsl/lib"
        wsl_lib.mkdir(parents=True, exist_ok=True)
        self.library_dirs.insert(0, wsl_lib)
        return wsl_lib

    def command(self, name: str, *, stdout: str = "", stderr: str = "", exit_code: int = 0) -> Path:
        """A fake command in the bin dir that prints recorded output (argv is ignored)."""
        out = self._scenario_file(f"{name}.stdout", stdout)
        err = self._scenario_file(f"{name}.stderr", stderr)
        script = self.bin_dir / name
        script.write_text(f"#!/bin/sh\ncat '{out}'\ncat '{err}' >&2\nexit {exit_code}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return script

    def host(self, *, timeout: float = 10.0, **extra_env: str) -> Host:
        """A Host for this machine, using tfdoctor's own interpreter for the probe children."""
        env = {
            "PATH": f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": os.environ.get("HOME", "/root"),
            "LD_LIBRARY_PATH": os.pathsep.join(str(d) for d in self.library_dirs),
            **self.env,
            **extra_env,
        }
        # coverage.py's subprocess support finds its settings through these: measure children too.
        env |= {k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")}
        return Host(
            env=env,
            root=self.root,
            python=sys.executable,
            own_python=sys.executable,
            timeout=timeout,
        )

    def _scenario_file(self, name: str, content: dict[str, Any] | str) -> Path:
        path = self.base / "scenario" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content, indent=1))
        return path


def expand_gpus(nvml: dict[str, Any]) -> list[dict[str, Any]]:
    """The explicit GPU list of an NVML scenario: `gpus`, or `gpu_count` copies of `gpu` with
    per-index uuid / serial / PCI bus id, then `gpu_overrides` {"<index>": {...}} merged in.
    A GPU's `"mig": N` becomes MIG mode with N MIG devices (mig_devices)."""
    if "gpus" in nvml:
        gpus = [dict(g) for g in nvml["gpus"]]
    else:
        gpus = [dict(nvml.get("gpu", {})) for _ in range(nvml.get("gpu_count", 0))]
    for i, gpu in enumerate(gpus):
        gpu.setdefault("uuid", f"GPU-{0x5CA1AB1E + i:08x}-1d2c-4e0f-9a7b-{i:012x}")
        gpu.setdefault("serial", f"165322{i:07d}")
        gpu.setdefault("pci_bus_id", f"00000000:{0x18 + 0x10 * i:02X}:00.0")
        gpu.update(nvml.get("gpu_overrides", {}).get(str(i), {}))
        if gpu.get("mig") is not None:
            count = int(gpu.pop("mig"))
            gpu.update(mig_mode=1, mig_max_devices=MIG_SLICES)
            gpu.setdefault("mig_devices", mig_devices(gpu, i, count))
    return gpus


MIG_SLICES = 7
"""Compute slices and MIG devices at most of an A100 / H100 (MIG user guide, "Supported GPUs")."""


def mig_devices(gpu: dict[str, Any], index: int, count: int) -> list[dict[str, Any]]:
    """`count` equal MIG devices of `gpu`, named as CUDA and NVML name them ("NVIDIA
    A100-SXM4-40GB MIG 1g.5gb": the GPU's name, "MIG", the profile) with MIG- UUIDs (drivers
    >= R470). Sizes are the profile's share of 8 memory slices: close to, not exactly, the real
    profiles' memory."""
    if count <= 0:
        return []
    slices = max(MIG_SLICES // count, 1)
    memory = int(gpu.get("memory_total_mib") or 16384) * slices // 8
    profile = f"{slices}g.{max(round(memory / 1024), 1)}gb"
    return [{"uuid": f"MIG-{0x3161D000 + index:08x}-7e2a-5b1c-8d3f-{index:06x}{j:06x}",
             "name": f"{gpu.get('name', 'GPU')} MIG {profile}", "memory_total_mib": memory}
            for j in range(count)]


CUDA_DEVICE_KEYS = ("name", "compute_capability", "memory_total_mib", "uuid", "pci_bus_id",
                    "attributes")
"""What the stub libcuda's devices take from the NVML GPUs of the same scenario."""


def cuda_devices(gpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stub libcuda's devices for these NVML GPUs: a GPU in MIG mode is its MIG devices,
    each with the GPU's compute capability and PCI bus id and "mig": true."""
    out = []
    for g in gpus:
        device = {k: g[k] for k in CUDA_DEVICE_KEYS if k in g}
        if g.get("mig_mode") == 1:
            out += [device | {k: m[k] for k in ("name", "uuid", "memory_total_mib") if k in m}
                    | {"mig": True} for m in g.get("mig_devices", ())]
        else:
            out.append(device)
    return out


def from_scenario(base: Path, doc: dict[str, Any]) -> FakeMachine:
    """Build the fake machine a scenario document describes (format: docs/scenarios.md)."""
    machine = FakeMachine(base)
    nvml = doc.get("nvml")
    gpus = expand_gpus(nvml) if nvml is not None else []
    module = doc.get("kernel_module")
    if doc.get("wsl"):
        wsl_lib = machine.wsl()
    if module:
        machine.kernel_module(
            module["version"], open_module=module.get("open", True), text=module.get("text")
        )
    default_modules = ["nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"] if module else []
    machine.modules(doc.get("modules", default_modules))
    default_nodes = (
        [f"nvidia{i}" for i in range(len(gpus))] + ["nvidiactl", "nvidia-uvm"] if module else []
    )
    machine.device_nodes(doc.get("dev", default_nodes), doc.get("denied_nodes", ()))
    if doc.get("secure_boot") is not None:
        machine.secure_boot(doc["secure_boot"])
    lib_dir = wsl_lib if doc.get("wsl") else None
    if nvml is not None:
        config = {k: v for k, v in nvml.items() if k not in ("gpu", "gpu_count", "gpu_overrides")}
        machine.nvml(
            config | {"gpus": gpus},
            omit=doc.get("nvml_omit", ()),
            library_version=doc.get("nvml_library_version"),
            directory=lib_dir,
        )
    cuda = doc.get("cuda")
    if cuda is not None:
        machine.cuda({"devices": cuda_devices(gpus)} | cuda, omit=doc.get("cuda_omit", ()), directory=lib_dir)
    for name, spec in doc.get("commands", {}).items():
        machine.command(
            name,
            stdout=spec.get("stdout", ""),
            stderr=spec.get("stderr", ""),
            exit_code=spec.get("exit", 0),
        )
    return machine


def load_scenario(path: Path) -> dict[str, Any]:
    """A scenario document from a JSON file."""
    return json.loads(path.read_text())
