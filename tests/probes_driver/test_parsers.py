"""Pure parsers of the driver probe, on text recorded from real machines."""

from __future__ import annotations

import pytest
from tfdoctor.probes.cuda_driver import is_stub_path
from tfdoctor.probes.driver import (
    decode_cuda_version,
    nvml_library_version,
    parse_modules,
    parse_nvidia_smi_csv,
    parse_nvidia_smi_failure,
    parse_proc_version,
    parse_secure_boot,
)

OPEN_580 = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025\n"
    "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"
)
PROPRIETARY_470 = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.223.02  Sat Oct  7 15:39:11 UTC 2023\n"
    "GCC version:  gcc version 9.4.0 (Ubuntu 9.4.0-1ubuntu1~20.04.2)\n"
)
OPEN_ARM_550 = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  550.54.15  Release Build  "
    "(dvs-builder@U16-T02-35-3)  Tue Mar  5 22:15:33 UTC 2024\n"
    "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (OPEN_580, ("580.65.06", True)),
        (PROPRIETARY_470, ("470.223.02", False)),
        (OPEN_ARM_550, ("550.54.15", True)),
        (
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  576.02  Thu Apr 10 2025\n",
            ("576.02", False),
        ),
        ("", (None, None)),
        (None, (None, None)),
        ("garbage\n", (None, None)),
    ],
)
def test_proc_version(text, expected):
    """Kernel module version and open/proprietary flavour from each recorded /proc format."""
    assert parse_proc_version(text) == expected


def test_modules():
    """Module names are the first column of /proc/modules; other columns never leak in."""
    text = (
        "nvidia_uvm 1437696 0 - Live 0x0000000000000000 (POE)\n"
        "nvidia_drm 90112 2 - Live 0x0000000000000000 (POE)\n"
        "nvidia 56762368 120 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)\n\n"
        "nouveau 2318336 0 - Live 0x0000000000000000\n"
    )
    assert parse_modules(text) == ("nvidia_uvm", "nvidia_drm", "nvidia", "nouveau")
    assert parse_modules(None) == ()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (12020, "12.2"),
        (13000, "13.0"),
        (11040, "11.4"),
        (12090, "12.9"),
        (10020, "10.2"),
        (0, None),
        (None, None),
        (999, None),
    ],
)
def test_decode_cuda_version(value, expected):
    """CUDA's 1000*major + 10*minor encoding, as NVML and cuDriverGetVersion return it."""
    assert decode_cuda_version(value) == expected


def test_nvml_library_version():
    """The driver version is in the real NVML file name; the soname link carries none."""
    assert (
        nvml_library_version("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.65.06") == "580.65.06"
    )
    assert nvml_library_version("/usr/lib/wsl/lib/libnvidia-ml.so.1") is None
    assert nvml_library_version(None) is None


def test_nvidia_smi_csv():
    """Rows of --query-gpu output become GPUs; [N/A] is None; junk lines are skipped."""
    text = (
        "0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 81559, "
        "GPU-9c3b5a1e-aaaa-bbbb-cccc-000000000000, 580.65.06\n"
        "1, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, [N/A], "
        "GPU-9c3b5a1e-aaaa-bbbb-cccc-000000000001, 580.65.06\n"
        "WARNING: infoROM is corrupted at gpu 0000:2A:00.0\n"
    )
    driver, gpus = parse_nvidia_smi_csv(text)
    assert driver == "580.65.06"
    assert [(g.index, g.pci_bus_id, g.memory_total_mib) for g in gpus] == [
        (0, "00000000:18:00.0", 81559),
        (1, "00000000:2A:00.0", None),
    ]
    assert parse_nvidia_smi_csv("") == (None, ())


def test_nvidia_smi_failure():
    """After a driver upgrade nvidia-smi names the user-space NVML version: mismatch evidence."""
    text = (
        "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.95\n"
    )
    assert parse_nvidia_smi_failure(text) == (
        "Failed to initialize NVML: Driver/library version mismatch",
        "580.95",
    )
    assert parse_nvidia_smi_failure("\n\n") == (None, None)


def test_secure_boot():
    """The efivar's fifth byte is the state; anything shorter is unknown, not 'off'."""
    assert parse_secure_boot(b"\x06\x00\x00\x00\x01") is True
    assert parse_secure_boot(b"\x06\x00\x00\x00\x00") is False
    assert parse_secure_boot(b"\x06\x00") is None
    assert parse_secure_boot(None) is None


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/usr/local/cuda-12.4/targets/x86_64-linux/lib/stubs/libcuda.so", True),
        ("/opt/conda/lib/stubs/libcuda.so", True),
        ("/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06", False),
        ("/home/u/stubs.d/../lib/libcuda.so.1", False),
        (None, False),
    ],
)
def test_stub_path(path, expected):
    """Only a directory named exactly `stubs` marks a link-time stub."""
    assert is_stub_path(path) is expected
