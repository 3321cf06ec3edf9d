"""The NVIDIA kernel driver, its user-space NVML library, and the CUDA version it supports."""

from __future__ import annotations

from collections.abc import Iterator

from tfdoctor import compat, stack
from tfdoctor.checks.common import CUDA_COMPAT, TF_INSTALL, matching_tf
from tfdoctor.facts import Facts
from tfdoctor.findings import Finding, Remediation, Severity
from tfdoctor.registry import CheckConfig, NotApplicable, check

DRIVER_DOCS = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html"
MISMATCH_ERRORS = {"NVML_ERROR_LIB_RM_VERSION_MISMATCH"}
NOT_LOADED_ERRORS = {"NVML_ERROR_DRIVER_NOT_LOADED"}
ABSENT_ERRORS = {"NVML_ERROR_LIBRARY_NOT_FOUND"}
# NVML codes that name a fault of the GPU hardware itself (nvml.h: "GPU is lost", "infoROM is
# corrupted"): a specific root cause, never the generic nvml-error that any library finding
# outranks. What to do comes from NVIDIA DCGM's dcgm_errors.h (DCGM_FR_GPU_LOST, DCGM_FR_CORRUPT_INFOROM).
HARDWARE_ERRORS = {"NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_CORRUPTED_INFOROM"}


def wants_gpu(facts: Facts) -> bool:
    """TensorFlow here is a CUDA build, or the machine has NVIDIA hardware signs."""
    tf = facts.tensorflow
    return bool((tf and tf.is_cuda_build) or facts.driver.device_nodes or facts.driver.gpus)


@check("driver-present", "NVIDIA driver installed and loaded", "driver",
       emits=("driver-not-installed", "driver-libraries-not-found", "driver-not-loaded",
              "driver-version-mismatch", "driver-permission-denied", "gpu-lost",
              "gpu-inforom-corrupted", "nvml-error"),
       reads=("driver",))
