"""What each recognised TensorFlow log cause means and what to do about it (data for the checks)."""

from __future__ import annotations

from dataclasses import dataclass

from tfdoctor.findings import Severity

TF_PIP = "https://www.tensorflow.org/install/pip"
XLA_GPU = "https://openxla.org/xla/flags_guidance"


NVCC_WHEEL = "{nvcc_wheel}"
"""Stands in a hint for the nvidia-cuda-nvcc wheel of TF's CUDA major (checks fill it in)."""


@dataclass(frozen=True, slots=True)
class CauseInfo:
    """One log cause: the finding it becomes, how bad, what it means, what to do."""

    severity: Severity
    message: str
    hint: str
    link: str | None = None
    explains_no_gpu: bool = False
    """A reason TensorFlow registers no GPU at all (folded into smoke-no-gpu)."""
    min_tf: str | None = None
    """Only a cause from this TensorFlow release on (a code pattern that breaks there); the line
    alone says nothing when the TensorFlow version is unknown or older."""
    explains: tuple[str, ...] = ()
    """Causes this one is the reason for: in the same log they are reported after it."""


CAUSES: dict[str, CauseInfo] = {
    "driver-library-missing": CauseInfo(
        Severity.ERROR,
        "TensorFlow could not load the NVIDIA driver library libcuda.so.1.",
        "Install the NVIDIA driver (it provides libcuda.so.1), or in a container run with the "
        "NVIDIA container toolkit (--gpus all).",
        TF_PIP,
        True,
    ),
    "cudart-not-loaded": CauseInfo(
        Severity.ERROR,
        "TensorFlow could not load the CUDA runtime (libcudart), so it uses no GPU: there is no "
        "CUDA, or only a CUDA of another major than this TensorFlow needs.",
        "From TensorFlow 2.14: pip install 'tensorflow[and-cuda]'. Before: install the CUDA and cuDNN "
        "of the release's tested build configuration. On a machine without a GPU this line is harmless.",
        TF_PIP,
        True,
    ),
    "driver-missing": CauseInfo(
        Severity.ERROR,
        "TensorFlow found no CUDA driver on this machine.",
        "Install the NVIDIA driver.",
        TF_PIP,
        True,
    ),
    "driver-not-running": CauseInfo(
        Severity.ERROR,
        "The NVIDIA kernel driver is not running (/proc/driver/nvidia/version missing).",
        "Load the driver (modprobe nvidia) or install it; reboot after an upgrade.",
        None,
        True,
    ),
    "cuda-compat-unsupported": CauseInfo(
        Severity.ERROR,
        "The libcuda that loads is a forward-compatibility one (cuda-compat, a newer CUDA over an older "
        "driver), which this GPU cannot use (only data-center GPUs can): CUDA does not initialise.",
        "Take the cuda-compat directory off the loader path (LD_LIBRARY_PATH, ld.so.conf.d) so the "
        "driver's own libcuda loads, or upgrade the driver to one that supports the CUDA in use.",
        "https://docs.nvidia.com/deploy/cuda-compatibility/",
        True,
    ),
    "driver-too-old": CauseInfo(
        Severity.ERROR,
        "The NVIDIA driver is too old for the CUDA runtime TensorFlow uses.",
        "Upgrade the driver to one that supports TensorFlow's CUDA version.",
        TF_PIP,
        True,
    ),
    "cuda-init-failed": CauseInfo(
        Severity.ERROR,
        "cuInit failed, so TensorFlow could not use any GPU.",
        "Check the driver installation and device permissions (/dev/nvidia*).",
        None,
        True,
    ),
    "library-not-loaded": CauseInfo(
        Severity.ERROR,
        "TensorFlow could not load a CUDA library it needs.",
        "Install TensorFlow with its CUDA wheels (pip install 'tensorflow[and-cuda]') or put the "
        "library's directory on LD_LIBRARY_PATH.",
        TF_PIP,
        True,
    ),
    "gpu-libraries-missing": CauseInfo(
        Severity.ERROR,
        "TensorFlow skipped every GPU because some GPU libraries could not be loaded.",
        "See the library named in the log lines above it; pip install 'tensorflow[and-cuda]'.",
        TF_PIP,
        True,
    ),
    "cudnn-version-mismatch": CauseInfo(
        Severity.ERROR,
        "The cuDNN loaded at run time is older than the one TensorFlow was built with.",
        "Install the cuDNN TensorFlow pins (pip install 'tensorflow[and-cuda]') and remove older "
        "cuDNN copies from LD_LIBRARY_PATH.",
        TF_PIP,
    ),
    "cc-not-in-build": CauseInfo(
        Severity.WARNING,
        "TensorFlow has no kernels built for this GPU's compute capability; "
        "they are JIT-compiled from PTX (slow start, may fail).",
        "Use a TensorFlow release built for this GPU generation.",
        TF_PIP,
    ),
    "gpu-below-minimum-cc": CauseInfo(
        Severity.ERROR,
        "TensorFlow ignored a GPU whose compute capability is below its minimum.",
        "Use an older TensorFlow that still supports this GPU, or a newer GPU.",
        TF_PIP,
    ),
    "no-kernel-image": CauseInfo(
        Severity.ERROR,
        "The GPU cannot run TensorFlow's kernels (no binary or PTX for its architecture).",
        "Use a TensorFlow release built for this GPU's compute capability.",
        TF_PIP,
    ),
    "ptx-too-new-for-driver": CauseInfo(
        Severity.ERROR,
        "The PTX was built by a newer CUDA than this driver supports "
        "(CUDA_ERROR_UNSUPPORTED_PTX_VERSION): the driver is too old for it.",
        "Upgrade the NVIDIA driver to one of the CUDA release that built the PTX (or newer).",
        "https://docs.nvidia.com/deploy/cuda-compatibility/",
    ),
    "ptx-invalid": CauseInfo(
        Severity.ERROR,
        "The driver could not JIT-compile TensorFlow's PTX (CUDA_ERROR_INVALID_PTX): usually a GPU "
        "newer than the wheel's binaries, where a driver upgrade does not help.",
        "Install a TensorFlow release built for this GPU's architecture (see its compute "
        "capabilities), rather than a newer driver.",
        TF_PIP,
    ),
    "ptxas-unsupported-arch": CauseInfo(
        Severity.ERROR,
        "The ptxas XLA runs is too old for this GPU's architecture.",
        "Use the ptxas of a CUDA release that supports this GPU (pip install {nvcc_wheel}), first "
        "on PATH.",
        XLA_GPU,
    ),
    "illegal-instruction": CauseInfo(
        Severity.ERROR,
        "TensorFlow died of an illegal instruction: this CPU lacks instructions (AVX/AVX2) the "
        "wheel was compiled for.",
        "Use a CPU with AVX, a TensorFlow built for this CPU (from source, or a community "
        "no-AVX wheel), or an older release.",
        "https://www.tensorflow.org/install/pip#hardware_requirements",
    ),
    "numpy2-abi": CauseInfo(
        Severity.ERROR,
        "NumPy 2 is installed, but this TensorFlow was built against NumPy 1 (TensorFlow < 2.18).",
        "pip install 'numpy<2', or upgrade to TensorFlow 2.18 or newer.",
        "https://numpy.org/devdocs/numpy_2_0_migration_guide.html",
    ),
    "numpy-too-new": CauseInfo(
        Severity.ERROR,
        "The installed NumPy is newer than this TensorFlow supports (removed NumPy aliases).",
        "Install the NumPy range TensorFlow pins (pip show tensorflow lists it).",
        None,
    ),
    "container-toolkit-missing": CauseInfo(
        Severity.ERROR,
        "Docker could not give the container a GPU: no NVIDIA runtime answers `--gpus` on this "
        "Docker daemon (the NVIDIA Container Toolkit is not installed or not configured for it; "
        "Docker installed as a snap cannot use it).",
        "On the host: install nvidia-container-toolkit, run `sudo nvidia-ctk runtime configure "
        "--runtime=docker` and restart Docker.",
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",
        True,
    ),
    "cuinit-symbol-not-found": CauseInfo(
        Severity.ERROR,
        "cuInit could not find a driver symbol (CUDA_ERROR_NOT_FOUND): under WSL2 this is a Windows "
        "driver 555 or newer with a container runtime that does not map its libnvdxgdmal.so.1 "
        "(Docker Desktop before 4.31, NVIDIA Container Toolkit before 1.14.4).",
        "Update Docker Desktop to 4.31 or newer (or nvidia-container-toolkit to 1.14.4 / 1.15 or "
        "newer), or go back to a Windows driver before 555.",
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/520",
        True,
    ),
    "multi-gpu-nan": CauseInfo(
        Severity.ERROR,
        "Training gives NaN only when several GPUs work together: the sign of broken peer-to-peer "
        "transfers between them (an IOMMU or PCIe ACS redirecting P2P traffic, NCCL's troubleshooting "
        "guide), not of the model.",
        "Look for DMAR / AMD-Vi faults in `sudo dmesg`; test with NCCL_P2P_DISABLE=1; if that cures it, "
        "disable ACS in the BIOS or put the IOMMU in pass-through (iommu=pt).",
        "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs",
    ),
    "numpy-symbolic-tensor": CauseInfo(
        Severity.ERROR,
        "NumPy 1.20 or newer under TensorFlow 2.4 or older: Keras layers fail with 'Cannot convert a "
        "symbolic Tensor to a numpy array'.",
        "pip install 'numpy<1.20' (TensorFlow 2.4 was built against numpy~=1.19.2), or upgrade TensorFlow.",
        "https://github.com/tensorflow/tensorflow/issues/47242",
    ),
    "dictwrapper-package-too-new": CauseInfo(
        Severity.ERROR,
        "A package TensorFlow's object tracking relies on is newer than this TensorFlow handles "
        "(wrapt 1.15 or newer: '__dict__ descriptor does not support _DictWrapper objects').",
        "pip install 'wrapt<1.15' (the cap TensorFlow added after tensorflow/tensorflow#59869), or the "
        "wrapt range pip show tensorflow lists.",
        "https://github.com/GrahamDumpleton/wrapt/issues/231",
    ),
    "tf-keras-not-installed": CauseInfo(
        Severity.ERROR,
        "Code that needs Keras 2 imports tf_keras, which is not installed (TensorFlow 2.16 and later "
        "ship Keras 3 as tf.keras; Keras 2 is the separate tf-keras package).",
        "pip install 'tf-keras~=<TF major.minor>.0' and set TF_USE_LEGACY_KERAS=1 if the code expects "
        "tf.keras to be Keras 2.",
        "https://keras.io/getting_started/#tensorflow--keras-2-backwards-compatibility",
    ),
    "xla-autotune-no-config": CauseInfo(
        Severity.ERROR,
        "XLA's autotuner found no cuDNN configuration for a fused convolution: the installed cuDNN "
        "cannot run the fusion this TensorFlow's XLA emits (seen with TF 2.21 and cuDNN 9.3 to 9.5).",
        "Upgrade cuDNN (pip install -U nvidia-cudnn-cu12; 9.24 fixed it for TF 2.21), or run without "
        "XLA for that model (jit_compile=False).",
        "https://github.com/aws/deep-learning-containers/pull/6417",
    ),
    "protobuf-getprototype-removed": CauseInfo(
        Severity.ERROR,
        "The installed protobuf (6.30 or newer) no longer has MessageFactory.GetPrototype, which this "
        "TensorFlow calls at import.",
        "pip install 'protobuf<6.30' (the 5.x line), or a TensorFlow release that supports protobuf 6.30+.",
        "https://github.com/tensorflow/tensorflow/issues/94030",
    ),
    "protobuf-descriptors": CauseInfo(
        Severity.ERROR,
        "The installed protobuf is newer than the generated code of this TensorFlow "
        "('Descriptors cannot be created directly').",
        "pip install 'protobuf<3.21' (TensorFlow <= 2.10) or the protobuf range TensorFlow pins; or "
        "set PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python (slow).",
        "https://protobuf.dev/news/2022-05-06/#python-updates",
    ),
    "keras3-incompatible": CauseInfo(
        Severity.ERROR,
        "Keras 3 is installed, but this code or TensorFlow expects Keras 2 (tf.keras).",
        "For TensorFlow >= 2.16: pip install tf-keras and set TF_USE_LEGACY_KERAS=1; for "
        "TensorFlow <= 2.15: pip install the keras of the same minor as TensorFlow.",
        "https://keras.io/getting_started/#tensorflow--keras-2-backwards-compatibility",
    ),
    "tf-hub-keras3": CauseInfo(
        Severity.ERROR,
        "The code builds a model from tensorflow_hub's KerasLayer, a Keras 2 layer, but from "
        "TensorFlow 2.16 tf.keras is Keras 3, which TF Hub does not support (tensorflow/hub#903).",
        "pip install tf-keras of TensorFlow's minor and export TF_USE_LEGACY_KERAS=1 before Python "
        "starts, or build the model with tf_keras instead of tf.keras.",
        "https://github.com/tensorflow/hub/issues/903",
        min_tf="2.16",
    ),
    "and-cuda-pin-unavailable": CauseInfo(
        Severity.ERROR,
        "pip cannot install a package that tensorflow[and-cuda] pins: it has no wheel for this Python "
        "version or platform, so the extra (and the GPU install) fails.",
        "Use a Python version that pinned package has wheels for, or a TensorFlow release whose "
        "[and-cuda] pins install on yours; for a tensorrt pin, NVIDIA's index may have it "
        "(--extra-index-url https://pypi.nvidia.com).",
        "https://github.com/tensorflow/tensorflow/issues/61986",
    ),
    "cpu-build-installed": CauseInfo(
        Severity.ERROR,
        "The TensorFlow installed is a CPU-only build (as the ticket says), so it cannot use the GPU.",
        "Replace it with a GPU build: pip install 'tensorflow[and-cuda]' (Linux, WSL2), or conda's "
        "CUDA build of tensorflow (a build string with 'cuda', not 'cpu').",
        TF_PIP,
        True,
    ),
    "no-matching-wheel": CauseInfo(
        Severity.ERROR,
        "pip found no TensorFlow wheel for this Python version or platform.",
        "Use a Python version the TensorFlow release supports (tested build configurations), "
        "64-bit, on a supported OS.",
        "https://www.tensorflow.org/install/source#gpu",
    ),
    "keras-tf-mismatch": CauseInfo(
        Severity.ERROR,
        "Keras and TensorFlow are of different releases (a keras newer than TensorFlow raises 'Another "
        "metric with the same name already exists' at import; a keras of TF 2.8 or older beside a newer "
        "TensorFlow misses keras_preprocessing).",
        "Install the keras of TensorFlow's own minor version (pip install 'keras~=<TF major.minor>.0').",
        "https://github.com/keras-team/keras/issues/15579",
    ),
    "tf-addon-mismatch": CauseInfo(
        Severity.ERROR,
        "A TensorFlow add-on (tensorflow-io, -text, -addons, -probability) was built for another "
        "TensorFlow release than the one installed.",
        "Install the add-on release made for this TensorFlow (each add-on's README has the "
        "version table), or the TensorFlow it was built for.",
        None,
    ),
    "keras-src-missing": CauseInfo(
        Severity.ERROR,
        "A package needs a newer Keras: keras.src exists from Keras 2.13 on.",
        "Upgrade keras (and TensorFlow with it), or install the release of the package that "
        "matches this Keras.",
        None,
    ),
    "ml-dtypes-mismatch": CauseInfo(
        Severity.ERROR,
        "The installed ml-dtypes is not the one this TensorFlow release expects.",
        "Install the ml-dtypes range TensorFlow pins (pip show tensorflow lists it).",
        None,
    ),
    "tf-internal-api-mismatch": CauseInfo(
        Severity.ERROR,
        "A package built for another TensorFlow release (keras, tensorflow-estimator, "
        "tensorflow-hub, tf-nightly companions) calls TensorFlow internals this release lacks.",
        "Install keras, tensorflow-estimator and the other tensorflow-* packages of the same "
        "release as TensorFlow.",
        None,
    ),
    "ptx-isa-too-old-for-gpu": CauseInfo(
        Severity.ERROR,
        "This TensorFlow's compiler cannot target the GPU's architecture: the GPU is newer than "
        "this TensorFlow release.",
        "Install a TensorFlow release built for this GPU generation (a newer release, or NVIDIA's "
        "TensorFlow container).",
        TF_PIP,
    ),
    "tensorrt-not-loaded": CauseInfo(
        Severity.ERROR,
        "A TF-TRT model ran, but TensorRT (libnvinfer) did not load, so TensorFlow aborted: TensorRT "
        "is missing, of another major than this TensorFlow wants, or one of its own libraries "
        "(libnvrtc, libcublas) is not on the loader path.",
        "Install the TensorRT this TensorFlow was built with and put its directory (and that of the "
        "libraries the dlerror names) on LD_LIBRARY_PATH, or run the model without TF-TRT.",
        "https://docs.nvidia.com/deeplearning/frameworks/tf-trt-user-guide/",
    ),
    "tensorflow-gpu-removed": CauseInfo(
        Severity.ERROR,
        "The tensorflow-gpu package is an empty placeholder that fails on install: it has been the "
        "same as tensorflow since 2.1, and was removed from PyPI after 2.12.",
        "Install tensorflow instead (tensorflow[and-cuda] on Linux from 2.14), and change the "
        "requirement or environment file that names tensorflow-gpu.",
        "https://pypi.org/project/tensorflow-gpu/",
    ),
    "windows-pagefile-too-small": CauseInfo(
        Severity.ERROR,
        "Windows could not load TensorFlow's or CUDA's DLLs because the paging file is too small "
        "(error 1455): the CUDA libraries reserve more virtual memory than the page file allows.",
        "Enlarge the paging file (System, Advanced system settings, Performance, Virtual memory; or "
        "let Windows manage it) on a drive with free space, and restart.",
        "https://learn.microsoft.com/windows/client-management/introduction-page-file",
    ),
    "directml-plugin-incompatible": CauseInfo(
        Severity.ERROR,
        "TensorFlow could not load the DirectML plugin (tfdml_plugin.dll, though the file is there): "
        "the plugin is built for tensorflow-cpu 2.10 and does not load into 2.11 or newer.",
        "pip install tensorflow-cpu==2.10.* with the plugin; or, for an NVIDIA GPU, use WSL2 with "
        "tensorflow[and-cuda].",
        "https://github.com/microsoft/tensorflow-directml-plugin",
    ),
    "ptxas-fallback-to-driver": CauseInfo(
        Severity.WARNING,
        "XLA found no usable ptxas (none on PATH, or one older than the CUDA TensorFlow was built "
        "with) and leaves PTX to the driver's JIT: slower compiles, and failures where the driver "
        "cannot compile that PTX.",
        "Install the ptxas of TensorFlow's CUDA major or newer ({nvcc_wheel}, or the CUDA toolkit) and "
        "put its bin directory first on PATH.",
        XLA_GPU,
    ),
    "tfjs-binding-not-loaded": CauseInfo(
        Severity.ERROR,
        "tfjs-node's native addon (tfjs_binding.node) did not load: the libtensorflow it links "
        "(tensorflow.dll on Windows, libtensorflow.so elsewhere) is not beside it or not found.",
        "On Windows copy node_modules/@tensorflow/tfjs-node(-gpu)/deps/lib/tensorflow.dll into its "
        "lib/napi-vN directory; elsewhere run npm rebuild @tensorflow/tfjs-node-gpu.",
        "https://github.com/tensorflow/tfjs/tree/master/tfjs-node",
    ),
    "binding-native-mismatch": CauseInfo(
        Severity.ERROR,
        "The TensorFlow binding calls a C API function that its native libtensorflow lacks: the "
        "native package is of another release than the binding was built for.",
        "Install the native package release the binding names (for TensorFlow.NET, the "
        "SciSharp.TensorFlow.Redist version its release notes give), or the binding that matches it.",
        "https://github.com/SciSharp/TensorFlow.NET",
    ),
    "python-externally-managed": CauseInfo(
        Severity.ERROR,
        "pip was run on the distribution's own Python, which is externally managed (PEP 668) and "
        "ships without pip: nothing was installed.",
        "Create a virtual environment and install there: sudo apt install python3-venv; python3 -m "
        "venv ~/tf; source ~/tf/bin/activate; pip install 'tensorflow[and-cuda]'.",
        "https://peps.python.org/pep-0668/",
    ),
    "xla-gpu-compiler-missing": CauseInfo(
        Severity.ERROR,
        "This binary has no XLA GPU compiler linked in (TensorFlow Serving's GPU image is built "
        "without one): a model exported with XLA (jit_compile) cannot run on its GPU.",
        "Export the model without jit_compile (XLA), or serve it with a build that links XLA's GPU "
        "backend.",
        XLA_GPU,
    ),
    "companion-op-missing": CauseInfo(
        Severity.ERROR,
        "The graph uses an op of a TensorFlow companion package (TF-DF, TF Text, TF Addons, TF-IO) "
        "that is not registered: the package is not imported, or its build is for another "
        "TensorFlow release.",
        "Import the companion (import tensorflow_text, tensorflow_decision_forests) before loading "
        "the model, and install the companion release built for this TensorFlow (its compatibility "
        "table).",
        "https://www.tensorflow.org/decision_forests/known_issues",
    ),
    "nvidia-smi-no-libcuda": CauseInfo(
        Severity.ERROR,
        "nvidia-smi runs but shows no CUDA version: it could not load the driver's CUDA library "
        "libcuda.so.1, which TensorFlow needs too. The kernel driver is there; its user-space CUDA "
        "library is missing, or off the loader path.",
        "Install the driver's compute library (Debian/Ubuntu: libnvidia-compute-<branch> of the same "
        "branch as the driver); in a container, find where the toolkit mounted libcuda.so.1 "
        "(ldconfig -p | grep libcuda) and put that directory on LD_LIBRARY_PATH.",
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/troubleshooting.html",
        True,
        explains=("driver-library-missing", "driver-missing", "cuda-init-failed"),
    ),
    "companion-no-wheel": CauseInfo(
        Severity.ERROR,
        "A TensorFlow companion package has no wheel for this Python (or platform): pip stops on the "
        "conflict, falls back to an older TensorFlow that has one, or installs a placeholder release.",
        "Use a Python version the companion publishes wheels for (its PyPI 'Download files' page), or "
        "wait for a release of it that adds this Python; pin TensorFlow to the companion's series.",
        "https://pypi.org/project/tensorflow-text/#files",
        explains=("pip-dependency-conflict",),
    ),
    "companion-import-failed": CauseInfo(
        Severity.ERROR,
        "tensorflow-text does not import: it is missing, of another series than TensorFlow, or one of "
        "its dependencies (tensorflow-hub) is broken for this TensorFlow.",
        "Run python -c 'import tensorflow_text' to see why; install the tensorflow-text of TensorFlow's "
        "series (and tf-keras, which tensorflow-hub imports), not a release that moves TensorFlow.",
        "https://pypi.org/project/tensorflow-text/",
    ),
    "pip-dependency-conflict": CauseInfo(
        Severity.ERROR,
        "pip reports installed packages outside what TensorFlow requires.",
        "Install the versions TensorFlow requires (the 'requires' part of pip's message).",
        None,
    ),
    "python-exception": CauseInfo(
        Severity.INFO,
        "A Python exception ended TensorFlow's output; the exception line says which module failed.",
        "An import error after installing or upgrading packages is usually a version mismatch: "
        "compare `pip list` with TensorFlow's requirements (`pip show tensorflow`).",
        None,
    ),
    "cudnn-handle-failed": CauseInfo(
        Severity.ERROR,
        "cuDNN could not create its handle or pick a convolution algorithm: the GPU's memory is "
        "taken (TensorFlow grabbed it all, or another process holds it), or cuDNN mismatches the "
        "build.",
        "Enable memory growth (TF_FORCE_GPU_ALLOW_GROWTH=true or "
        "tf.config.experimental.set_memory_growth), free the GPU (nvidia-smi lists its "
        "processes), and install the cuDNN TensorFlow was built with.",
        TF_PIP,
    ),
    "mixed-precision-slow": CauseInfo(
        Severity.WARNING,
        "TensorFlow warns that mixed precision will be slow here: the GPU has no Tensor Cores "
        "(compute capability below 7.0) or no GPU is used.",
        "Use float32 on this GPU, or a GPU with compute capability 7.0 or higher.",
        "https://www.tensorflow.org/guide/mixed_precision",
    ),
    "libdevice-missing": CauseInfo(
        Severity.ERROR,
        "XLA could not find libdevice, so jit_compile on the GPU fails.",
        "pip install {nvcc_wheel}, or set XLA_FLAGS=--xla_gpu_cuda_data_dir=<CUDA dir "
        "containing nvvm/libdevice>.",
        XLA_GPU,
    ),
    "ptx-jit-startup-delay": CauseInfo(
        Severity.WARNING,
        "A long delay at every start of GPU work is the CUDA driver JIT-compiling TensorFlow's PTX: "
        "the GPU is newer than the architectures the wheel has binaries for.",
        "Use a TensorFlow built for this GPU's compute capability; meanwhile raise CUDA_CACHE_MAXSIZE "
        "(e.g. 4294967296) so the compiled kernels stay cached between runs.",
        "https://developer.nvidia.com/blog/cuda-pro-tip-understand-fat-binaries-jit-caching/",
    ),
    "windows-gpu-build-missing": CauseInfo(
        Severity.ERROR,
        "There is no GPU build of TensorFlow for native Windows after 2.10 (pip wheels and the "
        "libtensorflow C library alike): this release's Windows GPU package does not exist.",
        "Use WSL2 with the Linux build, or TensorFlow 2.10 (libtensorflow-gpu-windows-x86_64-2.10.0) "
        "with CUDA 11.2 and cuDNN 8.1 on native Windows.",
        "https://www.tensorflow.org/install/pip#windows-native",
        True,
    ),
    "docker-image-cudnn8": CauseInfo(
        Severity.ERROR,
        "The official TensorFlow 2.18 / 2.19 GPU images ship cuDNN 8.9, but the TensorFlow in them "
        "loads cuDNN 9 (libcudnn.so.9): it cannot open it and registers no GPU.",
        "In the image: apt-get install cudnn9-cuda-12, or pip install 'tensorflow[and-cuda]' of the "
        "same version; or use tensorflow/tensorflow:2.17.0-gpu.",
        "https://github.com/tensorflow/build/issues/221",
        True,
    ),
    "docker-latest-gpu-cudnn8": CauseInfo(
        Severity.ERROR,
        "The official latest-gpu image of TensorFlow 2.18 and newer ships cuDNN 8.9 (2.18 and 2.19 at "
        "least, tensorflow/build#221), but its TensorFlow loads cuDNN 9 (libcudnn.so.9): it cannot "
        "open it and registers no GPU.",
        "In the image: apt-get install cudnn9-cuda-12, or pip install 'tensorflow[and-cuda]' of the "
        "same version; or use tensorflow/tensorflow:2.17.0-gpu.",
        "https://github.com/tensorflow/build/issues/221",
        True,
        min_tf="2.18",
    ),
    "jit-compilation-failed": CauseInfo(
        Severity.ERROR,
        "TensorFlow could not JIT-compile a GPU kernel: it usually cannot find ptxas or libdevice "
        "(the CUDA data directory).",
        "pip install {nvcc_wheel}, or set XLA_FLAGS=--xla_gpu_cuda_data_dir=<the CUDA directory that "
        "holds bin/ptxas and nvvm/libdevice>.",
        XLA_GPU,
    ),
    "allocator-stats-missing": CauseInfo(
        Severity.ERROR,
        "TF_GPU_ALLOCATOR=cuda_malloc_async is set, and this TensorFlow's asynchronous allocator keeps "
        "no statistics (TensorFlow 2.5): device creation, training and model loading fail.",
        "Unset TF_GPU_ALLOCATOR, or upgrade TensorFlow (2.6 and newer fix the allocator).",
        "https://github.com/tensorflow/tensorflow/issues/48545",
    ),
    "cudart-symbol-missing": CauseInfo(
        Severity.ERROR,
        "A library built against a newer CUDA runtime loads an older libcudart that lacks the "
        "function it needs: two CUDA versions are mixed in this environment.",
        "Make the libcudart that loads first (LD_LIBRARY_PATH, the pip nvidia wheels, the toolkit) "
        "the CUDA version the failing library was built with, or rebuild that library against it.",
        TF_PIP,
    ),
    "ptxas-missing": CauseInfo(
        Severity.WARNING,
        "XLA could not find ptxas and falls back to the driver for PTX compilation.",
        "pip install {nvcc_wheel} or put a CUDA toolkit's bin/ on PATH.",
        XLA_GPU,
    ),
    "ptxas-too-old": CauseInfo(
        Severity.ERROR,
        "The ptxas XLA uses is older than 11.1 and known to miscompile.",
        "Put a newer ptxas first on PATH (pip install {nvcc_wheel}).",
        XLA_GPU,
    ),
    "ptxas-failed": CauseInfo(
        Severity.ERROR,
        "ptxas failed to compile XLA's generated PTX.",
        "Use the ptxas of TensorFlow's CUDA version (pip install {nvcc_wheel}).",
        XLA_GPU,
    ),
    "driver-older-than-ptxas": CauseInfo(
        Severity.WARNING,
        "The driver is older than ptxas, so XLA compiles more slowly or fails to link.",
        "Upgrade the NVIDIA driver, or use a ptxas matching the driver's CUDA version.",
        XLA_GPU,
    ),
    "cudnn-failed": CauseInfo(
        Severity.ERROR,
        "cuDNN failed to initialise or was not usable ('DNN library is not found': the cuDNN "
        "that loads is missing or of another version than the one TensorFlow was built with).",
        "Enable memory growth (TF_FORCE_GPU_ALLOW_GROWTH=true) and install the cuDNN "
        "TensorFlow pins.",
        TF_PIP,
    ),
    "cublas-failed": CauseInfo(
        Severity.ERROR,
        "cuBLAS failed to initialise or run (often out of GPU memory).",
        "Enable memory growth (TF_FORCE_GPU_ALLOW_GROWTH=true) and check other processes on "
        "the GPU.",
        TF_PIP,
    ),
    "gpu-out-of-memory": CauseInfo(
        Severity.ERROR,
        "The GPU ran out of memory during the smoke work.",
        "Free the GPU (nvidia-smi lists its processes) or enable memory growth.",
        None,
    ),
    "cuda-error": CauseInfo(
        Severity.ERROR,
        "A CUDA call failed during the smoke work.",
        "Look up the CUDA error named in the evidence.",
        None,
    ),
    "cpu-instructions-missing": CauseInfo(
        Severity.ERROR,
        "This CPU lacks instructions the TensorFlow wheel was compiled to use.",
        "Install a TensorFlow build for this CPU (older wheels, or a build from source).",
        TF_PIP,
    ),
}


def finding_id(cause: str) -> str:
    """The finding a log cause becomes: "tf-log-<cause>"."""
    return f"tf-log-{cause}"


FINDING_IDS: tuple[str, ...] = tuple(finding_id(c) for c in CAUSES)
