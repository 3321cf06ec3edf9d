"""Recognise known TensorFlow log lines and map them to causes; frame log output as evidence.

The messages are TensorFlow's and XLA's own (research/compat.md §3, §5a, §8a, §8d quote their
sources: dso_loader.cc, gpu_device.cc, cuda_dnn.cc, cuda_diagnostics.cc, XLA's nvptx compiler).
Pure functions over text, tested on recorded output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tfdoctor.facts import LogCause

# (cause id, pattern); the first match wins, so specific patterns come before generic ones.
# A named group "s" is the subject (a library, an error name, a version pair).
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (cid, re.compile(rx))
    for cid, rx in (
        (
            "cpu-instructions-missing",
            r"compiled to use (?P<s>[A-Z0-9_. ]+?) instructions, but these aren't available",
        ),
        # bash "Illegal instruction (core dumped)", zsh "illegal hardware instruction", a bare line
        # or the user quoting it: 'import tensorflow produces an "Illegal instruction" error'
        ("illegal-instruction", r"Illegal instruction \(core dumped\)|^Illegal instruction\s*$"
                                r"|illegal hardware instruction|SIG(?:ILL|KILL) \(Illegal instruction\)"
                                r"|[\"'“`]Illegal instruction[\"'”`]"),
        # Docker without an NVIDIA runtime for --gpus (NVIDIA/nvidia-docker#1034, #1243, #1591:
        # the NVIDIA Container Toolkit was missing)
        ("container-toolkit-missing", r"could not select device driver \"[^\"]*\" with capabilities: "
                                      r"\[\[(?P<s>[^\]]*)\]\]"),
        ("numpy2-abi", r"compiled using NumPy 1\.x cannot be run in(?:\s*NumPy (?P<s>2[\d.]*))?"
                       r"|_ARRAY_API not found|numpy\.core\._multiarray_umath failed to import"),
        ("numpy-too-new", r"module 'numpy' has no attribute '(?P<s>object|bool|int|float|typeDict)'"),
        # TF <= 2.4 with NumPy >= 1.20 (tensorflow/tensorflow#47242); the NotImplementedError prefix is
        # often cut when users quote it.
        ("numpy-symbolic-tensor", r"Cannot convert a symbolic Tensor \(\S+\) to a numpy array"),
        # wrapt 1.15 raises from TF's _DictWrapper (GrahamDumpleton/wrapt#231, tensorflow/tensorflow#59869).
        ("dictwrapper-package-too-new", r"this __dict__ descriptor does not support '_DictWrapper' objects"),
        # protobuf >= 6.30 removed MessageFactory.GetPrototype (tensorflow/tensorflow#94030)
        ("protobuf-getprototype-removed", r"'MessageFactory' object has no attribute 'GetPrototype'"),
        ("protobuf-descriptors", r"Descriptors cannot be created directly"
                                 r"|module 'google\._upb\._message' has no attribute"
                                 r"|your generated code is out of date and must be regenerated with protoc"),
        ("keras-tf-mismatch", r"Another metric with the same name already exists"
                              r"|No module named '(?P<s>keras_preprocessing)'"),
        ("tf-keras-not-installed", r"No module named '(?P<s>tf_keras)'"),
        ("tf-addon-mismatch", r"(?P<s>tensorflow_(?:io|text|addons|decision_forests|recommenders|transform)\w*)/\S*\.so(?:: undefined symbol: |, 0x\w+\): symbol not found in flat namespace ')_?_ZN(?:3tsl|10tensorflow)"
                              r"|(?P<t>Tensorflow Addons) supports using Python ops for all Tensorflow versions"
                              r"|This version of (?:TensorFlow Probability|TensorFlow Text|TensorFlow I/O) requires TensorFlow"),
        ("keras-src-missing", r"No module named '(?P<s>keras\.src)'"),
        ("ml-dtypes-mismatch", r"module 'ml_dtypes' has no attribute '(?P<s>\w+)'"),
        ("tf-internal-api-mismatch", r"module 'tensorflow\.compat\.v2\.__internal__[\w.]*' has no attribute '(?P<s>\w+)'"
                                     # tensorflow-estimator 2.7 under TF 2.6 (tensorflow/tensorflow#52883, bytedance/monolith#14)
                                     r"|doc_controls'? has no attribute '(?P<t>inheritable_header)'|doc_controls\.inheritable_header"),
        ("keras3-incompatible", r"Your currently installed version of Keras is Keras 3"
                                r"|Only instances of `keras\.Layer` can be added to a Sequential model"
                                r"|A KerasTensor cannot be used as input to a TensorFlow function"
                                r"|No module named 'keras\.(?:src\.)?(?P<s>engine|legacy|preprocessing|wrappers)"
                                r"|cannot import name '\w+' from 'keras\.(?:src\.)?engine"
                                # the user's words: it worked up to 2.15 and breaks from 2.16 (Keras 3)
                                r"|(?i:works?(?: \w+){0,2} (?:in|with|on|under) (?:tensorflow|tf) ?v?2\.1[0-5]"
                                r"\b.{0,80}?(?:tensorflow|tf) ?v?2\.(?:1[6-9]|2\d)\b)"
                                # ... or upgrading across that line, "from Keras 2 to Keras 3"
                                # (ageron/handson-ml3#163)
                                r"|(?i:\bKeras 2 to Keras 3\b|\bupgrad\w* from (?:tensorflow|tf) ?v?2\.1[0-5]\b"
                                r"[^.]{0,20}? to (?:tensorflow |tf )?v?2\.(?:1[6-9]|2\d)\b)"),
        # Code, not a log: a Keras 2 layer that Keras 3 (TF >= 2.16) refuses (CauseInfo.min_tf)
        ("tf-hub-keras3", r"\bhub\.KerasLayer\("),
        # A pin of the [and-cuda] extra with no wheel for this Python (tensorrt==8.5.3.1 of TF 2.14.0
        # on Python 3.11+: tensorflow/tensorflow#61986)
        ("and-cuda-pin-unavailable", r"(?:No matching distribution found for|Could not find a version that "
                                     r"satisfies the requirement) (?P<s>[\w.-]+[=<>!~]=?[^;\s]*);? extra == "
                                     r"[\"']and-cuda[\"']"),
        # the user's words: "conda list | grep tensorflow will show cpu build is installed"
        ("cpu-build-installed", r"(?i:\bcpu[- ](?:only )?(?:build|version|variant)s? (?:that )?(?:of tensorflow )?"
                                r"(?:is|was|are|were|gets|got|being) (?:installed|pulled|picked))"),
        # ... a companion's, not TensorFlow's own (microsoft/windows-ai-docs#119: the DirectML plugin
        # on Python 3.11)
        ("companion-no-wheel", r"(?:No matching distribution found for|Could not find a version that satisfies "
                               r"the requirement) (?P<s>tensorflow[-_](?:text|io|decision[-_]forests|addons"
                               r"|recommenders|directml[-_]plugin))\b"),
        # The DirectML plugin on a TensorFlow it was not built for (2.11+; microsoft/tensorflow-directml-plugin#331)
        ("directml-plugin-incompatible", r"tensorflow-plugins[\\/](?P<s>tfdml_plugin\.dll) not found"),
        ("no-matching-wheel", r"No matching distribution found for (?P<s>tensorflow[\w\[\]=<>.-]*)"
                              r"|Could not find a version that satisfies the requirement "
                              r"(?P<t>tensorflow[\w\[\]=<>.-]*)"),
        ("driver-library-missing", r"Could not load dynamic library '(?P<s>libcuda\.so[.\d]*)'"
                                   r"|(?P<t>libcuda\.so\.1): cannot open shared object file"),
        # From 2.13 the line comes from tsl's cudart_stub.cc, the wrapper of the CUDA runtime: it is
        # logged when libcudart does not load (no CUDA at all, or a CUDA of another major).
        ("cudart-not-loaded", r"cudart_stub\.cc:\d+\] Could not find cuda drivers on your machine"),
        ("driver-missing", r"Could not find cuda drivers on your machine"),
        ("driver-not-running", r"kernel driver does not appear to be running on this host"),
        # The forward-compatibility libcuda (cuda-compat) on a GPU that cannot use it (GeForce)
        ("cuda-compat-unsupported", r"(?P<s>CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)"),
        (
            "driver-too-old",
            r"(?P<s>CUDA_ERROR_(?:INSUFFICIENT_DRIVER|SYSTEM_DRIVER_MISMATCH))|Possibly insufficient driver version"
            # the NVIDIA container runtime refusing an image's CUDA (GoogleCloudPlatform/gcsfuse#1557)
            r"|nvidia-container-cli: requirement error: unsatisfied condition: (?P<t>cuda>=[\d.]+)"
            r"|CUDA driver version is insufficient for CUDA runtime version",
        ),
        # WSL2 with Windows driver 555+ and a container runtime that does not map libnvdxgdmal.so.1
        # (NVIDIA/nvidia-container-toolkit#520)
        ("cuinit-symbol-not-found", r"cuInit(?::| results in) (?:INTERNAL: )?(?:CUDA error: )?"
                                    r"(?P<s>CUDA_ERROR_NOT_FOUND)"),
        ("cuda-init-failed", r"failed call to cuInit: (?:INTERNAL: )?(?:CUDA error: )?(?P<s>.+)$"),
        ("library-not-loaded", r"Could not load dynamic library '(?P<s>[^']+)'"
                               r"|(?P<t>lib(?:cudart|cublas|cublasLt|cufft|curand|cusolver|cusparse|cudnn|nvrtc|nvinfer_never|nccl)"
                               r"[\w]*\.so[.\d]*): cannot open shared object file"),
        # a user's words for the same thing: "libcudart.so.11.0 not found" (any case)
        ("library-not-loaded", r"(?i)\b(?P<s>lib(?:cudart|cublas|cublaslt|cufft|curand|cusolver|cusparse|cudnn|nccl)"
                               r"\w*\.so[.\d]*)\s+(?:is\s+)?(?:not found|missing)"),
        # The same message's last line, often quoted alone (tensorflow/tensorflow#110956)
        ("gpu-libraries-missing", r"Cannot dlopen some GPU libraries|Skipping registering GPU devices"),
        # A TF-TRT graph whose TensorRT (libnvinfer) did not load: TF's stub aborts (tensorflow/serving#1914)
        ("tensorrt-not-loaded", r"nvinfer_stub\.cc:\d+\] (?P<s>getInferLibVersion) symbol not found"),
        (
            "cudnn-version-mismatch",
            r"Loaded runtime CuDNN library: "
            r"(?P<s>\S+ but source was compiled with:? \S+?)\.?(?:\s|$)"
            r"|Loaded runtime CuDNN library: (?P<t>\S+) but source was compiled",
        ),
        (
            "cc-not-in-build",
            r"not built with CUDA kernel binaries compatible with compute "
            r"capability (?P<s>\d+\.\d+)",
        ),
        (
            "gpu-below-minimum-cc",
            r"Ignoring visible gpu device .* with Cuda compute capability "
            r"(?P<s>\d+\.\d+)",
        ),
        (
            "no-kernel-image",
            r"(?P<s>CUDA_ERROR_NO_BINARY_FOR_GPU)|device kernel image is invalid|"
            r"no kernel image is available for execution",
        ),
        ("ptx-too-new-for-driver", r"(?P<s>CUDA_ERROR_UNSUPPORTED_PTX_VERSION)"
                                   r"|PTX was compiled with an unsupported toolchain"),
        ("ptx-invalid", r"(?P<s>CUDA_ERROR_INVALID_PTX)|a PTX JIT compilation failed"),
        ("ptx-isa-too-old-for-gpu", r"PTX version [\d.]+ does not support target '(?P<s>sm_\d+a?)'"),
        ("ptxas-unsupported-arch", r"ptxas[^\n]{0,200}?(?:does not support|[Uu]nsupported)[^\n]{0,40}?(?P<s>sm_\d+a?)"
                                   r"|Value '(?P<t>sm_\d+a?)' is not defined for option 'gpu-name'"),
        (
            "libdevice-missing",
            r"libdevice not found|Can't find libdevice directory|"
            r"libdevice is required by this HLO module but was not found",
        ),
        ("ptxas-missing", r"Can't find ptxas binary|Couldn't get ptxas version|Failed to launch ptxas"
                          # newer XLA (github.com/wutzebaer/tensorflow-5090/issues/3, TF 2.20)
                          r"|No PTX compilation provider is available"),
        ("ptxas-too-old", r"You are using ptxas (?P<s>\S+), which is older than"),
        # XLA found no usable ptxas (none on PATH, or one too old) and leaves PTX to the driver's JIT
        # (tensorflow/tfjs#8505: gone once a newer CUDA's ptxas was installed)
        ("ptxas-fallback-to-driver", r"Relying on driver to perform ptx compilation"),
        # the user's words for the PTX JIT at every start (a GPU newer than the wheel's binaries;
        # Emgu/emgutf#71: "a first-time delay of 90-120 seconds when we create the session")
        ("ptx-jit-startup-delay", r"(?i:\b(?:first[- ]time |startup |start-up |initial )delay of \d+"
                                  r"(?:\s*-\s*\d+)? ?(?:seconds|minutes|secs|mins)\b"
                                  r"|\btakes? (?:about |around |over )?\d+(?:\s*-\s*\d+)? ?minutes to "
                                  r"(?:start|load|initiali[sz]e|create the session))"),
        # libtensorflow's Windows GPU archive stops at 2.10: the 2.11+ URL answers NoSuchKey
        # (tensorflow/tensorflow#59016)
        ("windows-gpu-build-missing", r"libtensorflow-gpu-windows-x86_64-(?P<s>2\.(?:1[1-9]|[2-9]\d)\.\d+)"),
        # The official GPU images of 2.18 and 2.19 ship cuDNN 8.9 for a TensorFlow that loads cuDNN 9
        # (tensorflow/build#221, tensorflow/tensorflow#62412, #81344, checked 2026-11-24)
        ("docker-image-cudnn8", r"\btensorflow(?:/tensorflow)?:(?P<s>2\.(?:18|19)(?:\.\d+)?-gpu(?:-jupyter)?)\b"),
        # ... and the same images as latest-gpu, for a TensorFlow 2.18 or newer (tensorflow/build#217)
        ("docker-latest-gpu-cudnn8", r"\btensorflow/tensorflow:(?P<s>(?:latest|nightly)-gpu(?:-jupyter)?)\b"),
        # TF 2.9's error when the GPU kernel JIT cannot find ptxas or libdevice (tensorflow/tensorflow#57162:
        # fixed by XLA_FLAGS=--xla_gpu_cuda_data_dir)
        ("jit-compilation-failed", r"JIT compilation failed\.?(?: \[Op:(?P<s>\w+)\])?"),
        # TF_GPU_ALLOCATOR=cuda_malloc_async in TF 2.5 (tensorflow/tensorflow#48869, #48545)
        ("allocator-stats-missing", r"No allocator statistics"),
        # tfjs-node's native addon, named in the failed dlopen's message (tensorflow/tfjs#8323)
        ("tfjs-binding-not-loaded", r"tfjs-node(?:-gpu)?[\\/]+lib[\\/]+napi-v\d+[\\/]+(?P<s>tfjs_binding\.node)"),
        # A .NET binding calling a C API function its libtensorflow lacks (SciSharp/TensorFlow.NET#794)
        ("binding-native-mismatch", r"EntryPointNotFoundException: Unable to find an entry point named "
                                    r"'(?P<s>TF_\w+)' in DLL 'tensorflow'"),
        # pip's tensorflow-gpu placeholder since 2.12 fails on purpose (pyhpc-benchmarks#17)
        ("tensorflow-gpu-removed", r"The \"(?P<s>tensorflow-gpu)\" package has been removed"),
        # Windows error 1455 loading TensorFlow's or CUDA's DLLs: the paging file is too small (iperov/
        # DeepFaceLab#957 quotes it in Russian); in English and in Russian, as users paste it
        ("windows-pagefile-too-small", r"(?i:paging file is too small)|Файл подкачки слишком мал"
                                       r"|\[WinError (?P<s>1455)\]"),
        # PEP 668: pip into a distribution's system Python (Ubuntu 24.04, Debian 12), which also ships
        # without pip (tensorflow/tensorflow#79370)
        ("python-externally-managed", r"error: externally-managed-environment"
                                      r"|(?P<s>/usr/bin/python3(?:\.\d+)?): No module named pip\b"),
        # A binary without XLA's GPU compiler: TensorFlow Serving's GPU image and a model exported with
        # jit_compile (tensorflow/serving#2214)
        ("xla-gpu-compiler-missing", r"could not find registered compiler for platform (?P<s>CUDA)"
                                     r"|Could not find compiler for platform (?P<t>CUDA)"),
        # A companion's op in a graph that runs without the companion's library: TF-DF's SimpleML*, TF
        # Text's tokenizers, TF Addons' and TF-IO's prefixed ops (tensorflow/decision-forests#214)
        ("companion-op-missing", r"Op type not registered '(?P<s>SimpleML\w*|Addons>\w+|IO>\w+|CaseFoldUTF8"
                                 r"|NormalizeUTF8\w*|\w*(?:Wordpiece|WordPiece|Sentencepiece|SentencePiece)\w*"
                                 r"|RegexSplitWithOffsets|\w*TokenizeWithOffsets)'"),
        # nvidia-smi reads the CUDA version from the driver's libcuda: "CUDA Version: N/A" (or
        # "ERR!" in a container) means it could not load it, though the kernel driver and NVML work
        # (conda-forge/tensorflow-feedstock#257; NVIDIA/nvidia-container-toolkit#1246)
        ("nvidia-smi-no-libcuda", r"CUDA Version:\s*(?P<s>N/A|ERR!)"),
        # A TensorFlow companion with no wheel for this Python: pip cannot satisfy "keras-hub 0.17.0
        # depends on tensorflow-text" (keras-team/keras#20572), installs the keras-nlp 0.0.0 placeholder
        # (keras-team/keras-hub#1649), or the user says so (keras-team/keras-hub#1218)
        ("companion-no-wheel", r"\b[\w.-]+ \d[\w.]* depends on (?P<s>tensorflow[-_](?:text|io|decision[-_]forests"
                               r"|addons|recommenders))\b|\b(?P<t>keras[-_]nlp)\s+0\.0\.0\b"),
        ("companion-no-wheel", r"(?i:\bno (?:wheels?|distributions?)\b[^\n]{0,80}?(?P<s>tensorflow[-/_]text)"
                               r"|(?P<t>tensorflow[-_]text) (?:has|publishes|ships) no (?:wheels?|distributions?))"),
        # keras-nlp / keras-hub when `import tensorflow_text` fails, installed or not: it, or its own
        # dependency tensorflow-hub, does not import with this TensorFlow (keras-team/keras-hub#1417)
        ("companion-import-failed", r"requires the `(?P<s>tensorflow[-_]text)` package"),
        # an extension built against a newer CUDA runtime than the libcudart that loads (horovod#3383)
        ("cudart-symbol-missing", r"undefined symbol: (?P<s>cuda\w+), version libcudart\.so"),
        (
            "ptxas-failed",
            r"Failed to compile generated PTX with ptxas|ptxas fatal|"
            r"ptxas returned an error",
        ),
        (
            "driver-older-than-ptxas",
            r"driver is older than the ptxas version|"
            r"cuLinkAddData fails",
        ),
        # XLA's autotuner with a cuDNN too old for the fused convolution this TF emits
        # (aws/deep-learning-containers#6417, calad0i/HGQ2#14: TF 2.21 with cuDNN 9.3 / 9.5).
        ("xla-autotune-no-config", r"Autotuner could not find any supported configs for HLO"),
        (
            "cudnn-handle-failed",
            r"Could not create cudnn handle|Failed to get convolution algorithm|No algorithm worked"
            r"|(?P<s>CUDNN_STATUS_(?:INTERNAL_ERROR|NOT_INITIALIZED|ALLOC_FAILED|EXECUTION_FAILED))",
        ),
        (
            "cudnn-failed",
            r"(?P<s>CUDNN_STATUS_[A-Z_]+)|DNN library is not found|DNN library initialization failed"
            # XLA's check that the executor has a DNN (cuDNN) plugin (tensorflow/tfx#5966)
            r"|RET_CHECK failure \(\S*gpu_compiler\.cc:\d+\) dnn != nullptr",
        ),
        (
            "cublas-failed",
            r"failed to create cublas handle|(?P<s>CUBLAS_STATUS_[A-Z_]+)|"
            r"BLAS operation using StreamExecutor without BLAS support",
        ),
        ("mixed-precision-slow", r"Mixed precision compatibility check \(mixed_float16\): WARNING"),
        (
            "gpu-out-of-memory",
            r"(?P<s>CUDA_ERROR_OUT_OF_MEMORY)|OOM when allocating|ResourceExhaustedError|"
            r"memory_limit_: \d+ available bytes: 0|"
            r"Allocator \(GPU_\d+_bfc\) ran out of memory",
        ),
        ("cuda-error", r"(?P<s>CUDA_ERROR_[A-Z_]+)"),
        # A Python exception ending a traceback: says only where to look (info, for the asks).
        # a user's words: NaN only when several GPUs train together (tensorflow/tensorflow#57893, #105552)
        ("multi-gpu-nan", r"(?i)(?:MirroredStrategy|multi-?gpu|multiple gpus|pairs? of gpus)[^\n]{0,80}\bnan\b"
                          r"|(?i:\bnan\b[^\n]{0,80}(?:MirroredStrategy|multi-?gpu|multiple gpus|pairs? of gpus))"),
        ("python-exception", r"^(?P<s>(?:[\w.]+\.)?(?:ImportError|ModuleNotFoundError|AttributeError|TypeError|OSError|NotImplementedError))(?::|$)"
                             # IPython/Jupyter's header: "NotFoundError     Traceback (most recent call last)"
                             r"|^(?P<t>\w+(?:Error|Exception))\s{2,}Traceback \(most recent call last\)"),
    )
)

# Lines TF prints on healthy machines (research/compat.md §8d "benign noise"); never findings.
NOISE = re.compile(
    "|".join(
        (
            r"Unable to register (?:cuDNN|cuFFT|cuBLAS) factory",
            r"computation placer already registered",
            r"TF-TRT Warning: Could not find TensorRT",
            r"Could not load dynamic library 'libnv(?:infer|infer_plugin)\.so",
            r"oneDNN custom operations are on",
            r"oneDNN supports DT_HALF only on platforms with AVX-512",
            r"This TensorFlow binary is optimized to use available CPU instructions",
            r"To enable the following instructions: .* rebuild TensorFlow",
            r"All log messages before absl::InitializeLog\(\) is called",
            r"Ignore above cudart dlerror if you do not have a GPU",
            r"Registering collective allocator factory",
            r"Using MirroredStrategy eagerly has significant overhead",
            r"^tfdoctor-smoke: begin",
            r"successful NUMA node read from SysFS had negative value",
            r"Could not open file to read NUMA node",
            r"Your kernel may have been built without NUMA support",
            r"Could not load dynamic library 'libnvinfer",
            r"TF-TRT Warning",
            r"Unable to register cuDNN factory|Unable to register cuFFT factory|Unable to register cuBLAS factory",
        )
    )
)


_STATUS = re.compile(r"\b(?:CUDA_ERROR|CUBLAS_STATUS|CUDNN_STATUS)_[A-Z_]+")


def is_noise(line: str) -> bool:
    """A line TensorFlow prints on healthy machines (or our own recipe marker)."""
    return bool(NOISE.search(line))


def recognise(line: str) -> tuple[str, str | None] | None:
    """(cause id, subject) for a known log line, None for anything else or known noise."""
    if is_noise(line):
        return None
    for cause_id, pattern in PATTERNS:
        match = pattern.search(line)
        if match:
            groups = match.groupdict()
            subject = groups.get("s") or groups.get("t")
            if subject is None:  # the error name may follow the matched phrase on the line
                status = _STATUS.search(line)
                subject = status.group(0) if status else None
            return cause_id, subject.strip() if subject else None
    return None


def scan(lines: Iterable[str], recipe: str | None = None) -> tuple[LogCause, ...]:
    """Every recognised line, once per (cause, subject), in order of first appearance."""
    seen: set[tuple[str, str | None]] = set()
    out = []
    for line in lines:
        hit = recognise(line)
        if hit is None or hit in seen:
            continue
        seen.add(hit)
        out.append(LogCause(id=hit[0], line=line.strip()[:500], subject=hit[1], recipe=recipe))
    return tuple(out)


def without_noise(lines: Iterable[str]) -> list[str]:
    return [ln for ln in lines if ln.strip() and not is_noise(ln)]


def frame(lines: tuple[str, ...] | list[str], total: int | None = None) -> str:
    """pip-style evidence: "[N lines of output]", the lines indented, "[end of output]"."""
    count = len(lines) if total is None else total
    shown = "\n".join("  " + ln for ln in lines)
    more = f" (last {len(lines)} shown)" if count > len(lines) else ""
    return f"[{count} lines of output{more}]\n{shown}\n[end of output]"
