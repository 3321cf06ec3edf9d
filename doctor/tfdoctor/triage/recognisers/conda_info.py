"""`conda info`'s virtual packages: the CUDA driver conda found, or that it found none.

conda sets the `__cuda` virtual package to the CUDA version of the driver it loads (libcuda's
cuDriverGetVersion) and leaves it out where it finds none (conda docs, "Managing virtual
packages"; CONDA_OVERRIDE_CUDA sets it by hand). Its `conda info` lists them:

           virtual packages : __cuda=12.0=0
                              __linux=5.15.79.1=0
                              __glibc=2.31=0

`__cuda=12.0` is the driver's CUDA version, as nvidia-smi's header names it; a list without it is
conda's own word that no driver was found where it ran, which keeps conda-forge's CUDA builds of
TensorFlow (they require `__cuda`) from being installed: the same cause as its solver's "nothing
provides __cuda needed by tensorflow-2.x-cuda..." (knowledge/causes/python.toml, conda-no-cuda).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.facts_smoke import LogCause
from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk, clean

NAME = "conda info"

_TRIGGER = Trigger(("virtual packages :",))
_PACKAGE = re.compile(r"__\w+=\S*")
_MORE = re.compile(r"\s*(__\w+=\S*)\s*$")  # the list goes on, one entry to a line (its indent may be gone)
NO_CUDA = "conda-no-cuda"
"""The cause of knowledge/causes/python.toml both forms name."""


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """The driver's CUDA version from `__cuda=X`, or conda-no-cuda where the list has none."""
    for number, s in Walk(lines, _TRIGGER):
        head, _, first = s.partition("virtual packages :")
        if head.strip() or not _PACKAGE.fullmatch(first.strip()):
            continue  # not conda info's row
        packages = [first.strip()]
        for line in lines[number : number + 20]:
            more = _MORE.match(clean(line))
            if more is None:
                break
            packages.append(more.group(1))
        cuda = next((p.split("=")[1] for p in packages if p.startswith("__cuda=")), None)
        if cuda:
            yield Observation("driver.cuda_driver_version", cuda, number, NAME)
        else:
            line = "virtual packages : " + ", ".join(packages)
            yield Observation("log.cause", LogCause(id=NO_CUDA, line=line[:500]), number, NAME)
        return
