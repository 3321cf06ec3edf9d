"""The installed TensorFlow: one distribution, a GPU build, a supported Python and platform."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from tfdoctor import compat, stack
from tfdoctor.checks.advice import and_cuda_requirement
from tfdoctor.checks.advice import cuda_libraries as cuda_libraries_advice
from tfdoctor.checks.common import TF_INSTALL, matching_tf, pip_install, pip_uninstall, version
from tfdoctor.checks.driver import wants_gpu
from tfdoctor.facts import Facts
from tfdoctor.findings import Finding, Remediation, Severity
from tfdoctor.probes._target_child import TF_DISTRIBUTIONS
from tfdoctor.registry import CheckConfig, CouldNotCheck, NotApplicable, check

CPU_ONLY_DISTS = {"tensorflow-cpu", "tensorflow-cpu-aws", "tf-nightly-cpu", "tensorflow-intel",
                  "intel-tensorflow", "tensorflow-macos"}


def wants_gpu_signs(facts: Facts) -> bool:
    """Without a GPU list (a ticket): the user meant to use a GPU (a driver or a GPU device
    seen anywhere: nvidia-smi's version, TensorFlow's log, CUDA libraries it loaded)."""
    d = facts.driver
    return bool(d.driver_version or d.device_nodes or facts.libraries or facts.cuda_driver.library
                or (facts.smoke and any(dv.device_type == "GPU" for dv in facts.smoke.devices))
                or facts.intent.gpu)


def _target_tf(facts: Facts) -> str:
    """The TensorFlow release to install: this one when the tables know it, else the newest."""
    tf = facts.tensorflow
    known = tf and tf.version and compat.tf_release(tf.version)
    return tf.version if (tf and tf.version and known) else f"{compat.newest_tf()}.*"


@check("tf-installed", "TensorFlow is installed once", "tensorflow",
       emits=("tf-not-installed", "tf-multiple-distributions", "tf-unknown-version"),
       reads=("tensorflow",))
def tf_installed(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Exactly one distribution provides the `tensorflow` package, of a release the tables know."""
    tf = facts.tensorflow
    if facts.python.error:
        return
    dists_known = facts.known("tensorflow.distributions")
    if tf is None or (not tf.distributions and dists_known and not tf.version):
        fits, fix = matching_tf(facts)
        other = facts.env.get("VIRTUAL_ENV") or facts.env.get("CONDA_PREFIX")
        here = facts.python.prefix
        hint = f"Install it: {fits}."
        if other and here and os.path.realpath(other) != os.path.realpath(here):
            # tfdoctor's own venv was diagnosed while the user's env is active.
            hint = (f"The active environment is {other}: to diagnose it, run "
                    f"tfdoctor --python {shlex.quote(os.path.join(other, 'bin', 'python'))}. "
                    + hint)
        yield Finding("tf-not-installed", Severity.ERROR,
                      f"TensorFlow is not installed in {facts.python.executable}.",
                      {"python.executable": facts.python.executable},
                      hint=hint, remediation=fix, links=(TF_INSTALL,))
        return
    # On Windows (2.12-2.19) and aarch64, `tensorflow` is a shim that requires tensorflow-intel
    # or tensorflow-cpu-aws: a distribution that TF itself requires is not a conflict.
    names = [d.name for d in tf.distributions if d.name not in tf.requirements]
    if not dists_known and len(names) < 2:
        names = []  # a partial listing cannot show that there is only one
    if len(names) > 1:
        # Keep the GPU build on a GPU machine, else the one whose files are on disk now.
        gpu = bool(facts.driver.gpus or facts.driver.device_nodes)
        keep = "tensorflow" if gpu and "tensorflow" in names else (
            tf.files_from if tf.files_from in names else names[0])
        kept = next(d for d in tf.distributions if d.name == keep)
        yield Finding(
            "tf-multiple-distributions", Severity.ERROR,
            f"{len(names)} TensorFlow distributions share one `tensorflow` package: "
            f"{', '.join(f'{d.name} {d.version}' for d in tf.distributions)}.",
            {"tensorflow.distributions": ", ".join(names), "keep": keep},
            hint=f"They overwrite each other's files; keep {keep}. Remove the others, then "
                 "reinstall it so its files are whole.",
            remediation=Remediation("remove-conflicting-tf", (
                pip_uninstall(facts, *(n for n in names if n != keep)),
                pip_install(facts, f"{keep}=={kept.version}",
                            extra=("--force-reinstall", "--no-deps")))),
            links=(TF_INSTALL,))
    if tf.version and compat.tf_release(tf.version) is None:
        yield Finding("tf-unknown-version", Severity.INFO,
                      f"TensorFlow {tf.version} is unknown to this tfdoctor's tables "
                      f"(newest known: {compat.newest_tf()}); version-matrix checks are skipped.",
                      {"tensorflow.version": tf.version, "tables_checked": compat.tables_checked()})


