"""Advice that fits the TensorFlow release in hand: how to get its CUDA libraries and which driver
it needs, from compat_tables/ (never a blanket `pip install 'tensorflow[and-cuda]'`, which exists
only from 2.14 and would replace an older TensorFlow by the newest release).

The catalogue's hints name these as placeholders (docs/knowledge.md); `fill_hint` fills them in.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from tfdoctor import compat
from tfdoctor.checks.common import nvidia_wheel, pip_install
from tfdoctor.facts import Facts

PLACEHOLDERS = ("{nvcc_wheel}", "{cuda_libraries}", "{driver_for_tf}", "{tf_keras}")


def _release(facts: Facts) -> tuple[Version, compat.TfRelease] | None:
    tf = facts.tensorflow
    if tf is None or not tf.version:
        return None
    try:
        version = Version(tf.version)
    except InvalidVersion:
        return None
    row = compat.tf_release(tf.version)
    return (version, row) if row else None


def _native_windows(facts: Facts) -> bool:
    return (facts.platform.system or "").lower() == "windows" and not facts.platform.is_wsl


def and_cuda_requirement(version: Version) -> str:
    """The [and-cuda] requirement that keeps this release: 2.15.0 pinned a tensorrt with no wheel
    for Python 3.11+, which 2.15.0.post1 dropped (tensorflow/tensorflow#61986, #62520)."""
    if (version.major, version.minor) == (2, 15):
        return "tensorflow[and-cuda]==2.15.0.post1"
    return f"tensorflow[and-cuda]=={version.major}.{version.minor}.*"


def cuda_libraries(facts: Facts) -> str:
    """How this TensorFlow gets the CUDA libraries it loads (a clause: it starts in lower case)."""
    hit = _release(facts)
    if hit is None:
        return ("install the CUDA libraries of your TensorFlow release: from 2.14 on Linux, pip install "
                "'tensorflow[and-cuda]==<your version>'; before, the CUDA and cuDNN of the release's "
                "tested build configuration (tensorflow.org/install/source#gpu)")
    version, row = hit
    minor = f"{version.major}.{version.minor}"
    by_hand = (f"install CUDA {row.cuda} and cuDNN {row.cudnn} (TensorFlow {minor}'s tested build "
               "configuration), e.g. conda install -c conda-forge "
               f"cudatoolkit={row.cuda} cudnn={row.cudnn}, and put their lib directories on "
               "LD_LIBRARY_PATH")
    if _native_windows(facts):
        if row.windows_gpu is False or version >= Version("2.11"):
            return (f"TensorFlow {minor} has no GPU build for native Windows: use WSL2 with "
                    f"{and_cuda_requirement(version)}, or TensorFlow 2.10 with CUDA 11.2 and cuDNN 8.1")
        return (f"install CUDA {row.cuda} and cuDNN {row.cudnn} (TensorFlow {minor}'s tested build "
                "configuration) and put their bin directories on PATH")
    if row.and_cuda:
        return (f"pip install '{and_cuda_requirement(version)}' (TensorFlow {minor}'s own pins of the "
                "NVIDIA wheels; an unpinned [and-cuda] would replace it by the newest release)")
    return (f"{by_hand} (TensorFlow's [and-cuda] extra starts at 2.14: installing it would replace "
            f"{minor} by a newer release)")


def driver_for_tf(facts: Facts) -> str:
    """The driver this TensorFlow's CUDA needs."""
    hit = _release(facts)
    if hit is None:
        return ("a driver that supports the CUDA version TensorFlow was built with (its tested build "
                "configuration)")
    version, row = hit
    system = "windows" if _native_windows(facts) else "linux"
    need = compat.min_driver(row.wheel_cuda, system)
    if need is None or not (need.full or need.minor_compat):
        return f"a driver that supports CUDA {row.cuda} (TensorFlow {version.major}.{version.minor}'s build)"
    floor = need.minor_compat or need.full
    return (f"driver {floor} or newer (CUDA {row.cuda}, TensorFlow {version.major}.{version.minor}'s build"
            + (f"; {need.full} or newer for all of CUDA {row.cuda}'s features" if need.full and
               need.full != floor else "") + ")")


def install_tf_keras(facts: Facts, series: str) -> str:
    """`pip install tf-keras~=X.Y.0`, without dependencies when TensorFlow's distribution is not
    literally `tensorflow`.

    tf-keras's only Requires-Dist is `tensorflow>=X.Y,<X.Y+1` (tf_keras 2.21.0 METADATA), while
    tensorflow-cpu, tensorflow-intel, tensorflow-macos, tf-nightly... provide the same import
    package under another name: pip would install the full `tensorflow` beside them, a second
    distribution whose files overwrite the installed one's (issue 12).
    """
    tf = facts.tensorflow
    names = {d.name for d in tf.distributions} if tf else set()
    extra = ("--no-deps",) if names and "tensorflow" not in names else ()
    return pip_install(facts, f"tf-keras~={series}.0", extra=extra)


def tf_keras(facts: Facts) -> str:
    """The tf-keras of this TensorFlow's series (Keras 2 beside TensorFlow 2.16 and later), or the
    rule when the release is not known."""
    hit = _release(facts)
    if hit is None or hit[0] < Version("2.16"):
        return "pip install 'tf-keras~=<TensorFlow's major.minor>.0'"
    return install_tf_keras(facts, f"{hit[0].major}.{hit[0].minor}")


def fill_hint(hint: str, facts: Facts) -> str:
    """A catalogue hint with its placeholders filled for this TensorFlow release and platform."""
    if "{nvcc_wheel}" in hint:
        hint = hint.replace("{nvcc_wheel}", nvidia_wheel("nvidia-cuda-nvcc", facts))
    if "{cuda_libraries}" in hint:
        hint = hint.replace("{cuda_libraries}", cuda_libraries(facts))
    if "{driver_for_tf}" in hint:
        hint = hint.replace("{driver_for_tf}", driver_for_tf(facts))
    if "{tf_keras}" in hint:
        hint = hint.replace("{tf_keras}", tf_keras(facts))
    return hint
