"""The cuDNN headers on disk, as NVIDIA's installation guide has users check them:

    $ cat /usr/include/cudnn_version.h | grep CUDNN_MAJOR -A 2
    #define CUDNN_MAJOR 8
    #define CUDNN_MINOR 9
    #define CUDNN_PATCHLEVEL 7

cudnn_version.h from cuDNN 8, cudnn.h before; `-A 1` leaves out the patch level. The installed cuDNN
that a build finds in the system's include and library folders (a live run reads the same macros:
probes/tfbuild.py cudnn_header_version); not necessarily the one TensorFlow loads from a pip wheel.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "cuDNN header"

_DEFINE = re.compile(r"#\s*define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d{1,3})\s*$")
_TRIGGER = Trigger(("CUDNN_MAJOR",))
_NEAR = 4
"""How many lines after CUDNN_MAJOR its MINOR and PATCHLEVEL are looked for (grep -A 2 output,
perhaps with a "--" separator)."""


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """toolkit.header_cudnn: "8.9.7", or "7.6" where the patch level is not shown; the first only."""
    for number, s in Walk(lines, _TRIGGER):
        m = _DEFINE.search(s.strip())
        if m is None or m.group(1) != "MAJOR" or not 5 <= int(m.group(2)) <= 19:
            continue
        found = {"MAJOR": m.group(2)}
        for later in lines[number:number + _NEAR]:
            if (n := _DEFINE.search(later.strip())) and n.group(1) not in found:
                found[n.group(1)] = n.group(2)
        if "MINOR" in found:
            parts = [found[k] for k in ("MAJOR", "MINOR", "PATCHLEVEL") if k in found]
            yield Observation("toolkit.header_cudnn", ".".join(parts), number, NAME)
            return
