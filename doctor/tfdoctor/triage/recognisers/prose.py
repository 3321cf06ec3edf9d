"""What the user says in words: "TensorFlow 2.11", "numpy 1.20.1", "Windows 11", "Python 3.9", "WSL2",
"CUDA 12.4".

Claims, not measurements: the assembler takes a fact from here only when no tool output in the
ticket gives it. Each pattern needs a version-shaped token, so prose without one says nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.textgate import Gate, folded, gated
from tfdoctor.triage.observe import Observation
from tfdoctor.triage.recognisers._text import MAX_LINE, clean, gated_lines, strip_prompt

NAME = "ticket prose"

_TF = gated(re.compile(
    r"\b(?:tensorflow(?:[-_ ]gpu)?|TF(?:[-_ ]GPU)?)(?:\s*(?:version)?\s*(?:==|=|:|v)?\s*)(?P<v>2\.\d{1,2}(?:\.\d{1,2})?"
    r"(?:rc\d)?)\b",
    re.IGNORECASE,
))
# "keras 2.11.0", "numpy==1.20.1": a full version, so "Keras 3" or "NumPy 2" in passing says nothing.
# The packages that break TensorFlow most (checks/packages.py judges them against TF's ranges).
_PACKAGE = gated(re.compile(r"(?<![\w-])(?P<n>keras|numpy|protobuf)(?:\s*(?:version)?\s*(?:==|=|:|v)?\s*)"
                      r"(?P<v>\d{1,2}\.\d{1,2}\.\d{1,2})\b", re.IGNORECASE))
_PY = gated(re.compile(r"\bPython\s*(?:version)?\s*:?\s*(?P<v>3\.\d{1,2}(?:\.\d{1,2})?)\b", re.IGNORECASE))
_WIN = gated(re.compile(
    r"\b(?:Windows|Win)\s*(?:10|11|Server)\b|\bnative Windows\b|\bwin(?:10|11)\b", re.IGNORECASE
))
_WSL = gated(re.compile(r"\bWSL\s*(?P<v>[12])?\b", re.IGNORECASE))
_LINUX = gated(re.compile(
    r"\b(?P<d>Ubuntu|Debian|CentOS|Rocky Linux|Fedora|RHEL|Linux Mint|Pop!_OS|Arch Linux)"
    r"(?:\s+(?P<v>\d{1,2}(?:\.\d{1,2})?))?",
    re.IGNORECASE,
))
_MAC = gated(re.compile(r"\bmacOS\b|\bMac ?OS X\b|\bApple (?:M1|M2|M3|Silicon)\b", re.IGNORECASE))
_GPU = gated(re.compile(
    r"\b(?P<g>(?:GeForce |NVIDIA |Quadro )?(?:RTX|GTX|Tesla|Titan|Quadro)\s?[A-Z]?\d{3,4}[A-Za-z]*"
    r"(?: Ti| SUPER)?|(?:NVIDIA )?RTX PRO \d{4}(?: Blackwell)?"
    r"|(?:NVIDIA )?(?:A100|H100|H200|V100|P100|T4|L4|L40S?|A10G?|A6000|K80|G?B[12]00)\b)"
))
# "GPU model and memory: 5070TI": a GeForce model without its RTX, on a line about the GPU
_BARE_MODEL = gated(re.compile(r"(?<![\w.])(?P<g>(?:20|30|40|50)[5-9]0(?:\s?Ti|TI| SUPER)?)(?![\w.])"))
_GPU_WORDS = gated(re.compile(r"\b(?:GPUs?|CUDA|cuDNN|NVIDIA)\b"))
# A program's own output, not the user's words: TensorFlow/XLA log lines ("gpu_device.cc:2251]"),
# traceback frames. TensorFlow's log says "GPU" on machines that have none.
_PROGRAM_LINE = gated(re.compile(r"\.(?:cc|cpp|h|py):\d+\]|^\s*File \""))
# "CUDA 12.4", "CUDA toolkit 11.8": the toolkit the user says is installed. Not nvidia-smi's "CUDA
# Version: 12.2" (the driver's), nor a sentence quoting what some release requires.
_CUDA = gated(re.compile(r"\b(?:CUDA(?:\s+toolkit)?|cudatoolkit)\s*(?:==|=|v)?\s*(?P<v>(?:9|1[0-3])\.\d)(?![\d])",
                   re.IGNORECASE))
# "cuDNN 7.4.1", "cudnn version: 8.1": the cuDNN the user says is installed (judged per element,
# against the build's cuDNN, when nothing else in the ticket shows the libraries).
_CUDNN = gated(re.compile(r"\bcudnn\s*(?:version)?\s*(?:==|=|:|v)?\s*v?(?P<v>[5-9]\.\d{1,2}(?:\.\d{1,3})?)(?![\d.])",
                    re.IGNORECASE))
_NOT_INSTALLED = gated(re.compile(r"Driver Version|NVIDIA-SMI|^\s*\||requir|need|support|compatib|recommend|"
                            r"tested|built|compiled|\bfor CUDA|instead of", re.IGNORECASE))
# An NVIDIA Jetson (an Arm board with an integrated GPU): by name or by its own tools
_JETSON = gated(re.compile(r"\b(?:Jetson|JetPack|jtop|L4T|Tegra)\b", re.IGNORECASE))
# ... unless the user says it is theirs: "my CUDA 10.2", "now with cuda 12.2", "installs cudatoolkit"
_MINE = gated(re.compile(r"\b(?:my|I have|I've got|I installed|installs?|installed|I'm using|I am using|using|"
                   r"now (?:with|on|using))\s+(?:the\s+)?(?:CUDA|cudatoolkit)\b", re.IGNORECASE))
_AND_CUDA = gated(re.compile(r"\btensorflow\[and-cuda\]", re.IGNORECASE))
# What the user says is installed: "the CPU version that is installed", "cpu build is installed"
_CPU_BUILD = gated(re.compile(r"\bcpu[- ](?:only )?(?:build|version|variant)s? (?:that )?(?:of tensorflow )?"
                              r"(?:is|was|are|were|gets|got|being) (?:installed|pulled|picked)", re.IGNORECASE))
# "libcudart.so.11.0 not found": a CUDA library the user says TensorFlow cannot find (a fact judged by
# cuda-libraries like a probed library that did not resolve; TensorFlow's own message for it is
# dso_loader's "Could not load dynamic library", a log line)
_LIBRARY_MISSING = gated(re.compile(
    r"\b(?P<s>lib(?P<n>cudart|cublaslt|cublas|cufft|curand|cusolver|cusparse|cudnn|nccl)\w*\.so[.\d]*)"
    r"\s+(?:is\s+)?(?:not found|missing)", re.IGNORECASE))
_LIBRARY_NAMES = {"cublaslt": "cublasLt"}
# "works in tf 2.15 ... fails in 2.16", "upgrading from TensorFlow 2.15 to 2.16": the release the code
# worked with, and the one in hand (checks/packages.py judges a move across Keras 2 -> 3)
_WORKED = gated(re.compile(
    r"\bwork(?:s|ed|ing)?(?: \w+){0,2} (?:in|with|on|under) (?:tensorflow|tf) ?v?(?P<was>2\.\d{1,2})(?:\.\d{1,2})?\b"
    r".{0,80}?(?:tensorflow|tf) ?v?(?P<now>2\.\d{1,2}(?:\.\d{1,2})?)\b"
    r"|\bupgrad\w* from (?:tensorflow|tf) ?v?(?P<was2>2\.\d{1,2})(?:\.\d{1,2})?\b[^.]{0,20}? to "
    r"(?:tensorflow |tf )?v?(?P<now2>2\.\d{1,2}(?:\.\d{1,2})?)\b", re.IGNORECASE))
# "with MirroredStrategy the loss becomes NaN": the user's own multi-GPU run gave wrong numbers, a
# result like tfdoctor's multi-device recipe's wrong all-reduce (checks/smoke_perf.py judges both)
_MULTI_GPU_NAN = gated(re.compile(
    r"(?:MirroredStrategy|multi-?gpu|multiple gpus|pairs? of gpus)[^\n]{0,80}\bnan\b"
    r"|\bnan\b[^\n]{0,80}(?:MirroredStrategy|multi-?gpu|multiple gpus|pairs? of gpus)", re.IGNORECASE))
# "pip install tensorflow-gpu==2.12.0rc0": the requirements a ticket asks pip for (a command the user
# ran, a fact; checks/tensorflow.py judges them against what PyPI has)
_PIP_INSTALL = gated(re.compile(
    r"(?:^|[\s`$>])(?:pip3?|python3?\s+-m\s+pip|uv\s+pip)\s+install\s+(?P<args>[^\n`#;|&]+)", re.IGNORECASE))
_REQUIREMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[\w,.-]+\])?(?:[=<>!~]=?[\w.*+!]+(?:,[=<>!~]=?[\w.*+!]+)*)?")
_CONDA = gated(re.compile(r"\bconda (?:install|create|env|activate)\b|\bminiconda|\banaconda\b", re.IGNORECASE))


_PACKAGE_KINDS = frozenset(f"python.package:{name}" for name in ("keras", "numpy", "protobuf"))
_CLAIM_GATE = Gate(g.pattern for g in (_TF, _PACKAGE, _PY, _WSL, _WIN, _LINUX, _MAC, _CUDA, _CUDNN, _GPU,
                                         _GPU_WORDS, _JETSON, _AND_CUDA, _CONDA, _CPU_BUILD,
                                         _LIBRARY_MISSING, _WORKED, _MULTI_GPU_NAN, _PIP_INSTALL))
"""Every pattern a claim needs (a bare model counts only beside _GPU_WORDS; the others only
qualify a claim): a line none of them can match says nothing."""


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """The first claim of each kind (of each package, for package versions); a GPU's model
    wins over an earlier bare "GPU"."""
    done: set[str] = set()
    generic: Observation | None = None
    # Each pattern runs only on lines holding the literal text it needs (tfdoctor.textgate), and a line where
    # no claim's pattern finds its text is never looked at: a dozen case-insensitive searches on
    # every line made long tickets slow (issue 21).
    # (The gate reads the raw lines: what a cleaned line holds, its raw line holds too.)
    keyed = gated_lines(lines, _CLAIM_GATE.lines_in)
    # (number, line) only: a folded copy of every line kept is a hundred MB of an 8 MiB ticket
    prose = [(i + 1, line) for i in (range(len(lines)) if keyed is None else sorted(keyed))
             if len(lines[i]) <= MAX_LINE and (line := clean(lines[i])) and len(line) <= 2000
             and not _PROGRAM_LINE.search(line, folded(line))]
    del keyed
    # "wsl2 in windows 11": Windows hosts WSL, whose TensorFlow is Linux's, wherever it is said
    wsl = any(_WSL.search(line, folded(line)) for _, line in prose)
    for number, line in prose:
        for path, value in _claims(line, folded(line), done):
            if wsl and (path, value) == ("platform.system", "Windows"):
                continue
            if path == "intent.gpu" and value == "GPU":
                generic = generic or Observation(path, value, number, NAME)
                continue
            # a package or a library: one claim per name
            kind = f"{path}:{value[0]}" if isinstance(value, tuple) else path
            if kind not in done:
                done.add(kind)
                yield Observation(path, value, number, NAME)
    if generic is not None and "intent.gpu" not in done:
        yield generic


def _claims(line: str, low: str, done: set[str]) -> Iterator[tuple[str, object]]:
    """What the line claims, skipping the searches whose every kind is already done (recognise
    keeps only the first claim of a kind)."""
    if "intent.worked_with" not in done:
        worked = _WORKED.search(line, low)
        if worked:
            yield "intent.worked_with", worked.group("was") or worked.group("was2")
            yield "tensorflow.version", worked.group("now") or worked.group("now2")
    if "tensorflow.version" not in done:
        tf = _TF.search(line, low)
        if tf:
            yield "tensorflow.version", tf.group("v")
    if not _PACKAGE_KINDS <= done:
        for package in (_PACKAGE.pattern.finditer(line) if _PACKAGE.could_match(line, low) else ()):
            yield "python.package", (package.group("n").lower(), package.group("v"))
    if "python.version" not in done:
        py = _PY.search(line, low)
        if py:
            yield "python.version", py.group("v")
    if not {"platform.is_wsl", "platform.system", "platform.wsl_version"} <= done:
        wsl = _WSL.search(line, low)
        if wsl:
            yield "platform.is_wsl", True
            yield "platform.system", "Linux"
            if wsl.group("v"):
                yield "platform.wsl_version", int(wsl.group("v"))
        elif _WIN.search(line, low):
            yield "platform.system", "Windows"
    if not {"platform.system", "platform.distro"} <= done:
        linux = _LINUX.search(line, low)
        if linux:
            yield "platform.system", "Linux"
            yield "platform.distro", " ".join(p for p in (linux.group("d"), linux.group("v")) if p)
    if "platform.system" not in done and _MAC.search(line, low):
        yield "platform.system", "Darwin"
    if "toolkit.claimed_version" not in done:
        cuda = _CUDA.search(line, low)
        if cuda and (_MINE.search(line, low) or not _NOT_INSTALLED.search(line, low)):
            yield "toolkit.claimed_version", cuda.group("v")
    if "toolkit.claimed_cudnn" not in done:
        cudnn = _CUDNN.search(line, low)
        if cudnn and not _NOT_INSTALLED.search(line, low):
            yield "toolkit.claimed_cudnn", cudnn.group("v")
    if "intent.gpu" not in done:
        gpu = _GPU.search(line, low) or (_BARE_MODEL.search(line, low) if _GPU_WORDS.search(line, low) else None)
        if gpu:
            yield "intent.gpu", gpu.group("g")
        elif _GPU_WORDS.search(line, low):
            yield "intent.gpu", "GPU"
    if not {"platform.machine", "platform.system", "intent.gpu"} <= done and _JETSON.search(line, low):
        yield "platform.machine", "aarch64"
        yield "platform.system", "Linux"
        yield "intent.gpu", "Jetson"
    if "intent.and_cuda" not in done and _AND_CUDA.search(line, low):
        yield "intent.and_cuda", True
    if "tensorflow.is_cuda_build" not in done and _CPU_BUILD.search(line, low):
        yield "tensorflow.is_cuda_build", False
    if "python.conda" not in done and _CONDA.search(line, low):
        yield "python.conda", True
    if "run.multi_gpu_wrong" not in done and _MULTI_GPU_NAN.search(line, low):
        yield "run.multi_gpu_wrong", True
    pip = _PIP_INSTALL.search(line, low)
    if pip:
        args = [a.strip("'\"") for a in pip.group("args").split()[:20] if not a.startswith("-")]
        # a command line gives every requirement; inside a sentence only the first is surely one
        # ("pip install tensorflow==2.6.0 brought in keras")
        command = strip_prompt(line).lower().startswith(("pip", "python", "uv "))
        wanted = tuple(a for a in (args if command else args[:1]) if _REQUIREMENT.fullmatch(a))
        if wanted:
            yield "intent.pip_install", wanted
    for lib in (_LIBRARY_MISSING.pattern.finditer(line) if _LIBRARY_MISSING.could_match(line, low) else ()):
        name = lib.group("n").lower()
        name = _LIBRARY_NAMES.get(name, name)
        yield "library.missing", (name, "lib" + name + lib.group("s")[3 + len(name):])
