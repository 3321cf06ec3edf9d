"""Host state outside the driver: GPU faults and IOMMU faults in the kernel log, a hybrid-graphics
profile that switched the NVIDIA GPU off, WSL 1, and CUDA toolkits of another version than TensorFlow
needs."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import Version

from tfdoctor import stack
from tfdoctor.checks.common import TF_SOURCE, version
from tfdoctor.facts import Facts
from tfdoctor.findings import Finding, Remediation, Severity
from tfdoctor.registry import CheckConfig, CouldNotCheck, NotApplicable, check

IOMMU = re.compile(r"DMAR: \[?DMA (?:Read|Write)|DMAR: DRHD: handling fault"
                   r"|AMD-Vi: Event logged \[IO_PAGE_FAULT|IOMMU.*fault", re.IGNORECASE)
GPU_FAULT = re.compile(r"NVRM: Xid \(PCI:[^)]*\): (?P<xid>\d+)|fallen off the bus|RmInitAdapter failed")
NCCL_P2P = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs"
XID = "https://docs.nvidia.com/deploy/xid-errors/index.html"


@check("host-kernel-log", "The kernel log shows no GPU or IOMMU faults", "host",
       emits=("host-iommu-faults", "host-gpu-fault"), reads=("host",))
def host_kernel_log(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """NVRM Xid errors and "fallen off the bus" are hardware or driver faults; IOMMU / DMAR page
    faults break the peer-to-peer transfers NCCL uses between GPUs (NCCL troubleshooting guide)."""
    lines = facts.host.kernel_log
    if facts.host.kernel_log_read is False:
        raise NotApplicable("this user may not read the kernel log (kernel.dmesg_restrict or a "
                            "container): `sudo dmesg | grep -E 'NVRM|DMAR|AMD-Vi'` shows it")
    if facts.host.kernel_log_read is None and not lines:
        raise NotApplicable("not read: a document from before tfdoctor read the kernel log")
    if not lines:
        return
    faults = [ln for ln in lines if GPU_FAULT.search(ln)]
    if faults:
        xids = sorted({m.group("xid") for ln in faults if (m := GPU_FAULT.search(ln)) and m.group("xid")})
        yield Finding("host-gpu-fault", Severity.ERROR,
                      "The kernel log shows GPU faults" + (f" (Xid {', '.join(xids)})" if xids else "")
                      + ": the GPU or its driver failed, not TensorFlow.",
                      {"kernel_log": faults[0][:300], "lines": str(len(faults))},
                      hint="Look the Xid up in NVIDIA's Xid table; 79 (fallen off the bus) and 48/63/64 "
                           "(ECC) point at hardware, power or cooling; reboot, then test with nvidia-smi -q.",
                      links=(XID,))
    iommu = [ln for ln in lines if IOMMU.search(ln)]
    if iommu:
        yield Finding("host-iommu-faults", Severity.ERROR,
                      "The kernel log shows IOMMU faults: peer-to-peer transfers between GPUs (NCCL "
                      "all-reduce) hang or return wrong results.",
                      {"kernel_log": iommu[0][:300], "lines": str(len(iommu))},
                      hint="Disable the IOMMU or put it in pass-through mode for the GPUs (kernel command "
                           "line iommu=pt, or intel_iommu=off / amd_iommu=off), or disable ACS on the PCIe "
                           "switches; as a workaround NCCL_P2P_DISABLE=1 (slower).",
                      remediation=Remediation("disable-nccl-p2p", ("export NCCL_P2P_DISABLE=1",)),
                      links=(NCCL_P2P,))


PRIME_DOCS = "https://github.com/canonical/nvidia-prime/blob/master/prime-select"


@check("hybrid-graphics", "A hybrid-graphics laptop has its NVIDIA GPU switched on", "host",
       emits=("hybrid-graphics-gpu-off",))  # read live; a ticket that does not show it: not judged
def hybrid_graphics(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """nvidia-prime's "intel" profile powers the NVIDIA GPU off and blacklists its kernel modules
    (canonical/nvidia-prime's prime-select): no driver, no GPU, for TensorFlow as for nvidia-smi."""
    profile = facts.host.prime_profile
    if profile is None:
        raise NotApplicable
    if profile != "intel":
        return
    d = facts.driver
    smoke_gpus = facts.smoke and any(dv.device_type == "GPU" for dv in facts.smoke.devices)
    gpu_seen = bool(d.gpus) or bool(smoke_gpus)
    yield Finding(
        "hybrid-graphics-gpu-off", Severity.WARNING if gpu_seen else Severity.ERROR,
        "This hybrid-graphics machine is on nvidia-prime's \"intel\" profile: the NVIDIA GPU is "
        "switched off and its kernel modules are blacklisted"
        + (" (a GPU is visible now, so the switch has not taken effect yet)." if gpu_seen else "."),
        {"host.prime_profile": profile, "driver.nvml_error": d.nvml_error or "none"},
        hint="Select the NVIDIA GPU (sudo prime-select nvidia; on-demand where your nvidia-prime has "
             "it) and reboot.",
        remediation=Remediation("prime-select-nvidia", ("sudo prime-select nvidia", "sudo reboot"),
                                needs_root=True),
        links=(PRIME_DOCS,))


@check("wsl-version", "WSL 2, not WSL 1, for a GPU under Windows", "host",
       emits=("wsl1-no-gpu",), reads=("platform.is_wsl",))
def wsl_version(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """WSL 1 has no GPU support: CUDA on WSL needs WSL 2 (NVIDIA's CUDA on WSL guide)."""
    p = facts.platform
    if not p.is_wsl:
        raise NotApplicable
    if p.wsl_version == 1:
        yield Finding("wsl1-no-gpu", Severity.ERROR,
                      "This is WSL 1, which has no GPU support: CUDA under Windows needs WSL 2.",
                      {"platform.release": p.release or "?", "platform.wsl_version": "1"},
                      hint="Convert the distribution: `wsl --set-version <distro> 2` in Windows, then "
                           "install only the Windows NVIDIA driver.",
                      remediation=Remediation("wsl-set-version-2", ("wsl.exe --set-version <distro> 2",)),
                      links=("https://docs.nvidia.com/cuda/wsl-user-guide/index.html",))


WSL_CONTAINER_LIB = "libnvdxgdmal.so.1"
WSL_CONTAINER_BUG = "https://github.com/NVIDIA/nvidia-container-toolkit/issues/520"
WSL_CONTAINER_TOOLKIT_MIN = "1.14.4"
"""The toolkit release that maps libnvdxgdmal.so.1 (1.14.4 and 1.15.0, NVIDIA in #520)."""


@check("wsl-container-runtime", "GPU containers under WSL 2 get every driver library they need", "host",
       emits=("wsl-container-runtime-too-old",))  # wsl-version already asks for platform.is_wsl
def wsl_container_runtime(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Windows drivers 555 and newer add libnvdxgdmal.so.1, which the container runtime must map
    into a container under WSL 2; Docker Desktop before 4.31 and the NVIDIA Container Toolkit before
    1.14.4 do not, and cuInit then fails with CUDA_ERROR_NOT_FOUND (NVIDIA, in
    nvidia-container-toolkit#520). Judged inside such a container (the library is missing from
    /usr/lib/wsl/lib) and on the WSL 2 side where the toolkit is installed (its version)."""
    p, d = facts.platform, facts.driver
    toolkit = version(p.container_toolkit)
    wsl_side = bool(p.is_wsl and not p.in_container and toolkit is not None)
    in_container = bool(p.is_wsl and p.in_container and p.wsl_driver_libs is not None)
    if not (wsl_side or in_container):
        raise NotApplicable
    branch = version((d.driver_version or "").split(".")[0] or None)
    if branch is None:
        raise CouldNotCheck("driver", reason="the Windows driver's version is unknown")
    new_driver = branch >= Version("555")
    if wsl_side and toolkit is not None:
        # on the WSL 2 side, where the toolkit is installed: its version decides
        if new_driver and toolkit < Version(WSL_CONTAINER_TOOLKIT_MIN):
            yield Finding(
                "wsl-container-runtime-too-old", Severity.ERROR,
                f"The NVIDIA Container Toolkit here is {p.container_toolkit}, older than "
                f"{WSL_CONTAINER_TOOLKIT_MIN}, which the Windows driver {d.driver_version} needs: GPU "
                f"containers will not map {WSL_CONTAINER_LIB} and CUDA will not initialise in them.",
                {"platform.container_toolkit": p.container_toolkit or "",
                 "driver.driver_version": d.driver_version or ""},
                hint=f"Upgrade nvidia-container-toolkit to {WSL_CONTAINER_TOOLKIT_MIN} or newer (Docker "
                     "Desktop users: 4.31 or newer).",
                links=(WSL_CONTAINER_BUG,))
        return
    if not new_driver or WSL_CONTAINER_LIB in (p.wsl_driver_libs or ()):
        return
    yield Finding(
        "wsl-container-runtime-too-old", Severity.ERROR,
        f"This container runs under WSL 2 with the Windows driver {d.driver_version}, but its runtime did "
        f"not map {WSL_CONTAINER_LIB} into /usr/lib/wsl/lib: CUDA cannot initialise "
        "(cuInit: CUDA_ERROR_NOT_FOUND).",
        {"driver.driver_version": d.driver_version or "", "platform.wsl_driver_libs": " ".join(
            (p.wsl_driver_libs or ())[:12])},
        hint="Update Docker Desktop to 4.31 or newer (or nvidia-container-toolkit to 1.14.4 / 1.15 or "
             "newer) and restart the container; or go back to a Windows driver before 555.",
        links=(WSL_CONTAINER_BUG,))


def _cudnn_fits(facts: Facts) -> Iterator[Finding]:
    """A cuDNN the machine (or the ticket) says is installed, against the build's (stack.cudnn),
    judged even when the libraries are unknown."""
    fit = stack.cudnn(facts)
    release = stack.release_of(facts)
    if fit is None or fit.fits is not False or release is None:
        return
    if fit.toolkit is not None and fit.toolkit.via == stack.LOADED_BY_TF:
        return  # TensorFlow's own line says it (tf-log-cudnn-version-mismatch)
    yield Finding(
        "cudnn-wrong-version", Severity.ERROR,
        f"TensorFlow {release.version} was built with cuDNN {release.cudnn} and needs {fit.need}; "
        f"the installed cuDNN is {fit.have} ({fit.have_from}).",
        {"tensorflow.version": release.version, "cudnn": f"{fit.have} ({fit.have_from})",
         "needs_cudnn": release.cudnn, "needs_cuda": release.cuda},
        hint=f"Install cuDNN {release.cudnn} for CUDA {release.cuda} (TensorFlow {release.version}'s tested "
             "build configuration) and put its lib directory first on LD_LIBRARY_PATH.",
        links=(TF_SOURCE,))


def missing_soname(need: Version) -> str:
    if need.major < 11:
        return f"libcudart.so.{need.major}.{need.minor}"
    if (need.major, need.minor) == (11, 0):
        return "libcusolver.so.10"
    return f"libcudart.so.{need.major}.0"


@check("cuda-toolkit", "Installed CUDA toolkit fits TensorFlow", "cuda",
       emits=("cuda-toolkit-wrong-version", "cuda-toolkit-on-library-path", "cudnn-wrong-version"),
       needs="tensorflow", reads=("tensorflow",))
def cuda_toolkit(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Before 2.14 TensorFlow loads the CUDA libraries of the system toolkit, which must be the
    CUDA major.minor of its tested build configuration; from 2.14 the pip wheels bring them and a
    toolkit of another major on LD_LIBRARY_PATH only shadows them."""
    tf = stack.gpu_build(facts)
    release = stack.release_of(facts)
    if tf is None or release is None or not release.cuda:
        if tf is not None and facts.platform.system == "Windows" and release is not None:
            raise NotApplicable("no GPU build of this TensorFlow on native Windows: no toolkit fits it")
        raise NotApplicable
    need = version(release.cuda)
    if need is None or version(tf.version) is None:
        raise NotApplicable
    if not stack.pip_era(release):
        wrong_cudnn = list(_cudnn_fits(facts))
        yield from wrong_cudnn
        fit = stack.toolkit(facts)
        if fit is not None and fit.fits is False:
            yield Finding(
                "cuda-toolkit-wrong-version", Severity.ERROR,
                f"TensorFlow {tf.version} needs the CUDA {release.cuda} libraries (cuDNN {release.cudnn}); "
                f"the installed toolkit is CUDA {fit.have}, so libraries such as "
                f"{missing_soname(need)} are missing.",
                {"tensorflow.version": tf.version or "", "toolkit": f"{fit.have} ({fit.have_from})",
                 "needs_cuda": release.cuda, "needs_cudnn": release.cudnn},
                hint=f"Install CUDA {release.cuda} and cuDNN {release.cudnn} (beside the other toolkit "
                     "is fine) and put its lib64 on LD_LIBRARY_PATH, or install a TensorFlow built for the "
                     "toolkit you have (tested build configurations).",
                links=(TF_SOURCE,))
        elif fit is None and not facts.known("toolkits") and not wrong_cudnn:
            # no toolkit shown is not "the toolkit fits"; a cuDNN judged wrong is reported still
            raise CouldNotCheck("toolkits")
        return
    if not facts.known("env"):
        raise CouldNotCheck("env")
    path = facts.env.get("LD_LIBRARY_PATH") or ""
    if not path:
        return
    other = [d for d in path.split(":")
             if (m := re.search(r"cuda-?(\d+)(?:\.\d+)?", d)) and int(m.group(1)) != need.major]
    if other:
        yield Finding(
            "cuda-toolkit-on-library-path", Severity.WARNING,
            f"LD_LIBRARY_PATH puts a CUDA toolkit of another major ({other[0]}) before the CUDA "
            f"{need.major} libraries TensorFlow {tf.version}'s pip wheels bring: a library of the wrong "
            "version can load first.",
            {"env.LD_LIBRARY_PATH": path, "needs_cuda": release.cuda},
            hint="Remove that directory from LD_LIBRARY_PATH for TensorFlow (the [and-cuda] wheels "
                 "need no system toolkit).",
            links=(TF_SOURCE,))
