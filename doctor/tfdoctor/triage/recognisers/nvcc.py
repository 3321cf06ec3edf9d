"""The CUDA toolkit on disk: `nvcc --version`, where nvcc lives, and `ls` of /usr/local.

"nvcc: command not found" says only that nvcc is not on this shell's PATH, not that no toolkit is
installed, so it is not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk, has_prompt, strip_prompt

NAME = "nvcc"

_RELEASE = re.compile(r"Cuda compilation tools, release \d+\.\d+, V(\d+\.\d+\.\d+)")
_NVCC_PATH = re.compile(r"(?:nvcc:\s+)?(/[\w./+-]{0,300}/cuda[\w.+-]{0,40})/bin/nvcc")
_TOOLKIT_DIR = re.compile(r"/(?:usr/local|opt)/cuda-\d+\.\d+")
_LS_LOCAL = re.compile(r"ls(?:\s+-\w+)*\s+/usr/local/?")
# Outside an `ls /usr/local` listing, only these lines are read
_TRIGGER = Trigger(("Cuda compilation tools", "ls ", "nvcc", "/usr/local/cuda-", "/opt/cuda-"))
_LS_NAME = re.compile(r"(?<![\w/.-])cuda-(\d+\.\d+)(?![\w.-])")


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """toolkit.nvcc_version and toolkit.dir observations."""
    listing = False  # inside the output of `ls /usr/local`
    seen: set[str] = set()
    walk = Walk(lines, _TRIGGER, lambda: listing)
    for number, s in walk:
        t = s.strip()
        if "Cuda compilation tools" in t:
            m = _RELEASE.search(t)
            if m:
                yield Observation("toolkit.nvcc_version", m.group(1), number, NAME)
            continue
        if (listing or "ls " in t) and (has_prompt(t) or t.startswith("ls ")):
            listing = _LS_LOCAL.fullmatch(strip_prompt(t)) is not None
            continue
        if not t or t.startswith("```"):
            listing = False
            continue
        if not (listing or t.endswith("nvcc") or t.startswith(("/usr/local/cuda-", "/opt/cuda-"))):
            continue
        for directory in _directories(t, listing):
            if directory not in seen:
                seen.add(directory)
                yield Observation("toolkit.dir", directory, number, NAME)


def _directories(t: str, listing: bool) -> Iterator[str]:
    if listing:
        for m in _LS_NAME.finditer(t):
            yield f"/usr/local/cuda-{m.group(1)}"
        return
    nvcc = _NVCC_PATH.fullmatch(t) if t.endswith("nvcc") else None
    if nvcc:
        yield nvcc.group(1)
        return
    if t.startswith(("/usr/local/cuda-", "/opt/cuda-")) and _TOOLKIT_DIR.fullmatch(t.rstrip("/")):
        yield t.rstrip("/")
