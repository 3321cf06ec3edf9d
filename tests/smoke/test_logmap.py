"""Recorded TensorFlow output of real GPU failures (messages from research/compat.md) mapped to
causes, and benign noise kept out of the findings."""

from __future__ import annotations

import pytest
import tfdoctor.checks.smoke  # noqa: F401  (registers the smoke checks)
from conftest import RECORDED, make_facts
from tfdoctor.facts import LogCause, RecipeResult, SmokeDevice, SmokeFacts
from tfdoctor.registry import _REGISTRY, CheckConfig, run_check
from tfdoctor.smoke import logmap


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "cudnn_mismatch.log",
            [
                ("cudnn-version-mismatch", "9.1.0 but source was compiled with: 9.3.0"),
                ("cudnn-failed", None),
            ],
        ),
        (
            "dlopen_cusolver.log",
            [("library-not-loaded", "libcusolver.so.11"), ("gpu-libraries-missing", None)],
        ),
        ("xla_libdevice.log", [("libdevice-missing", None)]),
        (
            "xla_ptxas.log",
            [
                ("ptxas-missing", None),
                ("ptxas-too-old", "10.1.243"),
                ("ptxas-failed", None),
                ("driver-older-than-ptxas", None),
            ],
        ),
        (
            "blackwell_ptx.log",
            [
                ("cc-not-in-build", "12.0"),
                ("ptx-invalid", "CUDA_ERROR_INVALID_PTX"),
                ("cuda-error", "CUDA_ERROR_INVALID_HANDLE"),
            ],
        ),
        (
            "handles_oom.log",
            [
                ("cublas-failed", "CUBLAS_STATUS_NOT_INITIALIZED"),
                ("cudnn-handle-failed", "CUDNN_STATUS_INTERNAL_ERROR"),
                ("gpu-out-of-memory", "CUDA_ERROR_OUT_OF_MEMORY"),
            ],
        ),
        ("driver_old.log", [("driver-too-old", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH")]),
        ("avx_missing.log", [("cpu-instructions-missing", "AVX")]),
        (
            "no_driver_tf221.log",
            [
                ("driver-library-missing", "libcuda.so.1"),
                ("cuda-init-failed", "Failed call to cuInit: UNKNOWN ERROR (303)"),
                ("driver-not-running", None),
            ],
        ),
    ],
)
def test_recorded_failures_map_to_causes(name: str, expected: list[tuple[str, str | None]]) -> None:
    """Each recorded failure log yields exactly its causes, in order, once each."""
    lines = (RECORDED / name).read_text().splitlines()
    assert [(c.id, c.subject) for c in logmap.scan(lines)] == expected


def test_benign_noise_is_never_a_cause() -> None:
    """The "Unable to register cuDNN factory" family and CPU-feature notes are healthy output."""
    noise = [
        ln
        for ln in (RECORDED / "cudnn_mismatch.log").read_text().splitlines()
        if "Unable to register" in ln or "oneDNN" in ln
    ]
    assert len(noise) == 4
    assert all(logmap.is_noise(ln) and logmap.recognise(ln) is None for ln in noise)
    assert logmap.without_noise(noise) == []


def test_frame_is_pip_style() -> None:
    """Evidence text: a count, the lines indented, and an end marker (pip's framing)."""
    assert (
        logmap.frame(("a", "b"), 10)
        == "[10 lines of output (last 2 shown)]\n  a\n  b\n[end of output]"
    )


def test_log_causes_become_findings_with_hints() -> None:
    """With a GPU visible, a cuDNN mismatch in the conv2d recipe is a finding of its own and
    the conv2d failure carries its hint; the 'no GPU' causes are not findings then."""
    lines = tuple((RECORDED / "cudnn_mismatch.log").read_text().splitlines())
    causes = logmap.scan(lines, recipe="conv2d")
    smoke = SmokeFacts(
        python="python",
        outcome="completed",
        devices=(SmokeDevice("CPU:0", "CPU"), SmokeDevice("GPU:0", "GPU", "Tesla T4", "7.5")),
        recipes=(
            RecipeResult(
                "conv2d",
                "GPU:0",
                "error",
                detail="UnimplementedError: DNN library is not found.",
                log_tail=lines[-2:],
                log_lines=5,
                causes=causes,
            ),
        ),
        causes=causes,
    )
    facts = make_facts(smoke)
    log = run_check(_REGISTRY["smoke-log"], facts, CheckConfig()).findings
    assert [f.id for f in log] == ["tf-log-cudnn-version-mismatch", "tf-log-cudnn-failed"]
    assert log[0].evidence["subject"] == "9.1.0 but source was compiled with: 9.3.0"
    recipes = run_check(_REGISTRY["smoke-recipes"], facts, CheckConfig()).findings
    assert [f.id for f in recipes] == ["smoke-conv2d-failed"]
    assert "tensorflow[and-cuda]" in (recipes[0].hint or "")
    assert recipes[0].evidence["log"].startswith("[5 lines of output (last 2 shown)]")


# Lines as users pasted them in public reports (the source of each), for the field causes of issue 10.
FIELD_LINES = [
    # github.com/tensorflow/tensorflow/issues/47242 (TF 2.4 with NumPy 1.20), quoted without its prefix
    ("Cannot convert a symbolic Tensor (gru/strided_slice:0) to a numpy array.",
     ("numpy-symbolic-tensor", None)),
    # github.com/GrahamDumpleton/wrapt/issues/231 (wrapt 1.15)
    ("TypeError: this __dict__ descriptor does not support '_DictWrapper' objects",
     ("dictwrapper-package-too-new", None)),
    # github.com/mlittmancs/great_courses_ml/issues/72 (keras 2.8 beside a newer TF)
    ("ModuleNotFoundError: No module named 'keras_preprocessing'",
     ("keras-tf-mismatch", "keras_preprocessing")),
    # Python's own message for a missing module; tf_keras is the import name of the tf-keras package
    # (reconstructed, not captured: README troubleshooting sections quote it verbatim)
    ("ModuleNotFoundError: No module named 'tf_keras'", ("tf-keras-not-installed", "tf_keras")),
    # github.com/aws/deep-learning-containers/pull/6417 (TF 2.21 with cuDNN 9.5.1)
    ("Autotuner could not find any supported configs for HLO:", ("xla-autotune-no-config", None)),
    # github.com/NVIDIA/nvidia-docker/issues/1034 (no NVIDIA Container Toolkit on the host)
    ('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
     ("container-toolkit-missing", "gpu")),
    # github.com/tensorflow/tensorflow/issues/68711, NVIDIA/nvidia-container-toolkit#520 (WSL2, driver 555)
    ("E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: "
     "CUDA_ERROR_NOT_FOUND: named symbol not found", ("cuinit-symbol-not-found", "CUDA_ERROR_NOT_FOUND")),
    # github.com/NVIDIA/cudf/issues/15925 (numba's wording of the same cuInit failure)
    ("[500] Call to cuInit results in CUDA_ERROR_NOT_FOUND",
     ("cuinit-symbol-not-found", "CUDA_ERROR_NOT_FOUND")),
    # zsh's wording of SIGILL (reconstructed in zsh's format; quoted so in the field case
    # github.com/lewagon/data-setup/issues/147)
    ("zsh: illegal hardware instruction  python -c 'import tensorflow'", ("illegal-instruction", None)),
    # github.com/tensorflow/tensorflow/issues/65419 (code: a TF Hub layer under Keras 3)
    ("            hub.KerasLayer(CLASSIFIER_URL, input_shape=(IMAGE_RES, IMAGE_RES, 3))",
     ("tf-hub-keras3", None)),
    # github.com/tensorflow/text/issues/644 (IPython's traceback header of a tf.errors class)
    ("NotFoundError                             Traceback (most recent call last)",
     ("op-error", "NotFoundError")),
    # google-research/pathdreamer#2 (the same, its message cut from the ticket)
    ("UnknownError                              Traceback (most recent call last)",
     ("op-error", "UnknownError")),
    # deepface#1272: Python's own exception, not TensorFlow's
    ("ValueError                                Traceback (most recent call last)",
     ("python-exception", "ValueError")),
    # github.com/wutzebaer/tensorflow-5090/issues/3 (XLA in TF 2.20 without ptxas or nvJitLink)
    ("No PTX compilation provider is available. Neither ptxas/nvlink nor nvjtlink is available.",
     ("ptxas-missing", None)),
    # A user's words are facts for the checks, not log lines (tests/checks/test_per_element.py):
    # david8862/tf-keras-stacked-hourglass-keypoint-detection#13, tensorflow/tensorflow#105552
    ("Tensorflow GPU libarary Libcudart.so.11.0 not found", None),
    ("With MirroredStrategy the loss becomes NaN, but only for certain pairs of GPUs", None),
    # gpu_device.cc's own error for the same cause
    ("E tensorflow/core/common_runtime/gpu/gpu_device.cc:1650] 2 potential peer access pairs were reported "
     "by the driver, but no peering could be enabled.", ("multi-gpu-nan", "2")),
    ("Multi-GPU training is fine for hours, single GPU too", None),
    # github.com/tensorflow/tensorflow/issues/61986 (TF 2.14.0 [and-cuda] on Python 3.11: tensorrt pin)
    ('ERROR: No matching distribution found for tensorrt==8.5.3.1; extra == "and-cuda"',
     ("and-cuda-pin-unavailable", "tensorrt==8.5.3.1")),
    ("ERROR: No matching distribution found for tensorflow==2.5.0",
     ("no-matching-wheel", "tensorflow==2.5.0")),
    # github.com/google-research/omniglue/issues/14 (cuda-compat 11.8 in a container, GeForce, driver 470)
    ("failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     ("cuda-compat-unsupported", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE")),
    # github.com/tensorflow/tensorflow/issues/45872 (the user quoting the shell's message)
    ('Attempting to import tensorflow produces an "Illegal instruction" error.',
     ("illegal-instruction", None)),
    ("the illegal instruction set of the GPU was discussed", None),
    # github.com/aws/sagemaker-distribution/issues/438: the user's words about what is installed are
    # a fact for triage's prose (tensorflow.is_cuda_build), not a cause the log map reads
    ("4. running `$conda list | grep tensorflow` will show cpu build is installed", None),
    ("the CPU version is installed fine but I want the GPU", None),
    ("a cpu fallback was used by the build system", None),
    # github.com/tensorflow/tensorflow/issues/62412 (tensorflow/build#221: cuDNN 8.9 in the 2.18 image)
    ("For me works fine for `2.17.0-gpu` but breaks on `2.18.0-gpu`: "
     "docker run tensorflow/tensorflow:2.18.0-gpu", ("docker-image-cudnn8", "2.18.0-gpu")),
    ("docker pull tensorflow/tensorflow:2.17.0-gpu", None),
    # github.com/tensorflow/tensorflow/issues/81344 (the image named without its namespace)
    ("GPU image 'tensorflow:2.18-gpu-jupyter' does not come with GPU support",
     ("docker-image-cudnn8", "2.18-gpu-jupyter")),
    # github.com/emgucv/emgutf/issues/71: the user's own timing is a fact (triage's intent.start_seconds,
    # judged by gpu-slow-start), never a log cause
    ("when we try to perform inference, we see a first-time delay of 90-120 seconds when we create "
     "the session.", None),
    ("each epoch takes 20 minutes on the CPU", None),
    # github.com/tensorflow/tensorflow/issues/94030 (protobuf 6.30+ under TF 2.20-dev)
    ("AttributeError: 'MessageFactory' object has no attribute 'GetPrototype'",
     ("protobuf-getprototype-removed", None)),
    # github.com/tensorflow/tensorflow/issues/59016 (the 2.11 Windows GPU archive does not exist)
    ("<Details>No such object: tensorflow/libtensorflow/libtensorflow-gpu-windows-x86_64-2.11.0.zip"
     "</Details>", ("windows-gpu-build-missing", "2.11.0")),
    ("curl -O https://storage.googleapis.com/libtensorflow-gpu-windows-x86_64-2.10.0.zip", None),
    # github.com/tensorflow/tensorflow/issues/57162 (TF 2.9.1)
    ("tensorflow.python.framework.errors_impl.UnknownError: JIT compilation failed. [Op:FloorMod]",
     ("jit-compilation-failed", "FloorMod")),
    # github.com/tensorflow/tensorflow/issues/48869 (TF 2.5, TF_GPU_ALLOCATOR=cuda_malloc_async)
    ("Error in py_call_impl(callable, dots$args, dots$keywords) : InternalError: No allocator statistics",
     ("allocator-stats-missing", None)),
    # github.com/horovod/horovod/issues/3383
    ("mpi_lib.cpython-38-x86_64-linux-gnu.so: undefined symbol: cudaGetDriverEntryPoint, "
     "version libcudart.so.11.0", ("cudart-symbol-missing", "cudaGetDriverEntryPoint")),
    # github.com/GoogleCloudPlatform/gcsfuse/pull/1557 (an image's CUDA newer than the host driver)
    ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.8, please update your driver "
     "to a newer version, or use an earlier cuda container: unknown.", ("driver-too-old", "cuda>=11.8")),
    # github.com/tensorflow/tensorflow/issues/70394: the user's words are facts for keras-version
    # (intent.worked_with, tests/checks/test_per_element.py), not a log line
    ("Model works in tensorflow 2.15 perfectly but unable to import the model in tensorflow 2.16!", None),
    ("It works in TF 2.16 but not in TF 2.17", None),
    # github.com/bytedance/monolith/issues/14 and tensorflow/tensorflow#52883 (estimator 2.7 under TF 2.6)
    ("AttributeError: module 'tensorflow.tools.docs.doc_controls' has no attribute 'inheritable_header'",
     ("tf-internal-api-mismatch", "inheritable_header")),
    # github.com/conda-forge/tensorflow-feedstock/issues/257 (nvidia-smi without the driver's libcuda)
    ("| NVIDIA-SMI 460.91.03    Driver Version: 460.91.03    CUDA Version: N/A      |",
     ("nvidia-smi-no-libcuda", "N/A")),
    # github.com/NVIDIA/nvidia-container-toolkit/issues/1246 (the same inside a container)
    ("inside the container, `nvidia-smi` might report `CUDA Version: ERR!`",
     ("nvidia-smi-no-libcuda", "ERR!")),
    ("| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2     |", None),
    # github.com/keras-team/keras/issues/20572 (pip's resolver: tensorflow-text has no cp312 wheel)
    ('    keras-hub 0.17.0 depends on tensorflow-text; platform_system != "Darwin"',
     ("companion-no-wheel", "tensorflow-text")),
    # github.com/keras-team/keras-hub/issues/1649 (pip list: the placeholder release it fell back to)
    ("keras-nlp                 0.0.0", ("companion-no-wheel", "keras-nlp")),
    ("keras-nlp                 0.12.1", None),
    # github.com/keras-team/keras-hub/issues/1649 (the reporter's finding): the user's words are a
    # fact (triage's intent.no_wheel, judged by companion-wheel), never a log cause
    ("I found the reason. tensorflow-text has no distribution for python3.12.", None),
    # github.com/keras-team/keras-hub/issues/1417 (keras-nlp when tensorflow_text does not import)
    ("ImportError: WordPieceTokenizer requires the `tensorflow-text` package. Please install with "
     "`pip install tensorflow-text`.", ("companion-import-failed", "tensorflow-text")),
    # github.com/ageron/handson-ml3/issues/163: words, read as facts (intent.worked_with)
    ("Upgrading from TensorFlow 2.15 to 2.16 introduces inconsistencies due to the shift from Keras 2 to "
     "Keras 3.", None),
    ("I moved from Keras 3 back to Keras 2", None),
    # github.com/microsoft/windows-ai-docs/issues/119 (the DirectML plugin has no cp311 wheel)
    ("ERROR: No matching distribution found for tensorflow-directml-plugin",
     ("companion-no-wheel", "tensorflow-directml-plugin")),
    ("ERROR: No matching distribution found for tensorflow==2.4.1",
     ("no-matching-wheel", "tensorflow==2.4.1")),
    # github.com/microsoft/tensorflow-directml-plugin/issues/331 (the plugin under TF 2.11)
    ("tensorflow.python.framework.errors_impl.NotFoundError: C:\\ProgramData\\Miniconda3\\envs\\tfdml_plugin"
     "\\lib\\site-packages\\tensorflow-plugins\\tfdml_plugin.dll not found",
     ("directml-plugin-incompatible", "tfdml_plugin.dll")),
    # github.com/tensorflow/tfjs/issues/8323 (tensorflow.dll not beside the addon after a reinstall)
    ("\\\\?\\C:\\GoogleDrive\\paper_table\\node_modules\\@tensorflow\\tfjs-node-gpu\\lib\\napi-v8\\"
     "tfjs_binding.node", ("tfjs-binding-not-loaded", "tfjs_binding.node")),
    # github.com/SciSharp/TensorFlow.NET/issues/794 (Redist 2.4.0 under TensorFlow.NET 0.40)
    ("Unhandled exception. System.EntryPointNotFoundException: Unable to find an entry point named "
     "'TF_StringInit' in DLL 'tensorflow'.", ("binding-native-mismatch", "TF_StringInit")),
    # github.com/tensorflow/tfjs/issues/8505 (XLA without a usable ptxas)
    ("Relying on driver to perform ptx compilation. Modify $PATH to customize ptxas location.",
     ("ptxas-fallback-to-driver", None)),
    # github.com/rstudio/keras3/issues/1509 (install_keras(gpu = TRUE) installed tensorflow-cpu): a
    # claim about what is installed, read by triage's prose as a fact
    ("from the installation messages, it was always the CPU version that is installed.", None),
    # github.com/tensorflow/build/issues/217 (TF 2.18's latest-gpu image: cuDNN 8.9 for a TF that loads 9)
    ("I'm using apptainer pull docker://tensorflow/tensorflow:latest-gpu, but tensorflow 2.18 is skipping",
     ("docker-latest-gpu-cudnn8", "latest-gpu")),
    # pyhpc-benchmarks#17 (the tensorflow-gpu placeholder on PyPI)
    ('      The "tensorflow-gpu" package has been removed!', ("tensorflow-gpu-removed", "tensorflow-gpu")),
    # iperov/DeepFaceLab#957 (Windows error 1455, in Russian) and its English text
    ("ImportError: DLL load failed: Файл подкачки слишком мал для завершения операции.",
     ("windows-pagefile-too-small", None)),
    ("OSError: [WinError 1455] The paging file is too small for this operation to complete",
     ("windows-pagefile-too-small", "1455")),
    # github.com/tensorflow/tensorflow/issues/79370 (Ubuntu 24.04's Python: PEP 668, no pip)
    ("/usr/bin/python3: No module named pip", ("python-externally-managed", "/usr/bin/python3")),
    # pip's own PEP 668 refusal (reconstructed: pip's message header, quoted in PEP 668's examples)
    ("error: externally-managed-environment", ("python-externally-managed", None)),
    # github.com/tensorflow/serving/issues/2214 (an XLA-compiled model on the Serving GPU image)
    ("Could not find compiler for platform CUDA: NOT_FOUND: could not find registered compiler for platform "
     "CUDA -- was support for that platform linked in?", ("xla-gpu-compiler-missing", "CUDA")),
    # github.com/tensorflow/decision-forests/issues/214 (TF-DF built for another TensorFlow)
    ("RuntimeError: Op type not registered 'SimpleMLLoadModelFromPathWithHandle' in binary running on host.",
     ("companion-op-missing", "SimpleMLLoadModelFromPathWithHandle")),
    ("Op type not registered 'MyCustomOp' in binary running on host.", None),
    # github.com/tensorflow/tfx/issues/5966 (XLA on an image whose cuDNN is older than TF's)
    ("RET_CHECK failure (tensorflow/compiler/xla/service/gpu/gpu_compiler.cc:618) dnn != nullptr",
     ("cudnn-failed", None)),
    # github.com/tensorflow/tensorflow/issues/110956 (the last line of TF's libraries message, quoted alone)
    ("python3.10 + tensorflow2.20 Skipping registering GPU devices...", ("gpu-libraries-missing", None)),
    # github.com/tensorflow/serving/issues/1914 (a TF-TRT model whose libnvinfer did not load)
    ("2021-09-13 03:30:26.137847: F external/org_tensorflow/tensorflow/compiler/tf2tensorrt/stub/"
     "nvinfer_stub.cc:49] getInferLibVersion symbol not found.",
     ("tensorrt-not-loaded", "getInferLibVersion")),
]


