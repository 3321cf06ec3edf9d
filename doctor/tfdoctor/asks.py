"""What to ask for: the commands whose output would decide the checks that could not check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfdoctor.findings import CheckStatus

if TYPE_CHECKING:
    from tfdoctor.report import AskFor, Report

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
    "libraries": ("tf-log", TF_LOG),
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
    "host": ("kernel-module", "sudo dmesg | grep -i -E 'nvrm|xid|dmar|iommu'"),
}
LIMIT = 4
"""At most this many asks: support asks for a few things, not for everything."""


def area_of(fact: str) -> str:
    """The ask area of a fact path (its longest listed prefix)."""
    parts = fact.split(".")
    for i in range(len(parts), 0, -1):
        hit = COMMANDS.get(".".join(parts[:i]))
        if hit:
            return hit[0]
    return fact


def ask_for(report: Report) -> tuple[AskFor, ...]:
    """One ask per command, ranked by how many checks it decides and how low in the stack they
    sit (registration order is bottom of the stack first); checks whose area already has an
    error are not worth asking about."""
    from tfdoctor.report import AskFor

    scores: dict[str, float] = {}
    facts_of: dict[str, str] = {}
    decides: dict[str, list[str]] = {}
    total = len(report.outcomes) or 1
    for rank, outcome in enumerate(report.outcomes):
        if outcome.status is not CheckStatus.COULD_NOT_CHECK:
            continue
        for fact in outcome.missing:
            command = _command(fact)
            scores[command] = scores.get(command, 0.0) + 1.0 + (total - rank) / total
            facts_of.setdefault(command, fact)
            if outcome.check not in decides.setdefault(command, []):
                decides[command].append(outcome.check)
    best = sorted(scores, key=lambda c: -scores[c])[:LIMIT]
    return tuple(AskFor(facts_of[c], c, tuple(decides[c])) for c in best)


def _command(fact: str) -> str:
    parts = fact.split(".")
    for i in range(len(parts), 0, -1):
        hit = COMMANDS.get(".".join(parts[:i]))
        if hit:
            return hit[1]
    return f"({fact})"
