"""The one compatibility evaluator: what this TensorFlow needs against what the machine has.

What TensorFlow needs comes from its build info where that was read (a live run, a ticket that
pasted `tf.sysconfig.get_build_info()`), otherwise from the release table's tested build
configuration (`compat_tables/tensorflow.toml`). What the machine has comes from whatever evidence
exists: NVML or nvidia-smi, the driver, cuDNN and ptxas versions TensorFlow's and XLA's own logs
print, nvcc, a toolkit directory or a conda environment's packages, a version the user states.
Each element is judged on its own, so a stated cuDNN 7.4.1
against a build that needs 7.6 is judged although nothing else of the libraries is known, and a
driver version read from a log is judged although the GPUs are not.

Each judgement is a `Fit`: the element, what is needed and from where, what is there and from
where, and whether it fits (None: the tables cannot tell). The checks (driver-supports-cuda,
cuda-toolkit, xla-toolchain, cudnn-gpu-support, tf-python-version, gpu-compute-capability) turn
the fits that fail into findings, and the text report shows every fit as a table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from tfdoctor import compat
from tfdoctor.facts import Facts, GpuFacts, TensorFlowFacts, TensorRtFacts, ToolkitFacts

_CC = re.compile(r"[0-9]{1,2}(?:\.[0-9]{1,2})?")
"""A compute capability as NVML and the tables write it ("8.6"); anything else is not judged."""
LOADED_BY_TF = "tensorflow log"
"""ToolkitFacts.via of the cuDNN TensorFlow's own log says it loaded (triage's tf_cudnn)."""
LIBRARIES_MISSING = {"cudart-not-loaded", "library-not-loaded", "gpu-libraries-missing"}
"""TensorFlow log causes that say CUDA libraries did not load."""


@dataclass(frozen=True, slots=True)
class Fit:
    """One element of the stack judged against what this TensorFlow needs."""

    element: str
    """What is judged: "driver", "cuDNN", "CUDA toolkit", "Python", "GPU 0"."""
    need: str
    """What TensorFlow needs, in words ("CUDA 11.0 runtime: driver >= 450.80.02")."""
    need_from: str
    """Where that comes from: "build info" or "tested build configuration of TensorFlow 2.4"."""
    have: str
    """What the machine has ("418.87.01")."""
    have_from: str
    """Where that comes from ("nvidia-smi (line 3)", "NVML", "the ticket says")."""
    fits: bool | None
    """False: it does not fit; None: the tables cannot tell."""
    minimum: str | None = None
    """The least version that fits, where there is one (the driver's minor-version floor)."""
    exact: str | None = None
    """The driver: the one the CUDA release shipped with; below it, minor-version compatibility."""
    kernels: str | None = None
    """A GPU: "sass", "ptx" (JIT-compiled), "ptx-fails" (PTX that does not compile for it), "none"."""
    compute_capability: str | None = None
    """A GPU: its compute capability, e.g. "8.6"."""
    toolkit: ToolkitFacts | None = None
    """The toolkit the judgement is about (CUDA toolkit, cuDNN)."""


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def release_of(facts: Facts) -> compat.TfRelease | None:
    tf = facts.tensorflow
    return compat.tf_release(tf.version) if tf and tf.version else None


def gpu_build(facts: Facts) -> TensorFlowFacts | None:
    """This TensorFlow, when it is a CUDA build or may be one (a ticket that names the release but
    not the package: judged as the release's CUDA build); None for a CPU build, no TensorFlow, or
    a release with no GPU build on this platform (native Windows from 2.11)."""
    tf = facts.tensorflow
    if tf is None or tf.is_cuda_build is False:
        return None
    release = release_of(facts)
    windows = (facts.platform.system or "").lower() == "windows" and not facts.platform.is_wsl
    if windows and release is not None and release.windows_gpu is False:
        return None
    return tf


def _from(facts: Facts, path: str, live: str) -> str:
    """Where a fact came from: the ticket's line, or the probe that read it."""
    return facts.provenance.get(path) or live


def _need_from(facts: Facts, path: str) -> str:
    if path in facts.assumed:
        release = release_of(facts)
        return f"tested build configuration of TensorFlow {release.version if release else '?'}"
    return _from(facts, path, "build info")


def driver(facts: Facts) -> Fit | None:
    """The driver against the CUDA runtime TensorFlow uses: its version (NVML, nvidia-smi,
    TensorFlow's log) against the minimum driver; without a version, the CUDA version nvidia-smi's
    header names (from CUDA 11, any driver of the same CUDA major runs the runtime: minor-version
    compatibility, NVIDIA's CUDA compatibility guide)."""
    tf = gpu_build(facts)
    if tf is None or not tf.cuda_version:
        return None
    system = "windows" if (facts.platform.system or "").lower() == "windows" else "linux"
    req = compat.min_driver(tf.cuda_version, system)
    if req is None:
        return None
    need = f"CUDA {tf.cuda_version} runtime: driver >= {req.minor_compat or req.full}"
    need_from = _need_from(facts, "tensorflow.cuda_version")
    d = facts.driver
    if d.driver_version:
        return Fit("driver", need, need_from, d.driver_version,
                   _from(facts, "driver.driver_version", "NVML"),
                   compat.driver_cuda_ok(d.driver_version, tf.cuda_version, system),
                   minimum=req.minor_compat or req.full, exact=req.full)
    have, runtime = _version(d.cuda_driver_version), _version(tf.cuda_version)
    if have is None or runtime is None:
        return None
    fits = have.major >= runtime.major if runtime.major >= 11 else have.release[:2] >= runtime.release[:2]
    return Fit("driver", f"a driver for CUDA {runtime.major}.x" if runtime.major >= 11
               else f"a driver for CUDA {runtime.major}.{runtime.minor} or later", need_from,
               f"CUDA {d.cuda_driver_version}", _from(facts, "driver.cuda_driver_version", "NVML"),
               fits, minimum=req.minor_compat or req.full)


def pip_era(release: compat.TfRelease) -> bool:
    """From 2.14 the [and-cuda] wheels bring the CUDA libraries; before, the system's toolkit."""
    v = _version(release.version)
    return v is not None and (v.major, v.minor) >= (2, 14)


def _log_outweighs(facts: Facts, kit: ToolkitFacts) -> bool:
    """A toolkit the ticket only claims, against a TensorFlow log that got past loading the CUDA
    libraries (it names GPU devices or a later failure, and no missing library): the log wins."""
    smoke = facts.smoke
    if kit.via != "claimed" or smoke is None or smoke.outcome != "ticket":
        return False
    return not any(c.id in LIBRARIES_MISSING for c in smoke.causes)


def _kit_from(facts: Facts, kit: ToolkitFacts) -> str:
    if kit.via == "claimed":
        return "the ticket says"
    return f"found at {kit.path}" if kit.path else _from(facts, "toolkits", kit.via)


def same_sonames(have: Version, need: Version) -> bool:
    """Whether a toolkit of version `have` provides the sonames a build for CUDA `need` opens.
    From CUDA 11 the sonames carry only the major (libcudart.so.11.0, libcublas.so.11), except
    cuSOLVER: 11.0 ships libcusolver.so.10, 11.1 and later libcusolver.so.11 (TF 2.4, built with
    11.0, fails on 11.1: tensorflow/tensorflow#43947). Before 11 every minor has its own."""
    if need.major < 11:
        return (have.major, have.minor) == (need.major, need.minor)
    if need.major == 11:
        return have.major == 11 and (have.minor == 0) == (need.minor == 0)
    return have.major == need.major


def toolkit(facts: Facts) -> Fit | None:
    """Before 2.14 TensorFlow loads the system toolkit's libraries, which must carry the sonames
    of its build's CUDA: the toolkits shown (nvcc, a directory, a stated version; a stated one
    yields to a log that got past loading the libraries) against the release's CUDA."""
    release = release_of(facts)
    if gpu_build(facts) is None or release is None or not release.cuda or pip_era(release):
        return None
    need = _version(release.cuda)
    kits = [t for t in facts.toolkits if t.version and not _log_outweighs(facts, t)]
    if need is None or not kits:
        return None
    right = [t for t in kits if (v := _version(t.version)) is not None and same_sonames(v, need)]
    fits = bool(right)
    kit = right[0] if right else kits[0]
    return Fit("CUDA toolkit", f"CUDA {release.cuda} libraries",
               f"tested build configuration of TensorFlow {release.version}", kit.version or "?",
               _kit_from(facts, kit), fits, toolkit=kit)


def cudnn(facts: Facts) -> Fit | None:
    """The cuDNN TensorFlow loaded (its log says, in any release), or before 2.14 one the machine
    or the ticket says is installed, against the build's: cuDNN checks at load time that the major
    is the same and the minor at least the one compiled against (cuda_dnn.cc), so 7.4 under a
    build for 7.6 fails."""
    tf, release = gpu_build(facts), release_of(facts)
    loaded = _loaded_kit(facts)
    if tf is None or (loaded is None and (release is None or pip_era(release))):
        return None
    kit = loaded or next((t for t in facts.toolkits if t.cudnn_version and not _log_outweighs(facts, t)),
                         None)
    need_text, need_from = _cudnn_need(facts, tf, release)
    have, need = _version(kit.cudnn_version if kit else None), _version(need_text)
    if kit is None or have is None or need is None:
        return None
    return Fit("cuDNN", f"cuDNN {need.major}.{need.minor} or a later {need.major}.x", need_from,
               kit.cudnn_version or "?", _cudnn_from(facts, kit),
               have.major == need.major and have.minor >= need.minor, toolkit=kit)


def _loaded_kit(facts: Facts) -> ToolkitFacts | None:
    """The cuDNN TensorFlow's log says it loaded (a toolkits entry of its own)."""
    return next((t for t in facts.toolkits if t.via == LOADED_BY_TF and t.cudnn_version), None)


def _cudnn_from(facts: Facts, kit: ToolkitFacts) -> str:
    if kit.via == "claimed":
        return "the ticket says"
    if kit.via == LOADED_BY_TF:
        return _from(facts, "toolkits.loaded_cudnn", "TensorFlow's log")
    return f"with the toolkit at {kit.path}" if kit.path else _from(facts, "toolkits", kit.via)


def _cudnn_need(facts: Facts, tf: TensorFlowFacts,
                release: compat.TfRelease | None) -> tuple[str | None, str]:
    """The cuDNN the build was compiled with and where that is from. Build info names only the
    major ("8"): the release's tested configuration then gives the minor."""
    if release and release.cudnn and tf.cudnn_version == release.cudnn.split(".")[0]:
        return release.cudnn, f"tested build configuration of TensorFlow {release.version}"
    return tf.cudnn_version, _need_from(facts, "tensorflow.cudnn_version")


def ptxas(facts: Facts) -> Fit | None:
    """The ptxas XLA runs (`ptxas --version` on a live run) against the build's CUDA major (another
    major may reject the GPU's architecture or emit code the driver cannot load) and the driver's
    CUDA version: XLA's nvptx_compiler.cc disables parallel compilation when the driver is older
    ("The NVIDIA driver's CUDA version is 12.4 which is older than the ptxas CUDA version
    (12.5.40)")."""
    x, tf = facts.xla, gpu_build(facts)
    have = _version(x.ptxas_version if x else None)
    built = _version(tf.cuda_version if tf else None)
    if x is None or have is None or built is None:
        return None
    drv = _version(facts.driver.cuda_driver_version)
    newer = drv is not None and have.release[:2] > drv.release[:2]
    need = f"ptxas of CUDA {built.major}.x" + (
        f", no newer than the driver's CUDA {facts.driver.cuda_driver_version}" if drv else "")
    return Fit("ptxas", need, _need_from(facts, "tensorflow.cuda_version"), x.ptxas_version or "?",
               _from(facts, "xla.ptxas_version", x.ptxas or "XLA's search"),
               have.major == built.major and not newer)


def python(facts: Facts) -> Fit | None:
    """TensorFlow wheels exist only for the Python versions of its tested build configurations."""
    release = release_of(facts)
    if release is not None and not release_wheel(facts):
        return None  # another build (conda's, a source build): its Pythons are not the table's
    py = _version(facts.python.version)
    low, high = (_version(release.python_min), _version(release.python_max)) if release else (None, None)
    if release is None or py is None or low is None or high is None:
        return None
    here = Version(f"{py.major}.{py.minor}")
    return Fit("Python", f"Python {release.python_min}-{release.python_max}",
               f"tested build configuration of TensorFlow {release.version}", f"{py.major}.{py.minor}",
               _from(facts, "python.version", "the interpreter"), low <= here <= high)


def release_wheel(facts: Facts) -> bool:
    """Whether this TensorFlow can be its release's own wheel: not when it is shown (build info,
    the CUDA runtime its loader asks for) to use another CUDA than the release's tested build."""
    tf, release = facts.tensorflow, release_of(facts)
    table = release.wheel_cuda if release is not None else None
    if tf is None or table is None or not tf.cuda_version or "tensorflow.cuda_version" in facts.assumed:
        return True
    return compat.same_cuda_build(tf.cuda_version, table)


def kernels(tf: TensorFlowFacts, cc: str | None) -> str:
    """What this TensorFlow has for a GPU of compute capability `cc`: "sass", "ptx" (PTX the driver
    JIT-compiles), "ptx-fails" (PTX that does not compile for it) or "none". TF's rule
    (gpu_device.cc GetValidDeviceIds): SASS of the same major and a minor <= the device's fits,
    otherwise PTX of an older major is JIT-compiled. A GPU or wheel that does not say counts as sass."""
    built = tf.compute_capabilities
    if not cc or not _CC.fullmatch(cc):
        return "sass"
    if not built:  # a build known by its CUDA only: one older than the GPU holds PTX at best
        return "ptx" if tf.cuda_version and compat.cuda_predates(tf.cuda_version, cc) else "sass"
    kind = compat.has_kernels_for(built, cc)
    if kind == "ptx" and not compat.ptx_jits_on(tf.version, built, cc):
        return "ptx-fails"
    return kind


def _built_for(facts: Facts) -> TensorFlowFacts | None:
    """This TensorFlow, when the architectures it was built for are known: from its build info, or
    from the release table for a release wheel (not a source build, nightly or NVIDIA's +nv, which
    the table does not describe)."""
    tf = gpu_build(facts)
    if tf is None or not (tf.compute_capabilities or shown_cuda(facts)):
        return None
    v = _version(tf.version)
    if "tensorflow.compute_capabilities" in facts.assumed and (
            v is None or v.is_devrelease or v.is_prerelease or v.local):
        return None
    return tf


_KERNEL_WORDS = {"sass": "", "ptx": " (PTX, JIT-compiled)", "ptx-fails": " (its PTX does not compile for it)",
                 "none": " (no kernels)"}


def shown_cuda(facts: Facts) -> str | None:
    """The CUDA this TensorFlow is shown (not assumed) to be built with."""
    tf = facts.tensorflow
    if tf is None or not tf.cuda_version or "tensorflow.cuda_version" in facts.assumed:
        return None
    return tf.cuda_version


def _gpu_fit(facts: Facts, tf: TensorFlowFacts, element: str, cc: str, what: str, where: str) -> Fit:
    if tf.compute_capabilities:
        need, need_from = "compute capability in " + ", ".join(tf.compute_capabilities), _need_from(
            facts, "tensorflow.compute_capabilities")
    else:  # known by its CUDA only
        first = compat.cuda_predates(tf.cuda_version or "", cc) if _CC.fullmatch(cc) else None
        need = f"a build for CUDA {first} or newer" if first else f"a build for CUDA {tf.cuda_version}"
        need_from = _need_from(facts, "tensorflow.cuda_version")
    if not _CC.fullmatch(cc):  # a document's text, not a compute capability: nothing to judge
        return Fit(element, need, need_from, cc + what, where, None)
    kind = kernels(tf, cc)
    return Fit(element, need, need_from, f"{cc}{what}{_KERNEL_WORDS[kind]}",
               where, kind in ("sass", "ptx"), kernels=kind, compute_capability=cc)


def gpu(facts: Facts, g: GpuFacts) -> Fit | None:
    """One GPU's compute capability against the architectures TensorFlow was built for."""
    tf = _built_for(facts)
    if tf is None or not g.compute_capability:
        return None
    where = _from(facts, "driver.gpus", "NVML")
    if "driver.gpus.compute_capability" in facts.assumed:
        where += "; compute capability from the model's name"
    return _gpu_fit(facts, tf, f"GPU {g.index}", g.compute_capability, "", where)


def loaded_cudnn(facts: Facts) -> tuple[str, str] | None:
    """The cuDNN version that loads and where that is from: the library the probes resolved, or
    the one TensorFlow's log says it loaded."""
    lib = facts.library("cudnn")
    if lib is not None and lib.version:
        return lib.version, lib.path or "the cuDNN library"
    kit = _loaded_kit(facts)
    return (kit.cudnn_version, _cudnn_from(facts, kit)) if kit and kit.cudnn_version else None


def cudnn_on_gpus(facts: Facts, gpus: tuple[GpuFacts, ...]) -> Fit | None:
    """The loaded cuDNN against GPUs of one model: each cuDNN release supports a span of compute
    capabilities (its support matrix, compat_tables/cudnn.toml): 9.17 drops those below 7.5, an
    old release predates new architectures."""
    loaded, g = loaded_cudnn(facts), gpus[0]
    release = compat.cudnn_release(loaded[0]) if loaded else None
    cc = g.compute_capability
    if loaded is None or release is None or not cc or not _CC.fullmatch(cc):
        return None
    sure = "" if release.verified else ", by the nearest older row of the support matrix"
    return Fit(f"cuDNN on {gpu_label(gpus)}", f"a cuDNN that supports compute capability {cc} ({g.name})",
               _from(facts, "driver.gpus", "NVML"),
               f"{loaded[0]} (supports {release.min_cc} to {release.max_cc or 'newer'}{sure})", loaded[1],
               compat.cudnn_span(release, cc) is None, compute_capability=cc)


def named_gpu(facts: Facts) -> Fit | None:
    """Without a GPU list (a ticket with no nvidia-smi): the GPU the user names, its compute
    capability from the model or series tables (compat.compute_capability_of), against the build."""
    tf = _built_for(facts)
    hit = compat.compute_capability_of(facts.intent.gpu) if facts.intent.gpu else None
    if facts.known("driver.gpus") or tf is None or hit is None:
        return None
    cc, series = hit
    return _gpu_fit(facts, tf, "GPU (named)", cc, f", {facts.intent.gpu} ({series})",
                    _from(facts, "intent.gpu", "the ticket"))


TENSORRT_WHEELS = ("tensorrt", "tensorrt-libs", "tensorrt-cu12", "tensorrt-cu12-libs", "tensorrt-cu11",
                   "tensorrt-cu11-libs", "tensorrt-cu13", "tensorrt-cu13-libs", "nvidia-tensorrt")
"""pip's TensorRT wheels (NVIDIA's: the metapackage, its per-CUDA libs, the old nvidia-tensorrt)."""
_TRT_SONAME = re.compile(r"libnvinfer\.so\.(?P<v>\d+(?:\.\d+)*)")
_TRT_VERSION = re.compile(r"\d+(?:\.\d+)*")


def _trt_parts(text: str, soname_only: bool) -> tuple[int, ...] | None:
    """A TensorRT version's numbers: a soname's (libnvinfer.so.8.6.1 -> 8, 6, 1), a version's
    ("7.2.3.4"); the version a TensorFlow was linked with counts by its major (libnvinfer.so.7)."""
    hit = _TRT_SONAME.fullmatch(text)
    if hit:
        return tuple(int(p) for p in hit.group("v").split("."))
    hit = _TRT_VERSION.match(text)
    if hit is None:
        return None
    parts = tuple(int(p) for p in hit.group(0).split("."))
    return parts[:1] if soname_only else parts


def tensorrt(facts: Facts) -> Fit | None:
    """TF-TRT: the TensorRT this TensorFlow loads against the one installed.

    TensorFlow dlopens libnvinfer by a soname (the release table: libnvinfer.so.7 for 2.4-2.12;
    the 2.16 log of tensorflow#64809: libnvinfer.so.8.6.1, the whole version): its DSO loader's
    own line names it, else the version it was linked with (by its major), else the release
    table's. What is installed: TensorRT's package or API, the loader's cache, a file the user
    names, else pip's TensorRT wheels. A soname wants its numbers exactly; an installed release
    that gives fewer of them cannot be judged."""
    tf, trt = facts.tensorflow, facts.tensorrt or TensorRtFacts()
    if tf is not None and tf.is_cuda_build is False:
        return None
    need, need_from = trt.wanted, _from(facts, "tensorrt.wanted", "TensorFlow")
    release = release_of(facts)
    if need is None and release is not None and gpu_build(facts) is not None:
        need = release.sonames.get("nvinfer")
        need_from = f"tested build configuration of TensorFlow {release.version}"
    have, have_from = trt.installed, _from(facts, "tensorrt.installed", "TensorRT")
    if have is None:
        packages = facts.python.packages
        wheel = next((w for w in TENSORRT_WHEELS if packages.get(w, "unknown") != "unknown"), None)
        if wheel is not None:
            have, have_from = packages[wheel], f"{wheel} in {_from(facts, 'python.packages', 'pip')}"
    if need is None or have is None:
        return None
    wants = _trt_parts(need, soname_only=not need.startswith("libnvinfer"))
    got = _trt_parts(have, soname_only=False)
    if wants is None or got is None:
        return None
    fits: bool | None = got[:len(wants)] == wants
    if not fits and len(got) < len(wants) and wants[:len(got)] == got:
        fits = None  # (libnvinfer.so.8 installed, libnvinfer.so.8.6.1 wanted: which 8 is it?)
    soname = need if need.startswith("libnvinfer") else f"libnvinfer.so.{wants[0]}"
    return Fit("TensorRT (TF-TRT)", f"TensorRT {'.'.join(map(str, wants))} ({soname})", need_from,
               have if have.startswith("libnvinfer") else f"TensorRT {have}", have_from, fits)


def evaluate(facts: Facts) -> tuple[Fit, ...]:
    """Every element there is evidence for, judged: the driver, the toolkit, cuDNN, Python, each
    GPU (or the one a ticket names) and TF-TRT's TensorRT."""
    fits = [driver(facts), toolkit(facts), cudnn(facts), ptxas(facts), python(facts), named_gpu(facts),
            tensorrt(facts)]
    fits += [gpu(facts, g) for g in facts.driver.gpus]
    fits += [cudnn_on_gpus(facts, gpus) for gpus in same_model(facts.driver.gpus)]
    return tuple(f for f in fits if f is not None)


SLOW_START_S = 30.0
"""A start of GPU work longer than this is more than loading the CUDA libraries and creating the
device (seconds): the CUDA driver JIT-compiling PTX takes minutes (NVIDIA's "CUDA Pro Tip:
Understand Fat Binaries and JIT Caching")."""


def start_delay(facts: Facts) -> tuple[float, str] | None:
    """How long a start of GPU work took, and where that is from: the ticket's own timing, or a
    live run's device creation ("devices") or first recipe on a GPU, the longer of the two."""
    if facts.intent.start_seconds is not None:
        return facts.intent.start_seconds, _from(facts, "intent.start_seconds", "the ticket")
    smoke = facts.smoke
    if smoke is None or smoke.outcome == "ticket":
        return None
    first_gpu = next((r for r in smoke.recipes if (r.device or "").startswith("GPU")), None)
    timed = [r for r in (smoke.recipe("devices"), first_gpu) if r is not None and r.seconds is not None]
    if not timed:
        return None
    r = max(timed, key=lambda r: r.seconds or 0.0)
    assert r.seconds is not None
    return r.seconds, f"the smoke run's {r.name} recipe" + (f" on {r.device}" if r.device else "")


def same_model(gpus: tuple[GpuFacts, ...]) -> list[tuple[GpuFacts, ...]]:
    """GPUs grouped by model and compute capability: eight identical GPUs are judged once."""
    groups: dict[tuple[str | None, str | None], list[GpuFacts]] = {}
    for g in gpus:
        groups.setdefault((g.name, g.compute_capability), []).append(g)
    return [tuple(v) for v in groups.values()]


def gpu_label(gpus: tuple[GpuFacts, ...]) -> str:
    """"GPU 3" or "GPUs 0-7" / "GPUs 0, 2"."""
    idx = [g.index for g in gpus]
    if len(idx) == 1:
        return f"GPU {idx[0]}"
    run = idx == list(range(idx[0], idx[0] + len(idx)))
    return f"GPUs {idx[0]}-{idx[-1]}" if run else "GPUs " + ", ".join(map(str, idx))
