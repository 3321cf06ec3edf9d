"""The kernel log (`dmesg`, `journalctl -k`, /var/log/syslog): NVRM and IOMMU lines about the GPU.

NVRM's "API mismatch" names the user-space (client) and kernel module versions; it is wrapped over
up to five lines ("NVRM: " continuation prefixes) or, from rsyslog, one line with "#012" for each
newline. Xid, bus drops, IOMMU faults and refused modules are kept verbatim as host.kernel_log.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk, clean

NAME = "kernel log"

_MISMATCH = re.compile(
    r"has the version (\d+\.\d+(?:\.\d+)?), but this kernel module has the version (\d+\.\d+(?:\.\d+)?)"
)
_LOADING = re.compile(
    r"NVRM: loading NVIDIA UNIX (Open )?(?:[\w-]{1,20} )?Kernel Module(?: for [\w-]{1,20})?"
    r"\s+(\d+\.\d+(?:\.\d+)?)"
)
_NOUVEAU = re.compile(r"\bnouveau [0-9a-fA-F]{4}:[0-9a-fA-F]{2}:|Initialized nouveau|nouveaudrmfb")
# Substrings of kernel lines worth keeping whole: GPU faults, the bus, the IOMMU, refused modules.
NOTABLE = (
    "NVRM: Xid",
    "GPU has fallen off the bus",
    "RmInitAdapter failed",
    "NVRM: The NVIDIA probe routine was not called",
    "NVRM: No NVIDIA graphics adapter probed",
    "Direct firmware load for nvidia/",
    "DMAR: DRHD: handling fault",
    "AMD-Vi: Event logged [IO_PAGE_FAULT",
    "module verification failed",
    "unsigned module loading is restricted",
    "Key was rejected by service",
)
_SECURE_BOOT = (
    ("secure boot enabled", True),
    ("secureboot enabled", True),
    ("locked down from efi secure boot", True),
    ("secure boot disabled", False),
    ("secureboot disabled", False),
)
_JOIN = 6
_WORDS = ("NVRM", "nouveau", "ecure", "ECURE", "DMAR", "AMD-Vi", "module", "Key was", "fallen", "firmware")
_CANDIDATE = re.compile("|".join(_WORDS))
_TRIGGER = Trigger(_WORDS)


def _obs(path: str, value: object, line: int) -> Observation:
    return Observation(path, value, line, NAME)


def _message(s: str) -> str:
    t = s.strip()
    if t.startswith("kernel: "):
        t = t[len("kernel: ") :]
    return t[:500]


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """Driver versions, nouveau, Secure Boot and notable GPU kernel lines from the kernel log."""
    seen_mismatch: set[tuple[str, str]] = set()
    for number, s in Walk(lines, _TRIGGER):
        if not _CANDIDATE.search(s):
            continue
        if "NVRM" in s:
            if "API mismatch" in s:
                yield from _mismatch(lines, number, seen_mismatch)
                continue
            m = _LOADING.search(s)
            if m:
                yield _obs("driver.kernel_module_version", m.group(2), number)
                yield _obs("driver.kernel_module_open", m.group(1) is not None, number)
                continue
        if "nouveau" in s and "NVRM" not in s and _NOUVEAU.search(s):
            yield _obs("driver.nouveau_loaded", True, number)
            continue
        low = s.lower() if "ecure" in s or "ECURE" in s else ""
        if "secure" in low:
            for text, value in _SECURE_BOOT:
                if text in low and "mokutil" not in low:
                    yield _obs("driver.secure_boot", value, number)
                    break
        if any(text in s for text in NOTABLE):
            yield _obs("host.kernel_log", _message(s), number)


def _mismatch(lines: Sequence[str], number: int, seen: set[tuple[str, str]]) -> Iterator[Observation]:
    parts = [clean(line[:500]) for line in lines[number - 1 : number - 1 + _JOIN]]
    text = " ".join(" ".join(parts).replace("#012", " ").replace("NVRM:", " ").split())
    text = re.sub(r"the client(?: '[^']{0,100}' \(pid \d{1,10}\))? has", "the client has", text)
    m = _MISMATCH.search(text)
    if m is None or m.groups() in seen:
        return
    seen.add((m.group(1), m.group(2)))
    yield _obs("driver.nvml_library_version", m.group(1), number)
    yield _obs("driver.kernel_module_version", m.group(2), number)
