"""The CUDA driver API (libcuda.so.1) and the user-space libraries TensorFlow dlopens."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from tfdoctor import compat, stack
from tfdoctor.checks.advice import cuda_libraries as cuda_libraries_advice
from tfdoctor.checks.common import (
    TF_INSTALL,
    cudnn_requirement,
    nvidia_wheel,
    pip_install,
    version,
)
from tfdoctor.checks.driver import DRIVER_DOCS, wants_gpu
from tfdoctor.checks.usable import REQUIRED_LIBS, loadable
from tfdoctor.facts import Facts, LibraryFacts
from tfdoctor.findings import Finding, Remediation, Severity
from tfdoctor.registry import CheckConfig, CouldNotCheck, NotApplicable, check

WSL_LIB = "/usr/lib/wsl/lib"
OPTIONAL_LIBS = ("nvshmem",)


@check("libcuda", "CUDA driver library loads and initialises", "cuda",
       emits=("libcuda-missing", "libcuda-stub", "libcuda-crashed", "libcuda-copied",
              "libcuda-compat-unusable", "libcuda-init-failed"),
       reads=("cuda_driver",))
def libcuda(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """libcuda.so.1 loads from the driver (not a toolkit stub) and cuInit succeeds."""
    c = facts.cuda_driver
    if not wants_gpu(facts):
        raise NotApplicable
    ev = {"cuda_driver.library": c.library or "not loaded"}
    if c.crash:
        yield Finding("libcuda-crashed", Severity.ERROR,
                      f"Loading or initialising libcuda.so.1 crashed ({c.crash}).",
                      {**ev, "cuda_driver.crash": c.crash},
                      hint="Reinstall the NVIDIA driver so libcuda matches the kernel module.")
        return
    if c.is_stub:
        stub_dir = os.path.dirname(c.library or "") or "the stubs directory"
        yield Finding(
            "libcuda-stub", Severity.ERROR,
            "The libcuda.so.1 on the loader path is the CUDA toolkit's link-time stub, not the driver.",
            {**ev, "cuda_driver.init_result": c.init_result or "?"},
            hint=f"Remove {stub_dir} from LD_LIBRARY_PATH (it is only for linking).",
            remediation=Remediation("remove-stub-libcuda-from-path", (
                f"export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | "
                f"grep -vxF {shlex.quote(stub_dir)} | paste -sd:)",)))
        return
    if c.load_error:
        wsl = facts.platform.is_wsl
        yield Finding(
            "libcuda-missing", Severity.ERROR,
            "libcuda.so.1, the CUDA driver library, cannot be loaded.",
            {**ev, "cuda_driver.load_error": c.load_error, "platform.is_wsl": str(bool(wsl)).lower()},
            hint=(f"On WSL2 the driver's libcuda lives in {WSL_LIB}: add it to the loader path."
                  if wsl else "Install the NVIDIA driver's CUDA library (libcuda1 / "
                  "nvidia-driver-libs), or in a container use the NVIDIA container toolkit."),
            remediation=Remediation("wsl-libcuda-path", (
                f"echo {WSL_LIB} | sudo tee /etc/ld.so.conf.d/ld.wsl.conf", "sudo ldconfig"),
                needs_root=True) if wsl else None)
        return
    if c.copied_over and c.library:
        module = facts.driver.kernel_module_version or facts.driver.driver_version
        yield Finding(
            "libcuda-copied", Severity.WARNING,
            f"The libcuda.so.1 that loads ({c.library}) is a file of its own, not the driver's link to "
            f"{c.copied_over}: a copy put over it, possibly of another driver version"
            + (f" than the kernel module's {module}." if module else "."),
            {**ev, "cuda_driver.copied_over": c.copied_over,
             "driver.kernel_module_version": module or "unknown"},
            hint=f"Restore the driver's link (sudo ln -sf {c.copied_over} {c.library}; ldconfig warns "
                 "'is not a symbolic link' until then), or reinstall the driver's CUDA library package.",
            links=(DRIVER_DOCS,))
    compat_dir = _compat_dir(c.library)
    if compat_dir and c.init_result in COMPAT_REFUSALS:
        yield Finding(
            "libcuda-compat-unusable", Severity.ERROR,
            f"The libcuda.so.1 that loads is CUDA's forward-compatibility package ({compat_dir}), and "
            f"cuInit refused it ({c.init_result}): "
            + COMPAT_REFUSALS[c.init_result] + ".",
            {**ev, "library.path": c.library or "", "cuda_driver.init_result": c.init_result,
             "driver.driver_version": facts.driver.driver_version or "unknown"},
            hint=f"Remove {compat_dir} from LD_LIBRARY_PATH (and /etc/ld.so.conf.d) so the driver's own "
                 "libcuda loads, or install a driver new enough for TensorFlow's CUDA instead.",
            remediation=Remediation("remove-from-ld-library-path", (
                f"export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | "
                f"grep -vxF {shlex.quote(compat_dir)} | paste -sd:)",)),
            links=(CUDA_FORWARD_COMPAT,))
        return
    if c.init_result and c.init_result not in ("CUDA_SUCCESS", "CUDA_ERROR_NO_DEVICE"):
        yield Finding("libcuda-init-failed", Severity.ERROR,
                      f"cuInit failed with {c.init_result}.",
                      {**ev, "cuda_driver.init_result": c.init_result},
                      hint="CUDA_ERROR_SYSTEM_DRIVER_MISMATCH and CUDA_ERROR_COMPAT_NOT_SUPPORTED_"
                      "ON_DEVICE mean a forward-compatibility libcuda on the path that this GPU "
                      "or kernel driver cannot use: remove it from LD_LIBRARY_PATH.")


CUDA_FORWARD_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"
COMPAT_REFUSALS = {
    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": "forward compatibility works only on NVIDIA "
    "data-center GPUs, select NGC Server Ready RTX cards and Jetson, not on this GPU",
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": "its CUDA driver does not match the installed display "
    "(kernel) driver",
}
"""cuInit's answers that mean the forward-compatibility libcuda cannot run here (NVIDIA's CUDA
compatibility guide, 'Forward Compatibility'; checked 2026-11-23)."""


def _compat_dir(library: str | None) -> str | None:
    """The directory of a forward-compatibility libcuda: /usr/local/cuda-X.Y/compat, a cuda-compat
    package's directory (/usr/local/cuda/compat, .../cuda-compat-12-4/...); None for any other."""
    if not library:
        return None
    directory = os.path.dirname(library)
    parts = directory.split("/")
    return directory if ("compat" in parts or any(p.startswith("cuda-compat") for p in parts)) else None


