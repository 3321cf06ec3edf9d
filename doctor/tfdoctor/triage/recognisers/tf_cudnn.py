"""The cuDNN versions TensorFlow's own log prints (stream_executor's cuda_dnn.cc, XLA's from 2.15):

    Loaded cuDNN version 8904
    Loaded runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4.  CuDNN library ...

The first, at INFO once a cuDNN handle exists (TF 2.5 on), is cudnnGetVersion(): major*1000 +
minor*100 + patch before cuDNN 9 (8904 is 8.9.4), major*10000 + minor*100 + patch from 9 (90300
is 9.3.0). The second, at ERROR when the loaded cuDNN fails the build's version check, names both
sides: the library loaded and the one the build was compiled with. Every 2.x wording (the old "major
and minor version needs to match" too) starts the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "tensorflow log (cuda_dnn)"

_MISMATCH = re.compile(r"Loaded runtime CuDNN library: (\d+\.\d+\.\d+) but source was compiled with:? (\d+\.\d+\.\d+)")
_LOADED = re.compile(r"\bLoaded cuDNN version (\d{4,6})\b")
_TRIGGER = Trigger(("Loaded runtime CuDNN library", "Loaded cuDNN version"))


def dotted(number: str) -> str | None:
    """cudnnGetVersion()'s integer as major.minor.patch (CUDNN_VERSION in cudnn_version.h)."""
    n = int(number)
    major = n // 10000 if n >= 90000 else n // 1000
    rest = n - major * (10000 if n >= 90000 else 1000)
    minor, patch = divmod(rest, 100)
    return f"{major}.{minor}.{patch}" if 5 <= major <= 19 and minor < 100 else None


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """The cuDNN TensorFlow loaded, and the one its build was compiled with where the log says."""
    for number, s in Walk(lines, _TRIGGER):
        if m := _MISMATCH.search(s):
            yield Observation("toolkit.loaded_cudnn", m.group(1), number, NAME)
            yield Observation("tensorflow.cudnn_version", m.group(2), number, NAME)
        elif (m := _LOADED.search(s)) and (version := dotted(m.group(1))):
            yield Observation("toolkit.loaded_cudnn", version, number, NAME)
