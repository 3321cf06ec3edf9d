"""Kernel-side facts: /proc/driver/nvidia/version, the kernel log, lsmod, from real text."""

from __future__ import annotations

from tfdoctor.triage.recognisers import kernel_log, lsmod, proc_version
from triage_fixtures import observe_all, observed


def test_open_module_version_file():
    """The open module's file says "Open Kernel Module for x86_64": open, loaded, and its version."""
    assert observed(proc_version, "proc_version/nixgl186_open_565.txt") == [
        ("driver.kernel_module_version", "565.57.01"),
        ("driver.kernel_module_open", True),
        ("driver.nvidia_module_loaded", True),
    ]
    assert observed(proc_version, "proc_version/nixgl139_jetson.txt")[0] == (
        "driver.kernel_module_version",
        "35.3.1",
    )


def test_proprietary_version_quoted_in_a_tf_log():
    """TF 1 quoted the file in its log; the proprietary "x86_64 Kernel Module  367.57" form is read."""
    assert observed(proc_version, "proc_version/tf6233_tf_log_proprietary.txt") == [
        ("driver.kernel_module_version", "367.57"),
        ("driver.kernel_module_open", False),
        ("driver.nvidia_module_loaded", True),
    ]


def test_missing_version_file_means_not_loaded():
    """cat's "No such file or directory" for the file means the nvidia module is not loaded."""
    assert observed(proc_version, "proc_version/dev_machine_missing.txt") == [
        ("driver.nvidia_module_loaded", False),
    ]


def test_api_mismatch_from_rsyslog_one_line():
    """rsyslog writes the wrapped NVRM message on one line with #012 for newlines."""
    assert observed(kernel_log, "kernel_log/stackhpc287_journal_012.txt") == [
        ("driver.nvml_library_version", "535.54.03"),
        ("driver.kernel_module_version", "530.30.02"),
    ]


def test_api_mismatch_naming_the_client():
    """Newer drivers name the client process and wrap differently; both versions are still read."""
    assert observed(kernel_log, "kernel_log/frogging394_client_pid.txt") == [
        ("driver.nvml_library_version", "595.84"),
        ("driver.kernel_module_version", "595.80"),
    ]


def test_repeated_mismatch_once_and_gsp_failures_kept():
    """A repeated mismatch is read once; the missing GSP firmware and RmInitAdapter lines are kept."""
    assert observed(kernel_log, "kernel_log/bazzite2668_gsp.txt") == [
        ("driver.nvml_library_version", "570.153.02"),
        ("driver.kernel_module_version", "570.144"),
        (
            "host.kernel_log",
            "nvidia 0000:07:00.0: Direct firmware load for nvidia/570.144/gsp_ga10x.bin failed with error -2",
        ),
        ("host.kernel_log", "NVRM: GPU 0000:07:00.0: RmInitAdapter failed! (0x61:0x56:1770)"),
    ]


def test_probe_not_called_is_not_nouveau_evidence():
    """NVRM's "a driver such as: nouveau" is a guess, not nouveau loaded; an empty lsmod|grep is nothing."""
    assert observed(kernel_log, "kernel_log/mattshma133_probe_not_called.txt") == [
        ("host.kernel_log", "NVRM: No NVIDIA graphics adapter probed!"),
        ("host.kernel_log", "NVRM: The NVIDIA probe routine was not called for 3 device(s)."),
    ]
    assert observed(lsmod, "kernel_log/mattshma133_probe_not_called.txt") == []


def test_lsmod_grep_rows_show_presence_only():
    """`lsmod | grep nvidia` rows list the modules; the unrelated ecc row is not one."""
    assert observed(lsmod, "lsmod/hami_grep_nvidia.txt") == [
        ("driver.nvidia_modules", ("nvidia_uvm", "nvidia_modeset", "nvidia_drm", "nvidia")),
        ("driver.nvidia_module_loaded", True),
    ]


def test_whole_lsmod_table_without_nvidia():
    """A whole table under its header with no nvidia or nouveau row shows both are not loaded."""
    assert observed(lsmod, "lsmod/bbswitch107_no_nvidia.txt") == [
        ("driver.nvidia_module_loaded", False),
        ("driver.nouveau_loaded", False),
    ]


def test_failed_lsmod_is_nothing():
    """lsmod failing (no /proc/modules) prints no table: nothing is known."""
    assert observed(lsmod, "lsmod/dev_machine_no_proc_modules.txt") == []


def test_iommu_xid_secure_boot_and_nouveau_lines():
    """Kernel lines of the kinds the log recogniser keeps, as dmesg and journalctl print them."""
    lines = [
        "[    0.000000] secureboot: Secure boot enabled",
        "[   12.3] NVRM: Xid (PCI:0000:01:00): 79, pid=1234, GPU has fallen off the bus.",
        "Mar 02 10:00:00 host kernel: DMAR: DRHD: handling fault status reg 2",
        "[    4.1] nouveau 0000:01:00.0: NVIDIA GP107 (137000a1)",
        "Please blacklist nouveau before installing",
    ]
    assert [(o.line, o.path, o.value) for o in observe_all(kernel_log, lines)] == [
        (1, "driver.secure_boot", True),
        (2, "host.kernel_log", "NVRM: Xid (PCI:0000:01:00): 79, pid=1234, GPU has fallen off the bus."),
        (3, "host.kernel_log", "DMAR: DRHD: handling fault status reg 2"),
        (4, "driver.nouveau_loaded", True),
    ]