def _lib_ev(lib: LibraryFacts, facts: Facts) -> dict[str, str]:
    ev = {"library.soname": lib.soname, "library.path": lib.path or "not found"}
    said = facts.provenance.get(f"libraries.{lib.soname}")
    if said:
        ev["library.path"] = f"not found (the ticket says: {said})"
    if lib.version:
        ev["library.version"] = f"{lib.version} (from {lib.version_source})"
    if lib.found_via:
        ev["library.found_via"] = lib.found_via
    if lib.other_copies:
        ev["library.other_copies"] = ", ".join(lib.other_copies)
    if lib.other_versions:
        ev["library.other_versions"] = ", ".join(lib.other_versions)
    return ev


@check("cuda-libraries", "CUDA libraries TensorFlow loads", "cuda",
       emits=("cuda-library-missing", "cuda-library-unloadable", "cuda-library-too-old",
              "cuda-library-shadowed", "cuda-library-version-unknown"),
       reads=())
def cuda_libraries(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Each library TF dlopens resolves, is at least as new as TF's build, and is not shadowed.
    Judged per library: a ticket's libraries are those its user says are not found, judged even
    when the ticket names no TensorFlow release."""
    missing = facts.unknown_of("tensorflow", "libraries")
    if missing and not facts.libraries:
        raise CouldNotCheck(*missing)
    tf = stack.gpu_build(facts)
    if tf is None and facts.known("tensorflow"):
        raise NotApplicable
    release = tf.version if tf else None
    pip_pkg = {"cudart": "nvidia-cuda-runtime", "cudnn": "nvidia-cudnn",
               "cusolver": "nvidia-cusolver", "nvjitlink": "nvidia-nvjitlink"}
    for lib in facts.libraries:
        ev = _lib_ev(lib, facts)
        if lib.path is None:
            # Only the libraries TryDlopenCUDALibraries needs make TF skip every GPU; the others
            # (curand, cupti, nccl, nvshmem, nvjitlink) fail later, in the ops that use them.
            required = lib.name in REQUIRED_LIBS
            effect = ("so it will skip every GPU (\"Cannot dlopen some GPU libraries\")" if required
                      else "so the operations that need it fail when first used")
            severity = Severity.ERROR if required else Severity.WARNING
            if lib.name in OPTIONAL_LIBS and not lib.other_copies:
                # NVSHMEM serves only XLA's NVSHMEM collectives; TF's [and-cuda] adds it from 2.22.
                effect, severity = "which only XLA's NVSHMEM collectives use", Severity.INFO
            pip_copy = [p for p in lib.other_copies if "/nvidia/" in p]
            hint = ("A pip copy exists but TensorFlow's RUNPATH does not reach it: add its directory "
                    "to LD_LIBRARY_PATH (tfdoctor fix writes an activation hook)." if pip_copy else
                    f"For TensorFlow's CUDA libraries, {cuda_libraries_advice(facts)}.")
            if severity is Severity.INFO:
                hint = ("Nothing to do unless you use XLA's NVSHMEM collectives; then install "
                        f"{nvidia_wheel('nvidia-nvshmem', facts)}.")
            if lib.other_versions and not pip_copy:
                hint = (f"Only another major version is installed ({lib.other_versions[0]}); "
                        f"{'TensorFlow ' + release if release else 'This TensorFlow'} needs {lib.soname}. "
                        + hint)
            yield Finding(
                "cuda-library-missing", severity,
                f"TensorFlow cannot load {lib.soname}, {effect}.", ev, hint=hint,
                remediation=_library_fix(facts, lib, pip_copy, severity),
                links=(TF_INSTALL,))
            continue
        if tf is None:
            continue  # (a ticket's libraries are only ones said not to be found)
        if not loadable(lib):
            # The file is there but the loader refuses or crashes on it, as TF's dlopen will.
            yield Finding(
                "cuda-library-unloadable",
                Severity.ERROR if lib.name in REQUIRED_LIBS else Severity.WARNING,
                f"{lib.soname} is at {lib.path} but cannot be loaded: {lib.error}.",
                {**ev, "library.error": lib.error or ""},
                hint="The file is damaged, truncated or built for another system: reinstall it.",
                remediation=Remediation("install-tf-and-cuda", (
                    pip_install(facts, f"tensorflow[and-cuda]=={tf.version}",
                                extra=("--force-reinstall",)),)) if lib.origin == "pip" else None)
            continue
        if lib.error:
            yield Finding("cuda-library-version-unknown", Severity.WARNING,
                          f"{lib.soname} could not tell its version: {lib.error}.",
                          {**ev, "library.error": lib.error},
                          hint="A library that crashes when asked its version is likely corrupt "
                          "or built for another CUDA: reinstall it.")
        # cuDNN checks major and minor at load time (cuda_dnn.cc); the CUDA runtime must be at
        # least the toolkit TF was built with, or newer symbols are missing.
        built = {"cudnn": tf.cudnn_version, "cudart": tf.cuda_version}.get(lib.name)
        have = version(lib.version)
        need = version(built)
        if built and have and need and have.major == need.major \
                and (have.major, have.minor) < (need.major, need.minor):
            pkg = nvidia_wheel(pip_pkg.get(lib.name, "nvidia-cudnn"), facts)
            quote = (f" (\"Loaded runtime CuDNN library: {lib.version} but source was compiled "
                     f"with: {built}\")" if lib.name == "cudnn" else "")
            yield Finding(
                "cuda-library-too-old", Severity.ERROR,
                f"{lib.soname} is version {lib.version}, older than the {built} TensorFlow "
                f"{tf.version} was compiled with{quote}.",
                {**ev, f"tensorflow.built_with.{lib.name}": built},
                hint=f"Put a {lib.name} at least as new as TensorFlow's build first on the loader path.",
                remediation=_repin(facts, cudnn_requirement(facts, f">={built},<{need.major + 1}")
                                   if lib.name == "cudnn" else f"{pkg}>={built},<{need.major + 1}"),
                links=(TF_INSTALL,))
        shadowed_pip = [p for p in lib.other_copies if "/site-packages/nvidia/" in p]
        if lib.found_via == "ld_library_path" and lib.origin != "pip" and shadowed_pip:
            yield Finding(
                "cuda-library-shadowed", Severity.WARNING,
                f"{lib.soname} loads from LD_LIBRARY_PATH ({lib.path}), hiding the pip copy "
                "that TensorFlow's pins chose.", ev,
                hint=f"Remove {os.path.dirname(lib.path)} from LD_LIBRARY_PATH.",
                remediation=Remediation("remove-from-ld-library-path", (
                    f"export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -vxF "
                    f"{shlex.quote(os.path.dirname(lib.path))} | paste -sd:)",)))


RELEASES_MISSING_PIP_LIBS = {
    "2.16.1": "https://github.com/tensorflow/tensorflow/issues/63362",
}
"""TensorFlow releases whose [and-cuda] install does not find its own pip CUDA libraries (a clean
`pip install tensorflow[and-cuda]` in python:3.11 lists no GPU: #63362, checked 2026-11-23)."""


@check("tf-release-pip-libs", "This TensorFlow release finds its [and-cuda] libraries", "cuda",
       emits=("tf-release-misses-pip-cuda-libs",), needs="tensorflow")
def tf_release_pip_libs(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Where the libraries were not probed (a ticket): a release known to miss its pip CUDA wheels.
    A live run resolves every library and says so in cuda-libraries instead."""
    tf = facts.tensorflow
    link = RELEASES_MISSING_PIP_LIBS.get(tf.version or "") if tf else None
    if tf is None or link is None or facts.known("libraries") or facts.platform.system == "Windows":
        raise NotApplicable
    pip_cuda = any(name.startswith("nvidia-") and name.endswith("-cu12") for name in facts.python.packages)
    # No package list, but a GPU is wanted: the release's documented install is [and-cuda].
    # (Not where the ticket shows a system toolkit: that TensorFlow may be meant to use it.)
    system_cuda = any(t.via != "claimed" for t in facts.toolkits)
    assumed = not facts.known("python.packages") and bool(facts.intent.gpu) and not system_cuda
    if not (pip_cuda or facts.intent.and_cuda or assumed):
        raise NotApplicable
    how = ("installed with [and-cuda]" if pip_cuda or facts.intent.and_cuda
           else "installed as its install page says (pip install tensorflow[and-cuda])")
    yield Finding(
        "tf-release-misses-pip-cuda-libs", Severity.ERROR,
        f"TensorFlow {tf.version} {how} does not find the CUDA libraries of its own "
        "pip wheels (site-packages/nvidia/*/lib): it lists no GPU unless they are on LD_LIBRARY_PATH.",
        {"tensorflow.version": tf.version or "",
         "and_cuda": f"tensorflow[and-cuda] ({facts.provenance.get('intent.and_cuda', 'the ticket')})"
         if facts.intent.and_cuda else
         ("nvidia-*-cu12 wheels installed" if pip_cuda else "assumed: no package list in the ticket")},
        hint="Upgrade TensorFlow, or put every site-packages/nvidia/*/lib directory on LD_LIBRARY_PATH "
             "(tfdoctor fix does it for the environment when it can probe it).",
        links=(link,))


@check("tf-loader", "TensorFlow's own loader agrees with tfdoctor's model", "cuda",
       emits=("tf-loader-disagrees", "tf-loader-unavailable"), reads=("libraries",))
def tf_loader(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """TensorFlow's DsoLoader (asked in the full run) opens what tfdoctor's loader model predicts.

    The library verdicts already use TensorFlow's answer; a disagreement means tfdoctor's model
    of the search (libresolve.py) is wrong for this layout, so its search-path advice may be too.
    """
    loader = facts.tf_loader
    if loader is None:
        raise NotApplicable
    unread = [a.name for a in loader.answers if a.error and not a.error.startswith("Could not load")
              and a.path is None]
    if loader.error or unread:
        yield Finding(
            "tf-loader-unavailable", Severity.INFO,
            "TensorFlow's own loader could not be asked"
            + (f" about {', '.join(unread)}" if unread and loader.answers else "")
            + ": those verdicts rest on tfdoctor's model of the loader alone.",
            {"tf_loader.loader": loader.loader or "not found",
             "tf_loader.error": loader.error or "; ".join(
                 f"{a.name}: {a.error}" for a in loader.answers if a.name in unread)},
            hint="Nothing to do; for a TensorFlow release tfdoctor does not know, please report "
            "it (tfdoctor report).")
    for lib in facts.libraries:
        if not lib.model_disagrees:
            continue
        said = lib.path or f"cannot load it ({lib.error})"
        yield Finding(
            "tf-loader-disagrees", Severity.WARNING,
            f"TensorFlow's own loader and tfdoctor's model disagree on {lib.soname}: "
            f"TensorFlow {'opens ' + lib.path if lib.path else 'cannot load it'}, the model "
            f"predicted {lib.model_path or 'no file'}.",
            {"library.soname": lib.soname, "library.path": said,
             "library.model_path": lib.model_path or "not found",
             "tf_loader.loader": loader.loader or "?"},
            hint="The findings above use TensorFlow's answer. Please report this layout (tfdoctor "
            "report) so the loader model can be fixed.")


@check("cudnn-gpu-support", "The loaded cuDNN supports each GPU", "cuda",
       emits=("cudnn-gpu-unsupported",), needs="tensorflow", reads=("libraries", "driver.gpus"))
def cudnn_gpu_support(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """cuDNN drops old architectures (9.17 supports compute capability 7.5 and up, so a newer
    nvidia-cudnn wheel breaks P100/V100) and predates new ones (cuDNN support matrices):
    stack.cudnn_on_gpus judges each GPU model."""
    lib = facts.library("cudnn")
    if lib is None or not lib.version or not facts.driver.gpus:
        raise NotApplicable
    release = compat.cudnn_release(lib.version)
    if release is None:
        return
    sure = "" if release.verified else " (by the nearest older row of the support matrix)"
    wheel = nvidia_wheel("nvidia-cudnn", facts)
    pin = facts.tensorflow.and_cuda_pins.get(wheel, "") if facts.tensorflow else ""
    fixed = cudnn_requirement(facts, pin)
    for gpus in stack.same_model(facts.driver.gpus):
        g, which = gpus[0], stack.gpu_label(gpus)
        fit = stack.cudnn_on_gpus(facts, gpus)
        if fit is None or fit.fits is not False or not g.compute_capability:
            continue
        cc = g.compute_capability
        too_old = compat.cudnn_span(release, cc) == "too-old"
        span = f"{release.min_cc} to {release.max_cc or 'newer'}"
        yield Finding(
            "cudnn-gpu-unsupported", Severity.ERROR if too_old and release.verified else Severity.WARNING,
            f"cuDNN {lib.version} supports compute capability {span}{sure}; {which} "
            f"({g.name}) {'is' if len(gpus) == 1 else 'are'} {cc}.",
            {**_lib_ev(lib, facts), "gpu.compute_capability": cc, "cudnn.supported": span},
            hint="Pin the nvidia-cudnn wheel to a release that lists this GPU's architecture "
                 "(TensorFlow's own [and-cuda] pin is the tested one).",
            # Re-pinning helps only when the wheel strayed from TF's pin; a GPU newer than the
            # pinned cuDNN needs a newer TensorFlow (gpu-newer-than-tf says which).
            remediation=_repin(facts, fixed) if too_old else None,
            links=("https://docs.nvidia.com/deeplearning/cudnn/latest/reference/support-matrix.html",))


TF_TRT = "https://docs.nvidia.com/deeplearning/frameworks/tf-trt-user-guide/"


@check("tensorrt", "TF-TRT finds the TensorRT this TensorFlow loads", "cuda",
       emits=("tensorrt-wrong-version",))
def tensorrt(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """TensorFlow's TF-TRT dlopens libnvinfer by the soname of the TensorRT it was built with (7
    for the 2.4-2.12 wheels, 8.6.1 in a 2.16 log); another TensorRT installed is not loaded ("Could
    not load dynamic library 'libnvinfer.so.7'", "TF-TRT Warning: Could not find TensorRT"), so
    TF-TRT cannot run, while GPU work without it is unaffected (stack.tensorrt judges it)."""
    fit = stack.tensorrt(facts)
    if fit is None:
        # TensorFlow's own output shows it looking for TensorRT: which one is installed decides
        if facts.tensorrt and facts.tensorrt.wanted and not facts.known("python.packages"):
            raise CouldNotCheck("python.packages")
        raise NotApplicable
    if fit.fits is not False:
        return
    release = facts.tensorflow.version if facts.tensorflow and facts.tensorflow.version else None
    yield Finding(
        "tensorrt-wrong-version", Severity.WARNING,
        f"{'TensorFlow ' + release if release else 'This TensorFlow'} loads {fit.need} for TF-TRT, but "
        f"the TensorRT installed is {fit.have.removeprefix('TensorRT ')}: TF-TRT cannot run. GPU work "
        "that does not use TF-TRT is not affected.",
        {"tensorrt.wanted": f"{fit.need} ({fit.need_from})",
         "tensorrt.installed": f"{fit.have} ({fit.have_from})"},
        hint="Install the TensorRT release whose library is the soname above (NVIDIA's TensorRT archive, or "
             "its pip wheel) and put its directory on LD_LIBRARY_PATH, or use a TensorFlow release built "
             "for the TensorRT you have; without TF-TRT nothing needs to change.",
        links=(TF_TRT,))


def _library_fix(facts: Facts, lib: LibraryFacts, pip_copy: list[str],
                 severity: Severity) -> Remediation | None:
    """The pip copy's directory on LD_LIBRARY_PATH (no trailing ':' when it was unset: an empty
    entry means the current directory to ld.so), else TF's pip CUDA libraries."""
    if pip_copy:
        return Remediation("activation-hook-ld-library-path", (
            f"export LD_LIBRARY_PATH={shlex.quote(os.path.dirname(pip_copy[0]))}"
            '"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"',))
    tf = version(facts.tensorflow.version if facts.tensorflow else None)
    windows = (facts.platform.system or "").lower() == "windows" and not facts.platform.is_wsl
    if severity is Severity.INFO or tf is None or (tf.major, tf.minor) < (2, 14) or windows:
        return None  # no [and-cuda] extra before 2.14 nor on native Windows: the hint says how
    assert facts.tensorflow is not None
    return Remediation("install-tf-and-cuda", (
        pip_install(facts, f"tensorflow[and-cuda]=={facts.tensorflow.version}"),))


def _repin(facts: Facts, *requirements: str | None) -> Remediation | None:
    """pip-install the re-pinned wheels; None when one of them cannot be satisfied (a cuDNN
    that both TF accepts and this GPU supports does not exist: the fix is another TF)."""
    if not requirements or any(r is None for r in requirements):
        return None
    return Remediation("repin-nvidia-wheels", (pip_install(facts, *(r for r in requirements if r)),))


@check("nvidia-wheel-pins", "nvidia-* wheels match TensorFlow's [and-cuda] pins", "cuda",
       emits=("nvidia-wheel-off-pin",), needs="tensorflow",
       reads=("python.packages", "tensorflow.requirements"))
def nvidia_wheel_pins(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Installed nvidia-*-cu12 wheels satisfy the specifiers in TF's [and-cuda] extra."""
    tf = facts.tensorflow
    if tf is None or not tf.and_cuda_pins or not any(p in facts.python.packages for p in tf.and_cuda_pins):
        raise NotApplicable
    off = []
    for pkg, spec in sorted(tf.and_cuda_pins.items()):
        have = facts.python.packages.get(pkg)
        if have is None or not spec:
            continue
        try:
            if not SpecifierSet(spec).contains(have, prereleases=True):
                off.append((pkg, have, spec))
        except InvalidSpecifier:
            continue
    if off:
        yield Finding(
            "nvidia-wheel-off-pin", Severity.WARNING,
            f"{len(off)} nvidia-* wheel(s) are outside TensorFlow {tf.version}'s [and-cuda] pins.",
            {pkg: f"{have} (needs {spec})" for pkg, have, spec in off},
            hint="Re-pin them to what TensorFlow was tested with.",
            remediation=_repin(facts, *(
                cudnn_requirement(facts, spec) if pkg == nvidia_wheel("nvidia-cudnn", facts)
                else f"{pkg}{spec}" for pkg, _h, spec in off)))


@check("xla-toolchain", "XLA finds ptxas and libdevice", "cuda",
       emits=("xla-flags-bad-dir", "xla-ptxas-missing", "xla-ptxas-other-cuda",
              "tf-log-driver-older-than-ptxas", "xla-libdevice-missing"),
       needs="xla", reads=("xla",))
def xla_toolchain(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """XLA's GPU compiler needs ptxas and nvvm/libdevice/libdevice.10.bc (xla cuda_root_path.cc)."""
    x = facts.xla
    tf = facts.tensorflow
    if x is None or tf is None or not tf.is_cuda_build:
        raise NotApplicable
    searched = {"xla.searched": ", ".join(x.searched)}
    if x.xla_flags_data_dir and not x.xla_flags_data_dir_exists:
        yield Finding("xla-flags-bad-dir", Severity.ERROR,
                      f"XLA_FLAGS points --xla_gpu_cuda_data_dir at {x.xla_flags_data_dir}, "
                      "which does not exist.", {"env.XLA_FLAGS": facts.env.get("XLA_FLAGS", "")},
                      hint="Point it at a directory holding bin/ptxas and nvvm/libdevice, or unset it.")
    nvcc = nvidia_wheel("nvidia-cuda-nvcc", facts)
    fix = Remediation("install-cuda-nvcc-wheel", (
        pip_install(facts, f"{nvcc}{tf.and_cuda_pins.get(nvcc, '')}"),))
    if x.ptxas is None:
        yield Finding("xla-ptxas-missing", Severity.WARNING,
                      "XLA cannot find ptxas: jit_compile functions fall back to the driver or fail.",
                      searched, hint="Install the nvidia-cuda-nvcc wheel TensorFlow pins, or put a "
                      "CUDA toolkit's bin on PATH.", remediation=fix)
    # stack.ptxas judges it: another CUDA major, or newer than the driver's CUDA
    fit, have, built = stack.ptxas(facts), version(x.ptxas_version), version(tf.cuda_version)
    if x.ptxas and fit and fit.fits is False and have and built and have.major != built.major:
        # XLA prefers the ptxas on PATH (PreferPtxasFromPath); CUDA 13's ptxas dropped
        # Maxwell/Pascal/Volta targets and its PTX needs a driver of its own major.
        pip_bin = os.path.join(os.path.dirname(tf.package_dir or ""), "nvidia", "cuda_nvcc", "bin")
        yield Finding(
            "xla-ptxas-other-cuda", Severity.WARNING,
            f"XLA will use ptxas {x.ptxas_version} ({x.ptxas}) for a TensorFlow built with CUDA "
            f"{tf.cuda_version}: it may reject this GPU's architecture or need a newer driver.",
            {"xla.ptxas": x.ptxas, "xla.ptxas_version": x.ptxas_version or "",
             "tensorflow.cuda_version": tf.cuda_version or "",
             "xla.ptxas_found_via": x.ptxas_found_via or "unknown"},
            hint="Put the ptxas of TensorFlow's CUDA first on PATH (the nvidia-cuda-nvcc wheel's).",
            remediation=Remediation("put-matching-ptxas-on-path", (
                f'export PATH={shlex.quote(pip_bin)}"${{PATH:+:$PATH}}"',)))
    elif x.ptxas and fit and fit.fits is False:
        yield Finding(
            "tf-log-driver-older-than-ptxas", Severity.WARNING,
            f"The driver's CUDA version ({facts.driver.cuda_driver_version}) is older than the ptxas "
            f"XLA will use ({x.ptxas_version}, {x.ptxas}): XLA disables parallel compilation, so "
            "jit_compile functions compile more slowly.",
            {"xla.ptxas": x.ptxas, "xla.ptxas_version": x.ptxas_version or "",
             "driver.cuda_driver_version": facts.driver.cuda_driver_version or ""},
            hint="Upgrade the NVIDIA driver to one for CUDA "
                 f"{'.'.join(map(str, have.release[:2])) if have else '?'} or newer, or put an older "
                 "ptxas of TensorFlow's CUDA major first on PATH.")
    if x.libdevice is None:
        yield Finding("xla-libdevice-missing", Severity.WARNING,
                      "XLA cannot find libdevice.10.bc (\"libdevice not found\").", searched,
                      hint="Set XLA_FLAGS=--xla_gpu_cuda_data_dir=<dir with nvvm/libdevice>.",
                      remediation=fix)