@pytest.mark.parametrize("line, expected", FIELD_LINES)
def test_field_lines_map_to_causes(line: str, expected: tuple[str, str | None]) -> None:
    assert logmap.recognise(line) == expected


def test_user_code_symbolic_keras_error_is_not_the_numpy_cause() -> None:
    """Keras's own message for user code that feeds a KerasTensor to NumPy is another error."""
    assert logmap.recognise("Cannot convert a symbolic Keras input/output to a numpy array.") is None


def test_a_cause_id_the_catalogue_does_not_hold_is_reported_not_dropped() -> None:
    """A log cause whose id has no catalogue record (a vocabulary classified the line into a cause
    not yet merged, or a document from another tfdoctor) is quoted as tf-log-unrecognised, never
    silently skipped."""
    line = "E0000 00:00:1721811870.196385   15886 nccl_utils.cc:42] NCCL failure in a made-up way"
    cause = LogCause(id="no-such-cause", line=line, subject=None)
    smoke = SmokeFacts(python="python", outcome="completed", devices=(SmokeDevice("CPU:0", "CPU"),),
                       recipes=(RecipeResult("devices", None, "passed"),), causes=(cause,))
    log = run_check(_REGISTRY["smoke-log"], make_facts(smoke), CheckConfig()).findings
    assert [f.id for f in log] == ["tf-log-unrecognised"]
    assert "NCCL failure in a made-up way" in log[0].message
