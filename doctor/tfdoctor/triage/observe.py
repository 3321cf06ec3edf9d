"""What a recogniser reads out of pasted ticket text: observations of facts, each with its source.

A recogniser is a pure function `recognise(lines) -> Iterator[Observation]` over the whole ticket
(every input file, split into lines). It yields one Observation per fact it can read, naming the
fact by a path from `PATHS`, the line it came from, and itself. The assembler
(`triage.assemble`) turns observations into a partial Facts document: every fact that no
observation names stays unknown, never absent.
"""

from __future__ import annotations

# ruff: noqa: E501  (PATHS is a table: one line per path reads best)
from dataclasses import dataclass
from typing import Any

PATHS: dict[str, str] = {
    # driver (nvidia-smi, nvidia-smi -q, /proc/driver/nvidia/version, dmesg, lsmod)
    "driver.driver_version": "str: driver version, e.g. '535.104.05'",
    "driver.cuda_driver_version": "str: highest CUDA the driver supports, 'major.minor' (nvidia-smi 'CUDA Version')",
    "driver.kernel_module_version": "str: loaded kernel module version (/proc/driver/nvidia/version, dmesg NVRM)",
    "driver.kernel_module_open": "bool: NVIDIA's open kernel module",
    "driver.nvml_library_version": "str: user-space NVML / client version (nvidia-smi 'NVML library version', NVRM API mismatch 'client')",
    "driver.nvml_error": "str: NVML_ERROR_* name read from nvidia-smi's failure text",
    "driver.nvidia_smi_error": "str: the first line nvidia-smi printed when it failed",
    "driver.device_count": "int: GPUs nvidia-smi lists",
    "driver.gpu": "dict of GpuFacts fields (index, name, uuid, pci_bus_id, memory_total_mib, compute_capability, mig_mode, persistence_mode, ...): one GPU",
    "driver.nvidia_module_loaded": "bool: the nvidia kernel module is loaded (lsmod lists it / says it is missing)",
    "driver.nouveau_loaded": "bool: nouveau is loaded (lsmod, dmesg)",
    "driver.nvidia_modules": "tuple[str]: NVIDIA kernel modules lsmod lists",
    "driver.secure_boot": "bool: Secure Boot enabled (mokutil --sb-state, dmesg 'Secure boot enabled')",
    # host state (dmesg / journalctl -k)
    "host.kernel_log": "str: a kernel log line about the GPU (NVRM Xid, fallen off the bus, IOMMU/DMAR fault, module refused)",
    # CUDA toolkits (nvcc --version, paths)
    "toolkit.nvcc_version": "str: version nvcc prints ('release 11.8, V11.8.89' -> '11.8.89')",
    "toolkit.claimed_version": "str: CUDA major.minor the user says is installed (issue template 'CUDA/cuDNN version', 'CUDA 12.4')",
    "toolkit.header_cudnn": "str: the cuDNN version its header's macros give (cudnn_version.h or cudnn.h: '#define CUDNN_MAJOR 7' ... -> '7.6')",
    "toolkit.claimed_cudnn": "str: the cuDNN version the user says is installed ('cuDNN 7.4.1')",
    "xla.ptxas_version": "str: the ptxas version XLA's log names ('You are using ptxas 10.1.243', 'older than the ptxas CUDA version (12.5.40)')",
    "toolkit.conda_version": "str: the CUDA of a conda environment (conda list's cudatoolkit or cuda-version)",
    "toolkit.conda_cudnn": "str: the cuDNN of a conda environment (conda list's cudnn)",
    "toolkit.loaded_cudnn": "str: the cuDNN TensorFlow's log says it loaded ('Loaded cuDNN version 8904' -> '8.9.4')",
    "toolkit.dir": "str: an installed toolkit directory, e.g. /usr/local/cuda-11.8",
    # TensorFlow
    "tensorflow.version": "str: TensorFlow version, e.g. '2.15.0'",
    "tensorflow.distribution": "tuple[str, str]: (normalised name, version) of an installed TensorFlow distribution",
    "tensorflow.is_cuda_build": "bool: build_info is_cuda_build / tf.test.is_built_with_cuda()",
    "tensorflow.cuda_version": "str: CUDA TensorFlow was built with (build_info cuda_version)",
    "tensorflow.cudnn_version": "str: cuDNN TensorFlow was built with (build_info cudnn_version)",
    "tensorflow.cudart": "str: the CUDA runtime TensorFlow's loader opened or could not load (libcudart.so.10.1, cudart64_110.dll)",
    "tensorflow.compute_capabilities": "tuple[str]: build_info cuda_compute_capabilities, e.g. ('sm_35', 'compute_80')",
    # Python and packages (pip list / pip freeze / conda list / collect_env / tracebacks)
    "python.version": "str: Python version, e.g. '3.10.12'",
    "python.executable": "str: interpreter path",
    "python.package": "tuple[str, str]: (normalised name, version) of one installed package",
    "python.package_list": "str: a complete package listing was pasted ('pip list', 'pip freeze', 'conda list'): absent packages are absent",
    "python.conda": "bool: the environment is a conda environment",
    # libraries (ldconfig -p, TF log)
    "library.ldconfig": "tuple[str, str]: (soname, path) of an ldconfig -p entry",
    "library.file": "str: path of a CUDA library file the ticket lists on disk (collect_env cuDNN, tf_env cuda libs)",
    # platform (uname -a, /etc/os-release, collect_env)
    "platform.system": "str: e.g. 'Linux', 'Windows'",
    "platform.release": "str: kernel release",
    "platform.machine": "str: e.g. 'x86_64', 'aarch64'",
    "platform.distro": "str: e.g. 'Ubuntu 22.04.3 LTS'",
    "platform.glibc": "str: glibc version, e.g. '2.35'",
    "platform.cpu_flags": "tuple[str]: CPU flags the ticket shows (avx, avx2, fma, ...)",
    "platform.cpu_model": "str: CPU model name",
    "platform.is_wsl": "bool: WSL (microsoft in the kernel release)",
    "platform.wsl_version": "int: 1 or 2",
    "platform.in_container": "bool: inside a container",
    # environment variables (tf_env_collect.sh, env | grep, shell lines)
    "env": "tuple[str, str]: (name, value) of an environment variable the ticket shows",
    # TensorFlow's log (the tf_log recogniser)
    "log.cause": "LogCause: a recognised TensorFlow/XLA log line",
    "log.gpu_device": "dict: a GPU TensorFlow itself registered (name, compute_capability, pci_bus_id)",
    "log.gpu_list": "int: the number of GPUs TensorFlow listed (list_physical_devices output)",
    "log.libcuda_loaded": "str: TensorFlow's log says it opened libcuda (the driver library loads)",
    "intent.gpu": "str: a GPU the user says they have (prose): the ticket is about using a GPU",
    "library.missing": "tuple[str, str]: (name, soname) of a CUDA library the user says is not found",
    "tensorrt.wanted": "str: the TensorRT TensorFlow loads for TF-TRT: its DSO loader's libnvinfer soname ('libnvinfer.so.7') or get_linked_tensorrt_version() ('7.2.2')",
    "tensorrt.installed": "str: the TensorRT installed: a version (a libnvinfer package, get_loaded_tensorrt_version()) or the soname TensorFlow's loader opened",
    "tensorrt.stated": "str: a libnvinfer soname the user says is installed ('the actual libraries are named libnvinfer.so.10')",
    "intent.and_cuda": "bool: the ticket installs tensorflow[and-cuda] (the pip CUDA wheels)",
    "intent.worked_with": "str: a TensorFlow release the user says the code worked with (prose)",
    "intent.pip_install": "tuple[str]: the requirements of a pip install command in the ticket, and the wheels pip shows it fetches",
    "intent.no_wheel": "str: a package the user says pip has no wheel or distribution of (prose), its PyPI name",
    "intent.start_seconds": "float: how long the user says each start of GPU work takes, in seconds (prose)",
    "platform.hosted": "str: the hosted notebook runtime the ticket runs on ('Google Colab'), from its words or google.colab",
    "intent.multi_gpu": "bool: the ticket runs TensorFlow on several GPUs at once (a multi-GPU tf.distribute strategy in its code, or its words)",
    "intent.binding": "str: the binding the ticket runs TensorFlow through when not Python's ('tfjs-node': TensorFlow.js in Node.js)",
    "run.multi_gpu_wrong": "bool: the user's multi-GPU training gives NaN or wrong numbers (prose)",
}
"""Every path an observation may name, with the value it carries."""


@dataclass(frozen=True, slots=True)
class Observation:
    """One fact read from the ticket."""

    path: str
    """A key of PATHS."""
    value: Any
    """The value, of the type PATHS names."""
    line: int
    """1-based line number in the ticket where it was read (the first line of a block)."""
    source: str
    """The recogniser that read it, e.g. "nvidia-smi", "pip list"."""


_SET_PATH, _SET_VALUE, _SET_LINE, _SET_SOURCE = (
    getattr(Observation, name).__set__ for name in ("path", "value", "line", "source"))


def _init(self: Observation, path: str, value: Any, line: int, source: str) -> None:
    """The dataclass's own __init__, its fields set through their slots (a frozen dataclass's
    __init__ calls object.__setattr__ by name for each: 1.0 against 0.6 us an observation, and a
    pasted pip list makes hundreds of thousands; issue 21)."""
    _SET_PATH(self, path)
    _SET_VALUE(self, value)
    _SET_LINE(self, line)
    _SET_SOURCE(self, source)


Observation.__init__ = _init  # type: ignore[method-assign]
