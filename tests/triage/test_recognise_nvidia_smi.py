"""nvidia-smi tables (418..580 layouts), `-q` reports and failures, read from real tickets."""

from __future__ import annotations

from tfdoctor.triage.recognisers import nvidia_smi
from triage_fixtures import lines_of, observe_all, observed


def test_table_of_driver_535():
    """The 535+ layout (wider name cell, MIG M. row) gives driver, CUDA, the GPU and the count."""
    assert observed(nvidia_smi, "nvidia_smi/tf62328_driver535.txt") == [
        ("driver.driver_version", "535.113.01"),
        ("driver.cuda_driver_version", "12.2"),
        (
            "driver.gpu",
            {
                "index": 0,
                "name": "NVIDIA GeForce GTX 1650",
                "pci_bus_id": "00000000:01:00.0",
                "persistence_mode": False,
                "memory_total_mib": 4096,
            },
        ),
        ("driver.device_count", 1),
    ]
    assert lines_of(nvidia_smi, "nvidia_smi/tf62328_driver535.txt")[2] == (12, "driver.gpu")


def test_table_of_driver_440_with_two_gpus_cut_short():
    """The pre-450 layout (no MIG row) with two GPUs; a paste cut inside the table still counts both."""
    obs = observed(nvidia_smi, "nvidia_smi/tf38134_driver440_two_gpus.txt")
    gpus = [value for path, value in obs if path == "driver.gpu"]
    assert [(g["index"], g["name"], g["pci_bus_id"], g["memory_total_mib"]) for g in gpus] == [
        (0, "Quadro GV100", "00000000:15:00.0", 32508),
        (1, "Quadro GV100", "00000000:2D:00.0", 32500),
    ]
    assert ("driver.device_count", 2) in obs
    assert ("driver.driver_version", "440.33.01") in obs and ("driver.cuda_driver_version", "10.2") in obs


def test_wsl_table_with_cuda_err_and_truncated_name():
    """WSL prints "CUDA Version: ERR!": no CUDA version is read; a "..." name is kept as printed."""
    assert observed(nvidia_smi, "nvidia_smi/wsl11589_cuda_err.txt") == [
        ("driver.driver_version", "546.80"),
        (
            "driver.gpu",
            {
                "index": 0,
                "name": "NVIDIA GeForce RTX 3060 ...",
                "pci_bus_id": "00000000:01:00.0",
                "persistence_mode": True,
                "memory_total_mib": 6144,
            },
        ),
        ("driver.device_count", 1),
    ]


def test_driver_not_loaded_then_windows_table():
    """The couldn't-communicate failure is NVML_ERROR_DRIVER_NOT_LOADED; WDDM is no persistence mode."""
    obs = observed(nvidia_smi, "nvidia_smi/wsl9134_windows_and_wsl.txt")
    assert obs[:2] == [
        ("driver.nvml_error", "NVML_ERROR_DRIVER_NOT_LOADED"),
        (
            "driver.nvidia_smi_error",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that the latest NVIDIA driver is installed and running.",
        ),
    ]
    gpus = [value for path, value in obs if path == "driver.gpu"]
    assert gpus[0] == {
        "index": 0,
        "name": "NVIDIA GeForce ...",
        "pci_bus_id": "00000000:0A:00.0",
        "memory_total_mib": 11264,
    }
    assert gpus[1]["memory_total_mib"] == 11264  # its row was cut after the memory cell
    assert ("driver.device_count", 2) in obs and ("driver.cuda_driver_version", "11.7") in obs


def test_query_report():
    """`nvidia-smi -a` gives driver, CUDA, the attached count and the GPU's -q fields."""
    assert observed(nvidia_smi, "nvidia_smi/k8s343_query.txt") == [
        ("driver.driver_version", "450.203.03"),
        ("driver.cuda_driver_version", "11.0"),
        ("driver.device_count", 8),
        (
            "driver.gpu",
            {
                "index": 0,
                "pci_bus_id": "00000000:07:00.0",
                "name": "A100-SXM4-40GB",
                "persistence_mode": True,
                "mig_mode": False,
            },
        ),
    ]


def test_version_mismatch_and_nvml_library_version():
    """Driver/library mismatch names its NVML error; the NVML library version line follows it."""
    assert observed(nvidia_smi, "nvidia_smi/tinygrad47_mismatch.txt") == [
        ("driver.nvml_error", "NVML_ERROR_LIB_RM_VERSION_MISMATCH"),
        ("driver.nvidia_smi_error", "Failed to initialize NVML: Driver/library version mismatch"),
        ("driver.nvml_library_version", "570.124"),
    ]


def test_nvml_failure_quoted_in_a_sentence():
    """NVML's own words inside prose (googlecolab/colabtools#2445, Colab's R runtime) are its error
    too; nvidia-smi's other first lines must still start the line."""
    from triage_fixtures import observe_all

    got = [(o.path, o.value) for o in observe_all(nvidia_smi, [
        "I try `system2(\"nvidia-smi\", stdout = TRUE)` on colab, and it show that `'Failed to initialize "
        "NVML: Driver/library version mismatch'`.",
        "I ran nvidia-smi and it said No devices were found"])]
    assert ("driver.nvml_error", "NVML_ERROR_LIB_RM_VERSION_MISMATCH") in got
    assert not [g for g in got if g[0] == "driver.device_count"]


def test_missing_binary_and_prose_mentions():
    """A shell's "No such file" for nvidia-smi is its error; prose that mentions nvidia-smi is nothing."""
    assert observed(nvidia_smi, "nvidia_smi/tf53383_not_found.txt") == [
        ("driver.nvidia_smi_error", "bash: /usr/bin/nvidia-smi: No such file or directory"),
    ]


def test_other_failure_lines():
    """No devices, unknown error and permissions failures each map to their NVML name or count."""
    lines = [
        "$ nvidia-smi",
        "No devices were found",
        "$ nvidia-smi",
        "Failed to initialize NVML: Unknown Error",
        "Failed to initialize NVML: Insufficient Permissions",
        "I ran nvidia-smi and it said No devices were found",
    ]
    assert [(o.line, o.path, o.value) for o in observe_all(nvidia_smi, lines)] == [
        (2, "driver.nvidia_smi_error", "No devices were found"),
        (2, "driver.device_count", 0),
        (4, "driver.nvml_error", "NVML_ERROR_UNKNOWN"),
        (4, "driver.nvidia_smi_error", "Failed to initialize NVML: Unknown Error"),
        (5, "driver.nvml_error", "NVML_ERROR_NO_PERMISSION"),
        (5, "driver.nvidia_smi_error", "Failed to initialize NVML: Insufficient Permissions"),
    ]


def test_header_fields_pasted_one_per_line():
    """nvidia-smi's header retyped a field a line (huggingface/community-events#118): "Driver
    Version: 515.65.01" is the driver, the "CUDA Version: 11.7" beside it the driver's CUDA; a
    "CUDA Version" line alone (an issue template's toolkit) is not read here."""
    lines = ["NVIDIA-SMI 515.65.01    ", "Driver Version: 515.65.01    ", "CUDA Version: 11.7",
             "TensorFlow: 2.11.0"]
    assert [(o.path, o.value, o.line) for o in observe_all(nvidia_smi, lines)] == [
        ("driver.driver_version", "515.65.01", 2), ("driver.cuda_driver_version", "11.7", 3)]
    assert observe_all(nvidia_smi, ["- CUDA Version: 11.7", "- cuDNN: 8.5"]) == []
    assert observe_all(nvidia_smi, ["Driver Version: latest"]) == []
