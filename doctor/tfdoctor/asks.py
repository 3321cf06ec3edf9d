"""What to ask for: the commands whose output would decide the checks that could not check."""

# ruff: noqa: E501  (COMMANDS is a table)
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tfdoctor import stack
from tfdoctor.findings import CheckStatus
from tfdoctor.knowledge import catalogue
from tfdoctor.smoke.logmap import HARMLESS

if TYPE_CHECKING:
    from tfdoctor.facts import Facts
    from tfdoctor.report import Report


@dataclass(frozen=True, slots=True)
class AskFor:
    """One thing to collect: the fact path, the command that shows it, the checks it decides."""

    fact: str
    command: str
    decides: tuple[str, ...]


TF_LOG = ("TF_CPP_MIN_LOG_LEVEL=0 python -c \"import tensorflow as tf; "
          "print(tf.config.list_physical_devices())\"  # the whole log")
BUILD = "python -c \"import tensorflow as tf; print(tf.__version__, tf.sysconfig.get_build_info())\""

# fact path -> (area, command). Areas are the ask vocabulary of the field corpus
# (tests/field/causes.toml [ask]); several paths share a command, which is asked once.
COMMANDS: dict[str, tuple[str, str]] = {
    "driver": ("driver", "nvidia-smi"),
    "driver.gpus": ("driver", "nvidia-smi"),
    "driver.kernel_module": ("kernel-module",
                             "cat /proc/driver/nvidia/version; lsmod | grep -E 'nvidia|nouveau'"),
    "driver.device_nodes": ("kernel-module", "ls -l /dev/nvidia*"),
    "cuda_driver": ("tf-log", TF_LOG),
    "libraries": ("libraries", "ldconfig -p | grep -E 'libcuda\\.so|libcudart|libcublas|libcudnn|libnccl'; ls \"$(python -c "
                               "'import site; print(site.getsitepackages()[0])')\"/nvidia/*/lib"),
    "tensorflow": ("packages", "pip list"),
    "tensorflow.distributions": ("packages", "pip list"),
    "python.packages": ("packages", "pip list"),
    "tensorflow.build": ("tf-build", BUILD),
    "tensorflow.requirements": ("packages", "pip show tensorflow"),
    "xla": ("env", "which ptxas; ptxas --version; echo \"$XLA_FLAGS\""),
    "toolkits": ("toolkit", "nvcc --version; ls -d /usr/local/cuda*"),
    "env": ("env", "env | grep -E 'CUDA|LD_LIBRARY_PATH|XLA|TF_'"),
    "python.version": ("packages", "python --version"),
    "platform.system": ("platform", "uname -a; cat /etc/os-release"),
    "platform.machine": ("platform", "uname -a; cat /etc/os-release"),
    "platform.distro": ("platform", "uname -a; cat /etc/os-release"),
    "platform.glibc": ("platform", "ldd --version | head -1"),
    "platform.in_container": ("platform", "uname -a; cat /etc/os-release"),
    "platform.is_wsl": ("platform", "uname -a; cat /etc/os-release"),
    "platform.cpu_flags": ("cpu", "grep -o -w -E 'avx|avx2|fma|sse4_2' /proc/cpuinfo | sort -u"),
    "platform.release": ("platform", "uname -a; cat /etc/os-release"),
    "host": ("kernel-module", "sudo dmesg | grep -i -E 'nvrm|xid|dmar|iommu'"),
}
WINDOWS: dict[str, tuple[str, str]] = {
    "libraries": ("libraries", "where cudart64_*.dll cublas64_*.dll cudnn*64_*.dll zlibwapi.dll"),
    "xla": ("env", "where ptxas & ptxas --version & echo %XLA_FLAGS%"),
    "toolkits": ("toolkit", "nvcc --version & echo %CUDA_PATH%"),
    "env": ("env", "set | findstr /I \"CUDA PATH TF_\""),
    "platform.system": ("platform", "ver"),
    "platform.machine": ("platform", "ver"),
    "platform.distro": ("platform", "ver"),
    "platform.glibc": ("platform", "ver"),
    "platform.in_container": ("platform", "ver"),
    "platform.is_wsl": ("platform", "ver"),
    "platform.release": ("platform", "ver"),
    "platform.cpu_flags": ("cpu", "wmic cpu get name"),
}
"""Native Windows: its commands where the Linux ones do not run. It has no kernel module or kernel
log to show, so those facts are asked as nvidia-smi; the CUDA DLLs TensorFlow loads come from the
toolkit's bin directory on PATH, so the toolkit is asked before the DLLs."""
TFJS: dict[str, tuple[str, str] | None] = {
    "cuda_driver": ("tf-log", "TF_CPP_MIN_LOG_LEVEL=0 node -e \"require('@tensorflow/tfjs-node-gpu')\"  # the whole log"),
    "libraries": ("libraries", "ldconfig -p | grep -E 'libcuda\\.so|libcudart|libcublas|libcudnn'; "
                               "ls node_modules/@tensorflow/tfjs-node*/deps/lib"),
    "tensorflow": None,
    "python": None,
}
"""TensorFlow.js in Node.js (IntentFacts.binding "tfjs-node"): its TensorFlow is the libtensorflow
its native addon loads, so Python's pip and prints show nothing of it, and nothing tfdoctor reads
shows it but TensorFlow's own log, which Node.js prints as it loads the addon (None: nothing to ask
for that fact)."""
LINUX_ONLY = ("driver.kernel_module", "driver.device_nodes", "host")
LIMIT = 4
"""At most this many asks: support asks for a few things, not for everything."""

