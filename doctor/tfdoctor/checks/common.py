"""Small pure helpers shared by the checks: version parsing, visible devices, commands."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from tfdoctor.facts import Facts, GpuFacts
from tfdoctor.findings import Command, Remediation

TF_INSTALL = "https://www.tensorflow.org/install/pip"
TF_SOURCE = "https://www.tensorflow.org/install/source#gpu"
CUDA_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
CUDA_ENV = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars"


def version(text: str | None) -> Version | None:
    """A comparable version, or None for missing or unparsable text."""
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def major_minor(text: str | None) -> str | None:
    v = version(text)
    return f"{v.major}.{v.minor}" if v else None


def nvidia_wheel(name: str, facts: Facts) -> str:
    """The pip project of NVIDIA's wheel `name` for TensorFlow's CUDA: "nvidia-cudnn-cu12".

    The suffix is "-cu<major of tf.cuda_version>" ("-cu11" is what TF 2.14's [and-cuda] pins,
    "-cu12" every later release's: research/compat.md section 2); "-cu12" when TF's CUDA is
    unknown or older than 11. CUDA 13 is uncertain: some -cu13 projects are deprecated
    placeholders pointing to suffix-less ones (nvidia-cublas-cu13 -> nvidia-cublas) while
    nvidia-cudnn-cu13 and nvidia-nccl-cu13 are real, and no TF release uses CUDA 13 yet, so
    "-cu13" stands until one does and its pins say which names it chose.
    """
    tf = facts.tensorflow
    cuda = version(tf.cuda_version if tf else None)
    major = cuda.major if cuda and cuda.major >= 11 else 12
    return f"{name}-cu{major}"


def pip_install(facts: Facts, *requirements: str, extra: Iterable[str] = ()) -> Command:
    """`"<target python>" -m pip install ...`, quoted for a POSIX shell; never a bare pip."""
    return Command([facts.python.executable, "-m", "pip", "install", *extra, *requirements])


def pip_uninstall(facts: Facts, *names: str) -> Command:
    return Command([facts.python.executable, "-m", "pip", "uninstall", "-y", *names])


def parse_visible_devices(value: str, gpus: tuple[GpuFacts, ...]) -> tuple[list[int], str | None]:
    """GPU indices CUDA_VISIBLE_DEVICES exposes, and the first malformed entry if any.

    CUDA reads the list left to right and stops at the first entry that is not a valid index
    or UUID prefix; everything after it is hidden (CUDA C Programming Guide, env-vars). A MIG
    instance ("MIG-...") is visible but is not a whole GPU; it is reported as index -1.
    """
    if not value.strip():
        return [], None
    chosen: list[int] = []
    for raw in value.split(","):
        entry = raw.strip()
        if entry.lstrip("-").isdigit():
            idx = int(entry)
            if not 0 <= idx < len(gpus):
                break
            chosen.append(idx)
        elif entry.startswith("MIG-"):
            chosen.append(-1)
        elif entry.startswith("GPU-"):
            match = [g.index for g in gpus if g.uuid and g.uuid.startswith(entry)]
            if len(match) != 1:
                break
            chosen.append(match[0])
        else:
            return chosen, entry or "(empty)"
    return list(dict.fromkeys(chosen)), None


def visible_gpus(facts: Facts) -> tuple[GpuFacts, ...]:
    """The GPUs CUDA_VISIBLE_DEVICES leaves visible (all NVML GPUs when it is unset)."""
    gpus = facts.driver.gpus
    value = facts.env.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return gpus
    indices, _ = parse_visible_devices(value, gpus)
    return tuple(g for g in gpus if g.index in indices)


def matching_tf(facts: Facts) -> tuple[str, Remediation | None]:
    """The TensorFlow that fits this driver, these GPUs and this Python (from the tables), as a
    one-line description and the install fix; the CPU build when no GPU build fits."""
    from tfdoctor import compat

    system = "windows" if (facts.platform.system or "").lower() == "windows" else "linux"
    ccs = tuple(g.compute_capability for g in facts.driver.gpus if g.compute_capability)
    best = compat.best_tf_for(facts.python.version, facts.driver.driver_version, ccs, system)
    current = [d.name for d in facts.tensorflow.distributions] if facts.tensorflow else []
    remove = [pip_uninstall(facts, *current)] if current else []
    if not facts.driver.gpus and not facts.driver.driver_version:
        # no NVIDIA GPU here: the CPU build of the newest release for this Python
        cpu = compat.best_tf_for(facts.python.version, None, (), system)
        if cpu is None:
            return (f"no TensorFlow release supports Python {facts.python.version}; use another "
                    "Python", None)
        return f"TensorFlow {cpu}, CPU build (no NVIDIA GPU here)", Remediation(
            "install-matching-tensorflow", (*remove, pip_install(facts, f"tensorflow-cpu=={cpu}.*")))
    if best is None:
        cmd = pip_install(facts, f"tensorflow-cpu=={compat.newest_tf()}.*")
        return "no TensorFlow GPU build fits; the CPU build does", Remediation(
            "install-matching-tensorflow", (*remove, cmd))
    # [and-cuda] came with 2.14, but 2.14's pins tensorrt 8.5.3.1 (no Python 3.11 wheel) and
    # 2.15.0's too; 2.15.0.post1 dropped it (tensorflow#61986, #62520). Older: CUDA by hand.
    if Version(best) >= Version("2.16"):
        requirement = f"tensorflow[and-cuda]=={best}.*"
    elif best == "2.15":
        requirement = "tensorflow[and-cuda]==2.15.0.post1"
    else:
        requirement = f"tensorflow=={best}.*"
    release = compat.tf_release(best)
    by_hand = (f", with CUDA {release.cuda} and cuDNN {release.cudnn} installed by hand (its "
               "[and-cuda] extra does not install here)") if release and "and-cuda" not in requirement else ""
    return f"TensorFlow {best} fits this driver, GPU and Python{by_hand}", Remediation(
        "install-matching-tensorflow", (*remove, pip_install(facts, requirement)))


def cudnn_requirement(facts: Facts, spec: str) -> str | None:
    """The nvidia-cudnn wheel requirement `spec` ("<10.0,>=9.3.0.75"), capped below the first
    cuDNN that dropped one of this machine's GPUs: an open range resolves to the newest wheel,
    which no longer runs on Pascal or Volta (cuDNN support matrices, compat_tables/cudnn.toml)."""
    from tfdoctor import compat

    caps = [compat.newest_cudnn_for(g.compute_capability)
            for g in facts.driver.gpus if g.compute_capability]
    known = sorted((v for v in caps if v), key=Version)
    cap = known[0] if known else None
    if cap is not None:
        nxt = Version(cap)
        upper = f"<{nxt.major}.{nxt.minor + 1}"
        last = [f"{nxt.major}.{nxt.minor}.{patch}" for patch in range(100)]
        if not any(SpecifierSet(",".join(p for p in (spec, upper) if p)).filter(last)):
            return None  # nothing satisfies both: no cuDNN wheel TF accepts runs this GPU
        spec = ",".join(p for p in (spec, upper) if p)
    return nvidia_wheel("nvidia-cudnn", facts) + spec