REQUIRES_TENSORFLOW = {
    "tensorflow-text": "https://github.com/tensorflow/text/issues/1393",
    "tensorflow-decision-forests": "https://github.com/tensorflow/decision-forests/blob/main/configure/setup.py",
}
"""Companions whose wheels require the `tensorflow` distribution by its name, whatever build of it is
installed: tensorflow-text's setup.py ("tensorflow>=2.7.0, <2.8; platform_system != 'Darwin'",
tensorflow-macos on macOS; tensorflow/text#547 and #1393 say pip then installs tensorflow beside
tensorflow-cpu) and TensorFlow Decision Forests' ("tensorflow~=2.10.0"); read 2026-11-28."""
OTHER_BUILDS = tuple(n for n in TF_DISTRIBUTIONS
                     if n not in ("tensorflow", "tensorflow-intel", "tensorflow-cpu-aws"))
"""Builds of TensorFlow a user installs instead of `tensorflow` (tensorflow-intel and tensorflow-cpu-aws
are what `tensorflow` itself requires on Windows and Arm, not alternatives to it)."""


@check("companion-brings-tensorflow", "A companion does not bring a second TensorFlow build", "tensorflow",
       emits=("companion-brings-tensorflow",))
def companion_brings_tensorflow(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """A ticket's pip install commands put a companion that requires `tensorflow` by name beside
    another build of TensorFlow (tensorflow-cpu, tensorflow-gpu, tf-nightly): pip installs
    `tensorflow` too, whichever comes first, and the two overwrite each other's `tensorflow` package.
    Where the installed distributions are known, tf-installed judges them instead."""
    if facts.known("tensorflow.distributions") or (facts.platform.system or "").lower() == "darwin":
        raise NotApplicable("the installed distributions are known (tf-installed judges them), or macOS")
    asked: dict[str, str] = {canonicalize_name(req.name): text for text in facts.intent.pip_install
             if (req := _requirement(text)) is not None}
    builds = [n for n in OTHER_BUILDS if n in asked]
    companions = [n for n in REQUIRES_TENSORFLOW if n in asked]
    if not builds or not companions or "tensorflow" in asked:
        raise NotApplicable
    build, companion = builds[0], companions[0]
    yield Finding(
        "companion-brings-tensorflow", Severity.WARNING,
        f"{companion} requires the `tensorflow` distribution by name, so `pip install {asked[companion]}` "
        f"beside {asked[build]} installs tensorflow too: two distributions then share one `tensorflow` "
        "package and overwrite each other's files.",
        {"pip install": f"{asked[build]}, {asked[companion]}", "requires": f"{companion} -> tensorflow"},
        hint=f"After installing {companion}, remove the tensorflow it brought and install {asked[build]} "
             f"again (pip uninstall tensorflow; pip install --force-reinstall --no-deps '{asked[build]}'), "
             f"or install {companion} with --no-deps.",
        links=(REQUIRES_TENSORFLOW[companion],))


HOSTED_ONE_TF = "https://github.com/tensorflow/tensorflow/issues/90014"


@check("hosted-tf", "The TensorFlow on a hosted runtime is the one its GPU is set up for", "tensorflow",
       emits=("hosted-runtime-tf-replaced",))
def hosted_tf(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Colab's GPU runtime carries the CUDA and cuDNN of the TensorFlow it preinstalls: "Colab
    runtime is configured with just one GPU version. If you install a version of TF that is using a
    different GPU then you would only be able to use CPU" (a TensorFlow maintainer, tensorflow#90014);
    "TF with GPU support is already installed by default in GPU runtimes; there's no need to install
    your own" (the Colab team, googlecolab/colabtools#442). A ticket there that installs TensorFlow
    (or a tensorflow-text release, which brings its own), or names the release it runs, may run one
    the runtime is not set up for: a warning, since the preinstalled release may be that one. Not
    where the install brings its own CUDA libraries ([and-cuda]) or TensorFlow listed a GPU."""
    hosted = facts.platform.hosted
    if not hosted:
        raise NotApplicable
    asked = [(text, req) for text in facts.intent.pip_install if (req := _requirement(text)) is not None
             and canonicalize_name(req.name) in TF_DISTRIBUTIONS]
    installs = [text for text, _ in asked] + [
        f"{text} (which requires tensorflow {brought})" for text in facts.intent.pip_install
        if (brought := _tensorflow_brought(text)) is not None]
    tf = facts.tensorflow
    named = tf.version if tf is not None and tf.version else None
    gpu_listed = bool(facts.smoke and any(d.device_type == "GPU" for d in facts.smoke.devices))
    own_cuda = facts.intent.and_cuda or any("and-cuda" in req.extras for _, req in asked)
    if not (installs or named) or own_cuda or gpu_listed:
        raise NotApplicable("no TensorFlow of the ticket's own, one with its CUDA libraries, or a GPU listed")
    what = f"installs {installs[0]}" if installs else f"runs TensorFlow {named}"
    release = stack.release_of(facts)
    own = (f"; for {release.version}, pip install '{and_cuda_requirement(Version(release.version))}' brings "
           "its own CUDA libraries" if release is not None and stack.pip_era(release) else "")
    yield Finding(
        "hosted-runtime-tf-replaced", Severity.WARNING,
        f"On {hosted} the GPU runtime's CUDA and cuDNN are set up for the TensorFlow it preinstalls, and "
        f"the ticket {what}: unless that release was built for the same CUDA and cuDNN, TensorFlow "
        "finds no GPU and runs on the CPU.",
        {"platform.hosted": f"{hosted} ({facts.provenance.get('platform.hosted', 'the ticket')})",
         "tensorflow": ", ".join(installs) or named or ""},
        hint="Use the runtime's own TensorFlow (Runtime > Disconnect and delete runtime, then run without "
             f"installing TensorFlow){own}; or use a runtime version whose TensorFlow is the release the "
             "code needs.",
        links=(HOSTED_ONE_TF,))


@check("tf-gpu-build", "TensorFlow is a GPU build on a GPU machine", "tensorflow",
       emits=("tf-cpu-only-build", "tf-windows-native-gpu"), needs="tensorflow", reads=("tensorflow",))
def tf_gpu_build(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """A CPU-only wheel (tensorflow-cpu, ...) can never use the GPU this machine has."""
    tf = facts.tensorflow
    if tf is None or (not tf.distributions and not tf.version and tf.is_cuda_build is not False):
        return
    system = (facts.platform.system or "").lower()
    v = version(tf.version)
    if system == "windows" and v and v >= Version("2.11") and (wants_gpu(facts) or wants_gpu_signs(facts)):
        yield Finding(
            "tf-windows-native-gpu", Severity.ERROR,
            f"TensorFlow {tf.version} has no GPU support on native Windows (2.10 was the last).",
            {"platform.system": facts.platform.system or "", "tensorflow.version": tf.version or ""},
            hint="Use WSL2 with tensorflow[and-cuda], or on native Windows install "
                 "\"tensorflow<2.11\" with CUDA 11.2 and cuDNN 8.1.",
            remediation=Remediation("install-tf-native-windows", (
                pip_install(facts, "tensorflow<2.11"),)),
            links=("https://www.tensorflow.org/install/pip#windows-native",))
        return
    gpu_machine = bool(facts.driver.gpus) or bool(config.expect_gpus) or (
        not facts.known("driver.gpus") and wants_gpu_signs(facts))
    if tf.is_cuda_build is not False or not gpu_machine:
        if not gpu_machine:
            raise NotApplicable
        return
    dists = ", ".join(d.name for d in tf.distributions) or "tensorflow"
    cpu_dists = [d.name for d in tf.distributions if d.name in CPU_ONLY_DISTS]
    yield Finding(
        "tf-cpu-only-build", Severity.ERROR,
        f"The installed TensorFlow ({' '.join(filter(None, (dists, tf.version)))}) is a CPU-only build, "
        "but this machine "
        + (f"has {len(facts.driver.gpus)} NVIDIA GPU(s)." if facts.driver.gpus else
           f"is expected to use {config.expect_gpus} GPU(s) (--expect-gpus)." if config.expect_gpus
           else "is meant to use a GPU."),
        {"tensorflow.is_cuda_build": "false",
         **({"tensorflow.distributions": dists} if tf.distributions else {})},
        hint="Replace it with the GPU build and its pip CUDA libraries.",
        remediation=Remediation("install-tf-and-cuda", tuple(
            ([pip_uninstall(facts, *cpu_dists)] if cpu_dists else [])
            + [pip_install(facts, f"tensorflow[and-cuda]=={_target_tf(facts)}")])),
        links=(TF_INSTALL,))


@check("tf-windows-native", "The TensorFlow on native Windows can use a GPU", "tensorflow",
       emits=("tf-windows-native-cuda-too-new", "tf-windows-native-gpu-unverified"),
       reads=("platform.system",))
def tf_windows_native(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """A ticket from native Windows that wants the GPU but does not say which TensorFlow: what
    pip installs there (2.11 and newer) has no GPU support, the commonest cause by far. Where the
    TensorFlow is known, tf-gpu-build decides instead."""
    if (facts.platform.system or "").lower() != "windows" or facts.platform.is_wsl:
        raise NotApplicable
    if facts.known("tensorflow") or not (wants_gpu(facts) or wants_gpu_signs(facts)):
        raise NotApplicable("the TensorFlow version is known (tf-gpu-build judges it) or no GPU is wanted")
    # The last TensorFlow with native-Windows GPU support (2.10) needs CUDA 11.2: a CUDA 12 toolkit
    # fits none of them (tensorflow/tensorflow#60206).
    newer = [t for t in facts.toolkits if (v := version(t.version)) is not None and v.major >= 12]
    if newer:
        kit = newer[0]
        where = "the ticket says" if kit.via == "claimed" else f"found at {kit.path or kit.via}"
        yield Finding(
            "tf-windows-native-cuda-too-new", Severity.WARNING,
            f"On native Windows only TensorFlow 2.10 or older can use the GPU, and 2.10 needs CUDA 11.2 "
            f"and cuDNN 8.1: the CUDA {kit.version} here ({where}) fits no TensorFlow that can use the "
            "GPU on Windows.",
            {"platform.system": facts.platform.system or "", "toolkit": f"{kit.version} ({where})",
             "needs_cuda": "11.2", "tensorflow.version": "unknown"},
            hint="Use WSL2 with tensorflow[and-cuda], whose pip wheels bring their own CUDA 12 libraries "
                 "(the Windows toolkit can stay), or install CUDA 11.2 and cuDNN 8.1 beside it for "
                 "\"tensorflow<2.11\".",
            links=("https://www.tensorflow.org/install/source_windows#gpu",))
    yield Finding(
        "tf-windows-native-gpu-unverified", Severity.WARNING,
        "On native Windows only TensorFlow 2.10 or older can use the GPU, and the TensorFlow here is "
        "not shown: a current pip or conda install (2.11 and newer) runs on the CPU only.",
        {"platform.system": facts.platform.system or "", "tensorflow.version": "unknown"},
        hint="Check `python -c \"import tensorflow as tf; print(tf.__version__)\"`; for the GPU use "
             "WSL2 with tensorflow[and-cuda], or install \"tensorflow<2.11\" with CUDA 11.2 and cuDNN 8.1.",
        links=("https://www.tensorflow.org/install/pip#windows-native",))


AARCH64_NO_CUDA = "https://github.com/tensorflow/tensorflow/issues/121157"


@check("tf-aarch64-build", "The TensorFlow on an Arm machine is a CUDA build", "tensorflow",
       emits=("tf-aarch64-pypi-no-cuda",), reads=("platform.machine",))
def tf_aarch64_build(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """PyPI's TensorFlow for Linux aarch64 (Jetson, Grace) is built without CUDA
    (tensorflow/tensorflow#121157, checked 2026-11-24); NVIDIA's builds carry "+nv" in their
    version. A live run reads the build itself (tf-gpu-build); this is for a ticket that does not,
    whether it shows the TensorFlow installed or only its `pip install tensorflow`."""
    tf = facts.tensorflow
    machine = (facts.platform.machine or "").lower()
    if machine not in ("aarch64", "arm64") or (facts.platform.system or "Linux") != "Linux":
        raise NotApplicable
    installs = [text for text in facts.intent.pip_install if (req := _requirement(text)) is not None
                and req.name.lower() == "tensorflow"]
    if tf is None and not installs:
        raise CouldNotCheck("tensorflow")
    known_build = tf is not None and (tf.is_cuda_build is not None or "+nv" in (tf.version or ""))
    if known_build or not (wants_gpu(facts) or wants_gpu_signs(facts)):
        raise NotApplicable("the build is known (tf-gpu-build judges it), NVIDIA's, or no GPU is wanted")
    version = tf.version if tf and tf.version else None
    which = f"{version} that pip installs" if version else f"that `pip install {installs[0]}` brings"
    yield Finding(
        "tf-aarch64-pypi-no-cuda", Severity.WARNING,
        f"On Arm (aarch64) the TensorFlow {which} from PyPI is built without CUDA, so it cannot use "
        "the GPU; only NVIDIA's builds (versions with '+nv', JetPack wheels, NGC containers) can.",
        {"platform.machine": facts.platform.machine or "", "tensorflow.version": version or "unknown",
         **({"pip install": installs[0]} if installs else {})},
        hint="Check tf.test.is_built_with_cuda(); on Jetson install NVIDIA's TensorFlow for your JetPack, "
             "elsewhere use NVIDIA's TensorFlow container.",
        links=(AARCH64_NO_CUDA,))


TENSORFLOW_GPU_WHEELS = tuple(f"2.{minor}.{patch}" for minor, last in enumerate(
    (4, 4, 3, 4, 4, 3, 5, 4, 4, 3, 1, 0)) for patch in range(last + 1))
"""The final tensorflow-gpu releases with wheels, 2.0.0-2.11.0; after them only 2.12.0, an sdist
placeholder that fails on install on purpose (pypi.org/pypi/tensorflow-gpu/json, checked 2026-11-27)."""
TENSORFLOW_GPU_PLACEHOLDER = "2.12.0"


@check("tf-gpu-package", "No install asks for the removed tensorflow-gpu", "tensorflow",
       emits=("tf-log-tensorflow-gpu-removed",))
def tf_gpu_package(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """A pip install of tensorflow-gpu that resolves to its placeholder (unpinned, >= 2.12) or to
    no release at all (a version it never had, 2.12.0rc0, 2.13): the same cause as the
    placeholder's own error in pip's output."""
    wanted = [(text, req) for text in facts.intent.pip_install if (req := _requirement(text)) is not None
              and req.name.lower().replace("_", "-") == "tensorflow-gpu"]
    if not wanted:
        raise NotApplicable("no pip install of tensorflow-gpu was shown")
    for text, req in wanted:
        named = [Version(s.version) for s in req.specifier if _is_version(s.version)]
        prerelease = any(v.is_prerelease for v in named)
        best = max((Version(v) for v in (*TENSORFLOW_GPU_WHEELS, TENSORFLOW_GPU_PLACEHOLDER)
                    if req.specifier.contains(v, prereleases=prerelease)), default=None)
        if best is not None and str(best) != TENSORFLOW_GPU_PLACEHOLDER:
            continue
        series = next((f"{v.major}.{v.minor}" for v in named
                       if compat.tf_release(f"{v.major}.{v.minor}")), None)
        why = (f"it resolves to tensorflow-gpu {TENSORFLOW_GPU_PLACEHOLDER}, an empty placeholder that "
               "fails on install" if best is not None else
               f"no tensorflow-gpu release matches it: the package stopped at {TENSORFLOW_GPU_WHEELS[-1]}")
        yield Finding(
            "tf-log-tensorflow-gpu-removed", Severity.ERROR,
            f"pip is asked for {text}: {why}. tensorflow-gpu has been the same as tensorflow since 2.1 "
            "and was removed from PyPI.",
            {"pip install": text, "where": facts.provenance.get("intent.pip_install", "the ticket")},
            hint=(f"Install tensorflow instead: pip install 'tensorflow=={series}.*'" if series else
                  "Install tensorflow instead") + " (tensorflow[and-cuda] on Linux from 2.14), and change "
                 "the requirement or environment file that names tensorflow-gpu.",
            links=("https://pypi.org/project/tensorflow-gpu/",))


@check("tf-install-cuda-libs", "An install of TensorFlow on Linux brings its CUDA libraries", "tensorflow",
       emits=("tf-installed-without-cuda",), needs="tensorflow")
def tf_install_cuda_libs(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """From 2.14 TensorFlow's Linux wheel loads the CUDA libraries of the nvidia-* wheels its
    [and-cuda] extra pins (TensorFlow's pip guide); `pip install tensorflow` alone installs none,
    and TensorFlow then lists no GPU. Judged from a ticket's own install command where the
    libraries themselves are not shown (where they are, on a live run too, cuda-libraries judges
    them)."""
    if facts.known("libraries") or facts.libraries:
        raise NotApplicable("the libraries themselves are shown: cuda-libraries judges them")
    plain = [text for text in facts.intent.pip_install if (req := _requirement(text)) is not None
             and req.name.lower() == "tensorflow" and "and-cuda" not in req.extras]
    nvidia = [t for t in facts.intent.pip_install if t.lower().startswith("nvidia-")]
    release = stack.release_of(facts)
    linux = (facts.platform.system or "Linux") == "Linux" and facts.platform.machine in (None, "x86_64")
    if not plain or nvidia or facts.intent.and_cuda or release is None or not stack.pip_era(release) \
            or not linux:
        raise NotApplicable("no pip install of a Linux TensorFlow 2.14+ without [and-cuda] was shown")
    smoke = facts.smoke
    listed_none = bool(smoke and smoke.recipe("devices") and not any(
        d.device_type == "GPU" for d in smoke.devices))
    gpu = wants_gpu(facts) or bool(facts.intent.gpu)
    yield Finding(
        "tf-installed-without-cuda", Severity.ERROR if listed_none and gpu else Severity.WARNING,
        f"The ticket installs TensorFlow with pip install {plain[0]}, which brings none of the CUDA "
        f"libraries TensorFlow {release.version} loads on Linux (they come with tensorflow[and-cuda])"
        + (": TensorFlow then lists no GPU, as it did here." if listed_none else "."),
        {"pip install": ", ".join(facts.intent.pip_install),
         "where": facts.provenance.get("intent.pip_install", "the ticket")},
        hint=f"For TensorFlow's CUDA libraries, {cuda_libraries_advice(facts)}.",
        remediation=Remediation("install-tf-and-cuda", (
            pip_install(facts, and_cuda_requirement(Version(release.version))),)),
        links=(TF_INSTALL,))


def _tensorflow_brought(text: str) -> str | None:
    """The TensorFlow release a pinned tensorflow-text brings: its wheels require `tensorflow` of
    their own minor by name ("tensorflow>=2.15.0, <2.16", tensorflow/text's setup.py)."""
    req = _requirement(text)
    if req is None or canonicalize_name(req.name) != "tensorflow-text":
        return None
    pinned = [s.version for s in req.specifier if s.operator == "=="]
    if not pinned or not _is_version(pinned[0]):
        return None
    v = Version(pinned[0])
    return f"{v.major}.{v.minor}"


def _requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


@check("tf-python-version", "Python version supported by this TensorFlow", "tensorflow",
       emits=("tf-python-unsupported",), needs="tensorflow", reads=("tensorflow", "python.version"))
def tf_python_version(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """TF wheels exist only for the Python versions in the tested build configurations (stack.python)."""
    tf = facts.tensorflow
    fit = stack.python(facts)
    if tf is None or fit is None or fit.fits is not False:
        return
    yield Finding(
        "tf-python-unsupported", Severity.ERROR,
        f"TensorFlow {tf.version} supports {fit.need}; this is Python {fit.have}.",
        {"python.version": facts.python.version or "", "tensorflow.version": tf.version or ""},
        hint="Make a venv with a supported Python and install TensorFlow there.",
        links=("https://www.tensorflow.org/install/source#gpu",))


AVX2_WHEELS = {
    "2.4.0": ("built with AVX2 by accident; 2.4.1 removed the restriction, a TensorFlow maintainer in "
              "thoth-station/adviser#1616, checked 2026-11-23",
              "https://github.com/tensorflow/tensorflow/issues/45744"),
}
"""Official wheels that need more than AVX, by TensorFlow version: (why, source)."""


@check("platform-support", "CPU and C library can run the wheel", "platform",
       emits=("cpu-missing-instructions", "glibc-too-old"), needs="tensorflow", reads=("tensorflow",))
def platform_support(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Official x86-64 wheels use AVX (since TF 1.6) and need the manylinux glibc floor."""
    tf = facts.tensorflow
    p = facts.platform
    if tf is None or (not tf.distributions and not tf.version):
        return
    x86 = p.machine in ("x86_64", "AMD64") and p.cpu_flags is not None
    if x86 and "avx" not in (p.cpu_flags or ()):
        yield Finding(
            "cpu-missing-instructions", Severity.ERROR,
            "This CPU lacks AVX, which the official TensorFlow wheels require: import dies with "
            "an illegal instruction.", {"platform.cpu_flags": " ".join(p.cpu_flags or ())},
            hint="Use a CPU with AVX, or build TensorFlow from source for this CPU.",
            links=("https://www.tensorflow.org/install/pip#hardware_requirements",))
    elif x86 and "avx2" not in (p.cpu_flags or ()) and tf.version in AVX2_WHEELS and not (
            {d.name for d in tf.distributions} & {"tensorflow-cpu-aws", "intel-tensorflow"}):
        why, link = AVX2_WHEELS[tf.version]
        yield Finding(
            "cpu-missing-instructions", Severity.ERROR,
            f"This CPU has AVX but not AVX2, which TensorFlow {tf.version}'s official wheels use ({why}): "
            "import dies with an illegal instruction.",
            {"platform.cpu_flags": " ".join(p.cpu_flags or ()), "tensorflow.version": tf.version},
            hint="pip install 'tensorflow==2.4.1' (or any later release), which needs only AVX.",
            links=(link,))
    release = compat.tf_release(tf.version) if tf.version else None
    glibc_min = release.glibc_min if release else None
    have, need = version(p.glibc), version(glibc_min)
    if have and need and have < need:
        yield Finding("glibc-too-old", Severity.ERROR,
                      f"TensorFlow {tf.version} wheels need glibc {glibc_min}; this system "
                      f"has {p.glibc}.", {"platform.glibc": p.glibc or ""},
                      hint="Use a newer distribution or a container image with a newer glibc.")