EVIDENCE: dict[str, tuple[str, ...]] = {c.id: c.asks for c in catalogue().causes.values() if c.asks}
"""Finding -> the facts that would confirm or refute its cause (the catalogue's `asks`): asked first,
when unknown."""


def area_of(fact: str) -> str:
    """The ask area of a fact path (its longest listed prefix)."""
    parts = fact.split(".")
    for i in range(len(parts), 0, -1):
        hit = COMMANDS.get(".".join(parts[:i]))
        if hit:
            return hit[0]
    return fact


def ask_for(report: Report) -> tuple[AskFor, ...]:
    """One ask per command: first the commands whose output would confirm or refute the findings
    the report points at (EVIDENCE), then by how many checks each decides and how low in the stack
    they sit (registration order is bottom of the stack first)."""
    windows = report.facts.platform.system == "Windows" and not report.facts.platform.is_wsl
    binding = report.facts.intent.binding
    # From 2.14 (and wherever [and-cuda] is installed) TensorFlow's CUDA parts (ptxas, libdevice,
    # the libraries) come from pip's nvidia-* wheels, which pip list shows; before, from the
    # system's toolkit, which nvcc and its folder show
    release = stack.release_of(report.facts)
    wheels = report.facts.intent.and_cuda or (release is not None and stack.pip_era(release))

    def _command(fact: str) -> str | None:
        return _command_for(fact, windows, binding)

    def evidence_of(finding_id: str) -> tuple[str, ...]:
        facts = EVIDENCE.get(finding_id, ())
        if windows:
            facts = tuple(dict.fromkeys("driver" if f in LINUX_ONLY else f for f in facts))
        if windows and "libraries" in facts and "toolkits" in facts:
            rest = [f for f in facts if f != "toolkits"]
            facts = (*rest[:rest.index("libraries")], "toolkits", *rest[rest.index("libraries"):])
        if "toolkits" in facts and "python.packages" in facts:
            # the two take each other's places: the one this release gets its CUDA from first
            first, second = ("python.packages", "toolkits") if wheels else ("toolkits", "python.packages")
            places = sorted((facts.index("toolkits"), facts.index("python.packages")))
            swapped = list(facts)
            swapped[places[0]], swapped[places[1]] = first, second
            facts = tuple(swapped)
        return facts

    scores: dict[str, float] = {}
    facts_of: dict[str, str] = {}
    decides: dict[str, list[str]] = {}
    total = len(report.outcomes) or 1
    # What the report already points at comes first: the facts that would confirm its findings.
    pointed = [f for f in report.findings if not f.caused_by]
    # No TensorFlow log that says anything: ask early, and before nvidia-smi (below). The log of one
    # import shows what of nvidia-smi matters to TensorFlow (the driver's version and errors as
    # libcuda reports them, the GPUs TensorFlow creates and their compute capability) and more:
    # every library it loads or cannot. pip list keeps its own rank (what is installed, another
    # area). Not before nvidia-smi on several GPUs at once (the GPUs were found: how they connect is
    # the question, which nvidia-smi topo and the kernel show), nor on WSL (nvidia-smi there shows
    # whether the Windows driver reaches Linux at all, which TensorFlow's log cannot tell from a
    # driver not installed).
    log = _command("cuda_driver") or TF_LOG
    no_log = _no_log(report) and not report.facts.known("cuda_driver")
    if no_log:
        scores[log] = 8.0
        facts_of[log] = "cuda_driver"
        decides[log] = []
    evidence: dict[str, float] = {}
    for index, finding in enumerate(pointed):
        weight = min(index, 3)
        for rank, fact in enumerate(evidence_of(finding.id)):
            command = _command(fact)
            if command is None or _known(report, fact):
                continue
            # The strongest reason to ask counts, not how many findings share it.
            evidence[command] = max(evidence.get(command, 0.0), 40.0 - 10 * weight - 3 * rank)
            facts_of.setdefault(command, fact)
            decides.setdefault(command, [])
            if finding.id not in decides[command]:
                decides[command].append(finding.id)
    for command, value in evidence.items():
        scores[command] = scores.get(command, 0.0) + value
    for rank, outcome in enumerate(report.outcomes):
        if outcome.status is not CheckStatus.COULD_NOT_CHECK:
            continue
        for fact in outcome.missing:
            fact = "driver" if windows and fact in LINUX_ONLY else fact
            command = _command(fact)
            if command is None:
                continue
            scores[command] = scores.get(command, 0.0) + 1.0 + (total - rank) / total
            facts_of.setdefault(command, fact)
            if outcome.check not in decides.setdefault(command, []):
                decides[command].append(outcome.check)
    if no_log and not report.facts.platform.is_wsl and not _several_gpus(report.facts):
        # before pip list too where the ticket is about a GPU and shows no install of its own: what
        # pip installed is the question where an install is in view, what fails to load otherwise
        above = [_command("driver")]
        if report.facts.intent.gpu and not report.facts.intent.pip_install:
            above.append(_command("python.packages"))
        scores[log] = max(scores[log], *(scores.get(c, 0.0) + 0.5 for c in above if c is not None))
    # what would confirm the findings comes first; the checks each command decides break ties
    best = sorted(scores, key=lambda c: (-evidence.get(c, 0.0), -scores[c]))[:LIMIT]
    return tuple(AskFor(facts_of[c], c, tuple(decides[c])) for c in best)


