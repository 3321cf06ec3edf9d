"""The driver versions TensorFlow's own log prints: stream_executor's cuda_diagnostics.cc, in
every release from 1.x to 2.21, logs at INFO after a failed cuInit

    libcuda reported version is: 418.87.1
    kernel reported version is: 418.87.1

(`DriverVersionStatusToString`: major.minor.patch with the leading zeros of the patch dropped, so
418.87.1 is driver 418.87.01; a status such as "Not found: was unable to find libcuda.so DSO
loaded into this program" where it could not tell). The libcuda version is the user-space
driver's, the one nvidia-smi calls "Driver Version"; the kernel version is the loaded module's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "tensorflow log (cuda_diagnostics)"

_REPORTED = re.compile(r"\b(libcuda|kernel) reported version is:\s*(\d{2,4}\.\d{1,3}(?:\.\d{1,3})?)\b")
_TRIGGER = Trigger(("reported version is:",))
_FACT = {"libcuda": "driver.driver_version", "kernel": "driver.kernel_module_version"}


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """The user-space and kernel driver versions TensorFlow read, where it could read them."""
    for number, s in Walk(lines, _TRIGGER):
        m = _REPORTED.search(s)
        if m:
            yield Observation(_FACT[m.group(1)], m.group(2), number, NAME)
