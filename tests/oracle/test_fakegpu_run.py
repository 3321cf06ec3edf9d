"""tests/fakegpu/run.py: any command on a fake machine, with the stub driver the command's own
loader finds, and COMMAND's exit code as its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[1] / "fakegpu" / "run.py"
SCENARIOS = Path(__file__).resolve().parents[1] / "probes_driver" / "scenarios"

# cuInit, then every device's name and compute capability, through the stub libcuda on the path.
ASK_CUDA = r"""
import ctypes, json
cuda = ctypes.CDLL("libcuda.so.1")
rc = cuda.cuInit(0)
n, v = ctypes.c_int(0), ctypes.c_int(0)
out = {"init": rc, "devices": []}
if rc == 0:
    cuda.cuDeviceGetCount(ctypes.byref(n))
    for i in range(n.value):
        name = ctypes.create_string_buffer(100)
        cuda.cuDeviceGetName(name, 100, i)
        major, minor = ctypes.c_int(), ctypes.c_int()
        cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, i)
        cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, i)
        bus = ctypes.create_string_buffer(32)
        cuda.cuDeviceGetPCIBusId(bus, 32, i)
        uuid = ctypes.create_string_buffer(16)
        cuda.cuDeviceGetUuid(uuid, i)
        out["devices"].append([name.value.decode(), f"{major.value}.{minor.value}", bus.value.decode(),
                               uuid.raw.hex()])
cuda.cuDriverGetVersion(ctypes.byref(v))
out["version"] = v.value
print(json.dumps(out))
"""


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(RUN), *args], capture_output=True, text=True,
                          env=env, timeout=120)


def ask(*args: str, **env: str) -> dict:
    import os
    proc = run(*args, "--", sys.executable, "-c", ASK_CUDA, env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_flags_make_the_machine():
    """--gpus, --model (its known CC), --driver-cuda reach the stub libcuda."""
    out = ask("--gpus", "3", "--model", "NVIDIA L4", "--driver-cuda", "12040")
    assert out["init"] == 0 and out["version"] == 12040
    assert [d[:2] for d in out["devices"]] == [["NVIDIA L4", "8.9"]] * 3
    assert out["devices"][1][2] == "0000:28:00.0"


def test_cc_overrides_and_visible_devices():
    """--cc wins over the model's; CUDA_VISIBLE_DEVICES is the stub driver's to apply."""
    out = ask("--gpus", "4", "--cc", "7.5", CUDA_VISIBLE_DEVICES="3,1")
    assert [d[1] for d in out["devices"]] == ["7.5", "7.5"]
    assert [d[2] for d in out["devices"]] == ["0000:48:00.0", "0000:28:00.0"]
    assert ask("--gpus", "2", CUDA_VISIBLE_DEVICES="-1")["init"] == 100  # CUDA_ERROR_NO_DEVICE
    assert len(ask("--gpus", "4", CUDA_VISIBLE_DEVICES="0,x,2")["devices"]) == 1


def test_scenario_file_and_exit_code(tmp_path):
    """--scenario starts from a driver scenario (one without "cuda" gets the driver's libcuda);
    COMMAND's exit code is run.py's."""
    out = ask("--scenario", str(SCENARIOS / "pcie_degraded.json"))
    assert [d[0] for d in out["devices"]] == ["NVIDIA A100 80GB PCIe"]
    proc = run("--gpus", "1", "--keep", str(tmp_path / "m"), "--", "sh", "-c",
               'test -f "$TFDOCTOR_FS_ROOT/dev/nvidia0" && test -n "$TFDOCTOR_FAKE_NVML" && exit 7')
    assert proc.returncode == 7
    assert (tmp_path / "m" / "root" / "proc" / "driver" / "nvidia" / "version").is_file()


def test_mig_devices_one_per_process():
    """--mig N: CUDA enumerates one MIG device (MIG user guide, CUDA Device Enumeration), the
    first, or the one CUDA_VISIBLE_DEVICES=MIG-<uuid> names; a MIG- UUID of no device: none."""
    first, third = (f"MIG-3161d000-7e2a-5b1c-8d3f-000000000{j:03d}" for j in (0, 2))
    out = ask("--gpus", "1", "--model", "NVIDIA A100-SXM4-40GB", "--mig", "3")
    assert [d[:2] for d in out["devices"]] == [["NVIDIA A100-SXM4-40GB MIG 2g.10gb", "8.0"]]
    assert out["devices"][0][3] == first[4:].replace("-", "")

    def chosen(value: str) -> list[str]:
        return [d[3] for d in ask("--gpus", "1", "--mig", "3", CUDA_VISIBLE_DEVICES=value)["devices"]]

    assert chosen(third) == [third[4:].replace("-", "")]
    assert chosen(f"{third},{first}") == [third[4:].replace("-", "")]  # one MIG device per process
    assert ask("--gpus", "1", "--mig", "3", CUDA_VISIBLE_DEVICES="MIG-ffff")["init"] == 100


def test_usage_errors():
    """No command, or a model without a known CC and no --cc, is a usage error (exit 2)."""
    assert run("--gpus", "1").returncode == 2
    assert run("--model", "Mystery GPU", "--", "true").returncode == 2
    assert run("--gpus", "1", "--", "/nonexistent/cmd").returncode == 127


def test_tfdoctor_on_the_fake_machine():
    """tfdoctor's own probes see the fake machine through the same environment."""
    proc = run("--gpus", "2", "--driver", "570.133.20", "--", sys.executable, "-m", "tfdoctor",
               "--quick", "--json")
    facts = json.loads(proc.stdout)["facts"]
    assert facts["driver"]["driver_version"] == "570.133.20"
    assert len(facts["driver"]["gpus"]) == 2 and facts["cuda_driver"]["device_count"] == 2
