"""`/proc/driver/nvidia/version`: the loaded kernel module's version, and whether it is the open one.

The file exists only while the nvidia module is loaded, so its first line means loaded and `cat`'s
"No such file or directory" means not loaded. Proprietary modules print
"NVIDIA UNIX x86_64 Kernel Module  535.104.05", open ones "NVIDIA UNIX Open Kernel Module for x86_64
550.54.14" (NVIDIA/open-gpu-kernel-modules utils.mk).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "/proc/driver/nvidia/version"

_VERSION = re.compile(
    r"NVRM version: NVIDIA UNIX (Open )?(?:[\w-]{1,20} )?Kernel Module(?: for [\w-]{1,20})?"
    r"\s+(\d+\.\d+(?:\.\d+)?)\b"
)
_TRIGGER = Trigger(("NVRM version:", "/proc/driver/nvidia/version"))
_MISSING = "/proc/driver/nvidia/version: no such file or directory"


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """Kernel module version, open flavour and loaded state from the file or its absence."""
    for number, s in Walk(lines, _TRIGGER):
        if "NVRM version:" in s:
            m = _VERSION.search(s)
            if m:
                yield Observation("driver.kernel_module_version", m.group(2), number, NAME)
                yield Observation("driver.kernel_module_open", m.group(1) is not None, number, NAME)
                yield Observation("driver.nvidia_module_loaded", True, number, NAME)
        elif "/proc/driver/nvidia/version" in s:
            t = s.strip().lower()
            if t.endswith(_MISSING) and t.startswith(("cat:", "head:", "less:", "more:", "tail:")):
                yield Observation("driver.nvidia_module_loaded", False, number, NAME)