def driver_present(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """NVML initialises: the kernel module is loaded and matches the user-space library."""
    d = facts.driver
    error = d.nvml_error
    if error is None:
        return
    if error == "timed out":
        raise NotApplicable  # could not check: probe-failed says so, and the exit code is 3
    evidence = {"driver.nvml_error": error}
    if d.kernel_module_version:
        evidence["driver.kernel_module_version"] = d.kernel_module_version
    if error in MISMATCH_ERRORS or (
        d.driver_version and d.kernel_module_version and d.driver_version != d.kernel_module_version
    ):
        user = d.nvml_library_version or (d.driver_version if d.driver_version != d.kernel_module_version
                                          else None)
        if user:
            evidence["driver.nvml_library_version"] = user
        both = (f" (libraries {user}, kernel module {d.kernel_module_version})"
                if user and d.kernel_module_version else "")
        yield Finding(
            "driver-version-mismatch", Severity.ERROR,
            f"The NVIDIA user-space libraries and the loaded kernel module are different versions{both}.",
            evidence,
            hint="This happens after a driver upgrade without a reboot: reboot, or reload the module.",
            remediation=Remediation("reboot-after-driver-upgrade", ("sudo reboot",), needs_root=True),
            links=(DRIVER_DOCS,),
        )
        return
    if error in NOT_LOADED_ERRORS or (error in ABSENT_ERRORS and d.nouveau_loaded):
        reason = "nouveau is loaded instead" if d.nouveau_loaded else "the nvidia module is not loaded"
        if d.secure_boot and not d.nouveau_loaded:
            reason += " (Secure Boot is on: an unsigned module is refused)"
        yield Finding(
            "driver-not-loaded", Severity.ERROR,
            f"The NVIDIA kernel driver is not running: {reason}.",
            {**evidence, "driver.nouveau_loaded": str(d.nouveau_loaded).lower(),
             "driver.secure_boot": str(d.secure_boot).lower()},
            hint="Blacklist nouveau and reboot; with Secure Boot on, enrol the NVIDIA module's key "
                 "(mokutil) or sign the module, then `sudo modprobe nvidia`.",
            remediation=Remediation("blacklist-nouveau", (
                "echo -e 'blacklist nouveau\\noptions nouveau modeset=0' | "
                "sudo tee /etc/modprobe.d/blacklist-nouveau.conf",
                "sudo update-initramfs -u", "sudo reboot"), needs_root=True),
            links=(DRIVER_DOCS,),
        )
        return
    if error in ABSENT_ERRORS and driver_elsewhere(facts):
        yield libraries_not_found(facts, evidence)
        return
    if error in ABSENT_ERRORS:
        # Provisioning that expects GPUs (--expect-gpus) wants the driver whatever TensorFlow is.
        if not wants_gpu(facts) and not config.expect_gpus:
            raise NotApplicable
        if facts.platform.in_container:
            # The driver belongs to the host; a container only gets it passed in.
            yield Finding(
                "driver-not-installed", Severity.ERROR,
                "No NVIDIA driver is reachable in this container: no GPU device and no "
                "libnvidia-ml.so.1 were passed in.", {**evidence, "platform.in_container": "true"},
                hint="Start the container with the GPUs (NVIDIA Container Toolkit: "
                     "`docker run --gpus all`; Kubernetes: the NVIDIA device plugin); never "
                     "install a driver inside the image.",
                remediation=Remediation("install-nvidia-container-toolkit", (
                    "docker run --gpus all ...  # after installing nvidia-container-toolkit on the host",),
                    needs_root=True),
                links=(DRIVER_DOCS,))
            return
        yield Finding(
            "driver-not-installed", Severity.ERROR,
            "No NVIDIA driver is installed: libnvidia-ml.so.1 cannot be loaded.",
            evidence,
            hint="Install the NVIDIA driver packaged for your distribution, then reboot.",
            remediation=Remediation("install-nvidia-driver", driver_install(facts), needs_root=True),
            links=(DRIVER_DOCS,),
        )
        return
    if error == "NVML_ERROR_NO_PERMISSION" or d.unreadable_device_nodes:
        yield Finding(
            "driver-permission-denied", Severity.ERROR,
            "This user may not open the NVIDIA device files.",
            {**evidence, "driver.unreadable_device_nodes": ", ".join(d.unreadable_device_nodes)},
            hint="Add the user to the group that owns /dev/nvidia* (often 'video'), or in a "
                 "container pass the devices through (--gpus all).",
            remediation=Remediation("add-user-to-video-group", ('sudo usermod -aG video "$USER"',),
                                    needs_root=True),
        )
        return
    if error in HARDWARE_ERRORS:
        yield hardware_fault(error, evidence)
        return
    yield Finding("nvml-error", Severity.ERROR, f"NVML failed to initialise: {error}.", evidence,
                  hint="Run nvidia-smi to see the driver's own message.")


def hardware_fault(error: str, evidence: dict[str, str]) -> Finding:
    """NVML refused to start because a GPU is lost or its InfoROM is corrupted."""
    if error == "NVML_ERROR_GPU_IS_LOST":
        return Finding(
            "gpu-lost", Severity.ERROR,
            "NVML failed to initialise because a GPU has fallen off the bus "
            "(NVML_ERROR_GPU_IS_LOST): nothing can use it.", evidence,
            hint="Drain the node; the kernel log shows Xid 79 for the GPU. Reset it (nvidia-smi -r) "
            "or reboot; if it recurs, check power, cooling and the slot.",
            remediation=Remediation("reset-gpu", ("sudo nvidia-smi -r",), needs_root=True))
    return Finding(
        "gpu-inforom-corrupted", Severity.ERROR,
        "NVML failed to initialise because a GPU's InfoROM is corrupted "
        "(NVML_ERROR_CORRUPTED_INFOROM).", evidence,
        hint="nvidia-smi names the GPU (\"infoROM is corrupted at gpu ...\"). Drain the node and "
        "have the InfoROM reflashed by the board's vendor (NVIDIA DCGM: \"Flash the InfoROM to "
        "clear this corruption\"), or replace the board.")


def driver_install(facts: Facts) -> tuple[str, ...]:
    """How this distribution installs (or upgrades) the NVIDIA driver, then the reboot it needs."""
    distro = (facts.platform.distro or "").lower()
    if "ubuntu" in distro:
        first = "sudo ubuntu-drivers install  # the recommended nvidia-driver-NNN"
    elif "debian" in distro:
        first = "sudo apt-get install -y nvidia-driver  # Debian's non-free component"
    elif any(name in distro for name in ("rhel", "red hat", "rocky", "alma", "fedora", "centos")):
        first = "sudo dnf install -y nvidia-driver  # from NVIDIA's CUDA repository"
    else:
        first = "# install your distribution's NVIDIA driver package (see the link)"
    return (first, "sudo reboot")


def driver_elsewhere(facts: Facts) -> bool:
    """Signs that a driver runs although libnvidia-ml.so.1 does not load here: its kernel
    module, an nvidia-smi that answered, WSL2 (the Windows driver), or GPU nodes in a container."""
    d, p = facts.driver, facts.platform
    return bool(d.kernel_module_version or d.nvidia_module_loaded or d.driver_version or p.is_wsl
                or (p.in_container and d.device_nodes))


def libraries_not_found(facts: Facts, evidence: dict[str, str]) -> Finding:
    """The driver is there, its user-space libraries are not on this process's loader path."""
    d, p = facts.driver, facts.platform
    if p.is_wsl:
        # NVIDIA's WSL guide: the Windows driver provides /usr/lib/wsl/lib; never install a
        # Linux driver inside WSL.
        where, hint, fix = "WSL2", "Add /usr/lib/wsl/lib to the loader path; do not install a " \
            "Linux NVIDIA driver inside WSL.", Remediation("wsl-libcuda-path", (
                "echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf",
                "sudo ldconfig"), needs_root=True)
    elif p.in_container:
        where, hint, fix = "on the host", "Start the container with the GPUs and driver libraries " \
            "mounted: the NVIDIA Container Toolkit and `docker run --gpus all` (Kubernetes: the " \
            "NVIDIA device plugin).", Remediation("install-nvidia-container-toolkit", (
                "docker run --gpus all ...  # after installing nvidia-container-toolkit on the host",),
                needs_root=True)
    else:
        version = d.kernel_module_version or d.driver_version or ""
        branch = version.split(".")[0] or "580"
        where, hint, fix = f"kernel module {version}".strip(), "Install the driver's user-space " \
            "libraries of the same version as the loaded kernel module.", Remediation(
                "install-nvidia-driver", (f"sudo apt-get install -y libnvidia-compute-{branch}  "
                                          "# Debian/Ubuntu; same branch as the kernel module",),
                needs_root=True)
    return Finding(
        "driver-libraries-not-found", Severity.ERROR,
        f"An NVIDIA driver is present ({where}), but its library libnvidia-ml.so.1 is not on this "
        "process's loader path, so NVML cannot reach the GPUs.",
        {**evidence, "platform.is_wsl": str(bool(p.is_wsl)).lower(),
         "platform.in_container": str(bool(p.in_container)).lower(),
         "driver.driver_version": d.driver_version or "unknown"},
        hint=hint, remediation=fix, links=(DRIVER_DOCS,))


@check("gpus-present", "The driver sees at least one GPU", "driver",
       emits=("no-gpus", "gpus-fewer-than-expected"),
       reads=("driver", "driver.gpus"))
def gpus_present(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """The driver enumerates GPUs, and as many are usable as provisioning expects (--expect-gpus)."""
    from tfdoctor.checks.usable import usable_gpu_count

    d = facts.driver
    if config.expect_gpus is None and (d.nvml_error or not wants_gpu(facts)):
        raise NotApplicable  # a broken driver is driver-present's finding, not a second one
    if d.nvml_error is None and not d.gpus:
        yield Finding("no-gpus", Severity.ERROR,
                      "The NVIDIA driver is loaded but reports no GPUs.",
                      {"driver.driver_version": d.driver_version or "unknown"},
                      hint="Check that the GPU is seated and powered (lspci | grep -i nvidia), and "
                           "in a VM or container that it is passed through.")
    if config.expect_gpus is None:
        return
    usable, why = usable_gpu_count(facts)
    if usable < config.expect_gpus:
        yield Finding("gpus-fewer-than-expected", Severity.ERROR,
                      f"TensorFlow can use {usable} GPU(s); {config.expect_gpus} were expected.",
                      {"expected": str(config.expect_gpus), "usable": str(usable), "why": why})


@check("driver-supports-cuda", "Driver new enough for TensorFlow's CUDA", "driver",
       emits=("driver-too-old", "driver-minor-version-compat"), needs="tensorflow",
       reads=("driver", "tensorflow", "tensorflow.build"))
def driver_supports_cuda(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """The driver must support TF's CUDA major, with minor-version compatibility done right.

    Compares the driver version (not nvcc) with the minimum driver for the CUDA runtime
    TensorFlow was built with: any driver at or above the family floor (12.x: 525.60.13) runs a
    12.x runtime (NVIDIA CUDA compatibility guide). Judged by stack.driver, from any evidence: the
    version NVML, nvidia-smi or TensorFlow's log shows, else nvidia-smi's "CUDA Version".
    """
    fit = stack.driver(facts)
    tf = facts.tensorflow
    if fit is None or tf is None:
        raise NotApplicable
    if fit.fits is None:
        return
    evidence = {"driver.driver_version": facts.driver.driver_version or "unknown",
                "tensorflow.cuda_version": tf.cuda_version or "unknown",
                "minimum_driver_minor_compat": fit.minimum or "unknown",
                "minimum_driver_full": fit.exact or "unknown"}
    if facts.driver.cuda_driver_version:
        evidence["driver.cuda_driver_version"] = facts.driver.cuda_driver_version
    if not fit.fits:
        fits, alternative = matching_tf(facts)
        kepler = [g for g in facts.driver.gpus if (compat.driver_key(g.compute_capability) or (9,)) < (5,)]
        upgrade = Remediation("upgrade-nvidia-driver", driver_install(facts), needs_root=True)
        yield Finding(
            "driver-too-old", Severity.ERROR,
            f"{'Driver ' + fit.have if facts.driver.driver_version else 'The driver (' + fit.have + ')'} "
            f"is too old for the CUDA {tf.cuda_version} runtime TensorFlow "
            f"{tf.version} uses (needs at least {fit.minimum}).",
            evidence,
            # R470 is the last driver branch for Kepler (NVIDIA support plan), so no driver
            # upgrade can bring CUDA 12 to a Kepler GPU: only an older TensorFlow can.
            hint=(f"R470 is the last driver for Kepler GPUs: install the TensorFlow this driver "
                  f"runs instead ({fits})." if kepler else
                  "Upgrade the NVIDIA driver (below), or install the TensorFlow built for a CUDA "
                  f"this driver runs ({fits})" + (": " + " && ".join(alternative.commands)
                                                   if alternative else ".")),
            remediation=alternative if kepler else upgrade,
            links=(CUDA_COMPAT, TF_INSTALL),
        )
        return
    full = compat.driver_key(fit.exact)
    have = compat.driver_key(facts.driver.driver_version)
    if full and have and have < full:
        drv = facts.driver.driver_version
        yield Finding(
            "driver-minor-version-compat", Severity.INFO,
            f"Driver {drv} runs CUDA {tf.cuda_version} through minor-version compatibility.",
            evidence,
            hint="This is supported. Only PTX built by a newer toolkit (XLA, PTX JIT on a new GPU) "
                 "needs a driver of the toolkit's own release.",
            links=(CUDA_COMPAT,),
        )
