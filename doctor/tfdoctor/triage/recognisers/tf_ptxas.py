"""The ptxas version XLA's own log prints (nvptx_compiler.cc, asm_compiler.cc before it):

    The NVIDIA driver's CUDA version is 12.4 which is older than the ptxas CUDA version (12.5.40).
    The NVIDIA driver's CUDA version is 12.4 which is older than the PTX compiler version 12.5.82.
    *** WARNING *** You are using ptxas 10.1.243, which is older than 11.1. ...
    ptxas 12.3.103 has a bug that we think can affect XLA. Please use a different version.

The first names the driver's CUDA version too (cuDriverGetVersion); XLA's source has the ptxas
version with and without parentheses over the releases, and from about TF 2.17 calls it the "PTX
compiler" (ptxas, nvJitLink or the PTX compiler library, whichever XLA uses).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "XLA log (ptxas)"

_V = r"(\d{1,2}\.\d{1,2}(?:\.\d{1,4})?)"
_DRIVER_OLDER = re.compile(r"The NVIDIA driver's CUDA version is " + _V
                           + r" which is older than the (?:ptxas CUDA|PTX compiler) version \(?" + _V)
_PTXAS = re.compile(r"You are using ptxas " + _V + r", which is older than|\bptxas " + _V + r" has a bug")
_TRIGGER = Trigger(("driver's CUDA version is", "You are using ptxas", "has a bug that"))


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """The ptxas XLA ran, and the driver's CUDA version where the line compares them."""
    for number, s in Walk(lines, _TRIGGER):
        if m := _DRIVER_OLDER.search(s):
            yield Observation("driver.cuda_driver_version", m.group(1), number, NAME)
            yield Observation("xla.ptxas_version", m.group(2), number, NAME)
        elif m := _PTXAS.search(s):
            yield Observation("xla.ptxas_version", m.group(1) or m.group(2), number, NAME)
