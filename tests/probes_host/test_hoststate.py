"""The host-state probe through its real reading code: /dev/kmsg records and nvidia-prime's file
under a fake root, the real /dev/kmsg of this machine, and the whole live probe."""

from __future__ import annotations

from pathlib import Path

from tfdoctor.host import Host
from tfdoctor.probes.hoststate import probe_host, read_kmsg

# /dev/kmsg records: "priority,sequence,timestamp,flags;message", continuation lines indented.
KMSG = (
    "6,1201,5123456,-;nvidia: loading out-of-tree module taints kernel.\n"
    "4,1202,5123470,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    " SUBSYSTEM=pci\n"
    "3,1203,5123480,-;DMAR: DRHD: handling fault status reg 2\n"
    "6,1204,5123490,-;usb 1-1: new high-speed USB device number 2\n"
)


def host_with(tmp_path: Path, files: dict[str, str]) -> Host:
    for name, text in files.items():
        path = tmp_path / name.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Host(env={}, root=tmp_path)


def test_kmsg_records_keep_only_gpu_lines(tmp_path: Path) -> None:
    facts = probe_host(host_with(tmp_path, {"/dev/kmsg": KMSG, "/etc/prime-discrete": "off\n"}))
    assert facts.kernel_log_read is True
    assert facts.kernel_log == (
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
        "DMAR: DRHD: handling fault status reg 2",
    )
    assert facts.prime_profile == "intel"


def test_unreadable_kmsg_and_no_prime(tmp_path: Path) -> None:
    """No /dev/kmsg (or EPERM) is 'not read', never an empty clean log; no nvidia-prime is None."""
    facts = probe_host(host_with(tmp_path, {}))
    assert (facts.kernel_log, facts.kernel_log_read, facts.prime_profile) == ((), False, None)


def test_prime_profiles(tmp_path: Path) -> None:
    """prime-select writes on / off / on-demand (canonical/nvidia-prime); anything else it reads as intel."""
    for text, profile in (("on\n", "nvidia"), ("off", "intel"), ("on-demand\n", "on-demand"), ("?", "intel")):
        assert probe_host(host_with(tmp_path, {"/etc/prime-discrete": text})).prime_profile == profile


def test_the_real_kmsg_never_blocks() -> None:
    """This machine's /dev/kmsg (a character device) is read to EAGAIN, or reported unreadable."""
    lines, readable = read_kmsg(Host(env={}, root=Path("/")))
    assert isinstance(readable, bool) and len(lines) <= 20
    if not readable:
        assert lines == ()


def test_wsl_driver_libs_listed(tmp_path: Path) -> None:
    """The names in /usr/lib/wsl/lib (where WSL 2 mounts the Windows driver), None without it."""
    from tfdoctor.probes.platform import wsl_driver_libs

    assert wsl_driver_libs(host_with(tmp_path / "none", {})) is None
    lib = "/usr/lib/wsl/lib"
    host = host_with(tmp_path / "wsl", {f"{lib}/libcuda.so.1": "", f"{lib}/libdxcore.so": ""})
    assert wsl_driver_libs(host) == ("libcuda.so.1", "libdxcore.so")


def test_container_toolkit_version_from_nvidia_ctk(tmp_path: Path) -> None:
    """A real nvidia-ctk stand-in on PATH answers --version as the real one prints it."""
    from tfdoctor.probes.platform import container_toolkit

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ctk = bin_dir / "nvidia-ctk"
    ctk.write_text('#!/bin/sh\n[ "$1" = --version ] || exit 2\n'
                   'echo "NVIDIA Container Toolkit CLI version 1.17.8"\necho "commit: f202b80"\n')
    ctk.chmod(0o755)
    assert container_toolkit(Host(env={"PATH": str(bin_dir)}, root=tmp_path)) == "1.17.8"
    assert container_toolkit(Host(env={"PATH": str(tmp_path / "none")}, root=tmp_path)) is None
    ctk.write_text("#!/bin/sh\nexit 1\n")
    assert container_toolkit(Host(env={"PATH": str(bin_dir)}, root=tmp_path)) is None


def test_libcuda_copied_over_the_drivers_link(tmp_path: Path) -> None:
    """/proc/self/maps names a symlink's target, so a path ending in libcuda.so.1 is a regular file;
    beside the driver's versioned libcuda it is a copy. WSL's regular files are not."""
    from tfdoctor.probes.cuda_driver import copied_over

    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libcuda.so.1").write_bytes(b"\x7fELF copy")
    assert copied_over(str(lib / "libcuda.so.1")) is None  # no driver file beside it
    (lib / "libcuda.so.580.65.06").write_bytes(b"\x7fELF driver")
    assert copied_over(str(lib / "libcuda.so.1")) == "libcuda.so.580.65.06"
    assert copied_over(str(lib / "libcuda.so.580.65.06")) is None  # the link's target loaded
    assert copied_over("/usr/lib/wsl/lib/libcuda.so.1") is None