def _no_log(report: Report) -> bool:
    """No TensorFlow log, or a ticket's that shows only lines healthy machines print too."""
    s = report.facts.smoke
    return s is None or (s.outcome == "ticket" and not s.devices and not s.recipes
                         and all(c.id == HARMLESS for c in s.causes))


def _several_gpus(facts: Facts) -> bool:
    """The user runs TensorFlow on several GPUs at once: a multi-GPU strategy or CUDA_VISIBLE_DEVICES
    naming more than one."""
    visible = facts.env.get("CUDA_VISIBLE_DEVICES")
    return facts.intent.multi_gpu or (visible is not None and len([d for d in visible.split(",") if d.strip()]) > 1)


def _known(report: Report, fact: str) -> bool:
    """Known, and so is everything under it that the same command shows (a driver version read
    from TensorFlow's log leaves nvidia-smi's GPU list worth asking for); for the build, read from
    the ticket or the machine rather than assumed from the tables (a ticket that names only
    TensorFlow's version, maybe of a source build, shows nothing of it)."""
    facts = report.facts
    if fact == "driver" and not (facts.driver.driver_version or facts.driver.nvml_error
                                 or facts.driver.nvidia_smi_error):
        # GPUs TensorFlow's log registered, not the driver's own report: nvidia-smi still shows its
        # version, each GPU's memory in use and the processes holding it
        return False
    if fact == "tensorflow.build":
        # the tables' tested configuration stands in for a build nobody showed: worth asking
        return facts.known(fact) and "tensorflow.cuda_version" not in facts.assumed
    if not facts.known(fact):
        return False
    command = COMMANDS.get(fact)
    return not any(u.startswith(fact + ".") and command and area_of(u) == command[0]
                   for u in facts.unknown)


def _command_for(fact: str, windows: bool, binding: str | None = None) -> str | None:
    """The command that shows `fact` (its longest listed prefix) on this platform and binding;
    None where that binding has nothing to show it."""
    parts = fact.split(".")
    keys = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    key = next((k for k in keys if k in TFJS), None) if binding == "tfjs-node" else None
    if key is not None:
        own = TFJS[key]
        if own is None:
            return None
        if not (windows and key in WINDOWS):  # Windows' DLL search is the same for both
            return own[1]
    for key in keys:
        hit = (windows and WINDOWS.get(key)) or COMMANDS.get(key)
        if hit:
            return hit[1]
    return f"({fact})"
