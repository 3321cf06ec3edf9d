"""`nvidia-smi` as pasted: the table (drivers 418..580 layouts), `nvidia-smi -q`, and its failures.

The table's header row names the driver and the highest CUDA it supports; each GPU takes two or
three rows split by "|" into cells (index / name / persistence, bus id / display, ECC; then fan /
memory / compute mode; then MIG M. from driver 450 on). Column widths change between drivers, so
cells are read by content, never by position. `-q` prints "Key : value" lines nested by indentation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "nvidia-smi"

_HEADER = re.compile(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s+(\S+)\s+CUDA Version:\s+(\S+)")
_ROW_NAME = re.compile(r"\s*(\d{1,3})\s+(\S.*?)\s+(On|Off|TCC|WDDM)\s*")
_ROW_BUS = re.compile(r"\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+\S+\s*")
_MEMORY = re.compile(r"(\d+)MiB\s*/\s*(\d+)MiB")
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)*")
_CUDA = re.compile(r"\d+\.\d+")

# `nvidia-smi -q`: "    Product Name                          : A100-SXM4-40GB"
_HEADER_FIELD = re.compile(r"Driver Version:\s*(\S+)")
_HEADER_CUDA = re.compile(r"CUDA Version:\s*(\S+)")
_KEY_VALUE = re.compile(r"(\s*)([A-Za-z][\w ./()-]{0,60}?)\s+:\s?(.*)")
_Q_GPU = re.compile(r"GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*")
_Q_SECTION = re.compile(r"(\s+)([A-Za-z][\w ./()-]{0,60})")

# nvidia-smi's first line when NVML fails, and the nvml.h name each one comes from.
_FAILURES = (
    ("failed to initialize nvml: driver/library version mismatch", "NVML_ERROR_LIB_RM_VERSION_MISMATCH"),
    ("nvidia-smi has failed because it couldn", "NVML_ERROR_DRIVER_NOT_LOADED"),
    ("failed to initialize nvml: unknown error", "NVML_ERROR_UNKNOWN"),
    ("failed to initialize nvml: insufficient permissions", "NVML_ERROR_NO_PERMISSION"),
)
_NOT_FOUND = (
    "nvidia-smi: command not found",
    "nvidia-smi: not found",
    "nvidia-smi: no such file or directory",
)
# Outside a table or `-q` report, only these lines are read (_failure lowers the line)
_TRIGGER = Trigger(("NVIDIA-SMI", "Driver Version", "Attached GPUs"), ("nvidia-smi", "nvml", "no devices were found"))
_NVML_LIBRARY = re.compile(r"NVML library version:\s*(\d+\.\d+(?:\.\d+)?)")


def _obs(path: str, value: Any, line: int) -> Observation:
    return Observation(path, value, line, NAME)


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """Observations from every nvidia-smi table, `-q` report and failure message in the ticket."""
    table = _Table()
    query = _Query()
    walk = Walk(lines, _TRIGGER, lambda: table.active or query.active)
    for number, s in walk:
        t = s.strip()
        if table.active:
            yield from table.feed(number, t)
            if table.active:
                continue
        if query.active:
            yield from query.feed(number, s)
            if query.active:
                continue
        if "NVIDIA-SMI" in t:
            m = _HEADER.search(t)
            if m:
                yield from table.start(number, m)
                continue
        if t.startswith("Driver Version") or t.startswith("Attached GPUs"):
            kv = _KEY_VALUE.fullmatch(s)
            if kv and not kv.group(1):
                yield from query.start(number, s)
                continue
            field = _HEADER_FIELD.fullmatch(t)
            if field and _VERSION.fullmatch(field.group(1)):
                # the table header's fields pasted one per line: "Driver Version: 515.65.01", and its
                # "CUDA Version: 11.7" beside it
                yield _obs("driver.driver_version", field.group(1), number)
                yield from _header_cuda(lines, number)
                continue
        yield from _failure(number, t)
    if table.active:
        yield from table.end()
    if query.active:
        yield from query._flush()


def _header_cuda(lines: Sequence[str], number: int) -> Iterator[Observation]:
    """The "CUDA Version: X" of the header fields, on a line next to "Driver Version: ..."."""
    for j in (number, number - 2, number + 1, number - 3):  # 0-based: the lines around `number`
        if 0 <= j < len(lines) and len(lines[j]) < 200:
            cuda = _HEADER_CUDA.fullmatch(lines[j].strip())
            if cuda and _CUDA.fullmatch(cuda.group(1)):
                yield _obs("driver.cuda_driver_version", cuda.group(1), j + 1)
                return


def _failure(number: int, t: str) -> Iterator[Observation]:
    low = t.lower()
    if "nvidia-smi" in low or "nvml" in low or low.startswith("no devices were found"):
        for text, error in _FAILURES:
            # NVML's own words are unmistakable quoted in a sentence too (googlecolab/colabtools#2445)
            if low.startswith(text) or (text.startswith("failed to initialize nvml") and text in low):
                yield _obs("driver.nvml_error", error, number)
                yield _obs("driver.nvidia_smi_error", t, number)
                return
        if low.endswith(_NOT_FOUND) or low.startswith("'nvidia-smi' is not recognized"):
            yield _obs("driver.nvidia_smi_error", t, number)
        elif low == "no devices were found":
            yield _obs("driver.nvidia_smi_error", t, number)
            yield _obs("driver.device_count", 0, number)
        elif low.startswith("nvml library version:"):
            m = _NVML_LIBRARY.match(t)
            if m:
                yield _obs("driver.nvml_library_version", m.group(1), number)


class _Table:
    """The GPU rows under one table header, until the table ends."""

    def __init__(self) -> None:
        self.active = False
        self.count = 0
        self.first = 0
        self.gpu: dict[str, Any] | None = None
        self.gpu_line = 0
        self.row = 0

    def start(self, number: int, m: re.Match[str]) -> Iterator[Observation]:
        self.active, self.count, self.first, self.gpu, self.row = True, 0, number, None, 0
        if _VERSION.fullmatch(m.group(2)):
            yield _obs("driver.driver_version", m.group(2), number)
        if _CUDA.fullmatch(m.group(3)):
            yield _obs("driver.cuda_driver_version", m.group(3), number)

    def feed(self, number: int, t: str) -> Iterator[Observation]:
        if not t.startswith(("|", "+")) or "Processes:" in t:
            yield from self.end()
            return
        if t.startswith("+"):
            return
        cells = t.split("|")
        if len(cells) < 3:
            return
        name = _ROW_NAME.fullmatch(cells[1])
        bus = _ROW_BUS.fullmatch(cells[2])
        if name and bus and len(cells) >= 5:
            yield from self._flush()
            self.count += 1
            self.gpu = {"index": int(name.group(1)), "name": name.group(2), "pci_bus_id": bus.group(1)}
            if name.group(3) in ("On", "Off"):
                self.gpu["persistence_mode"] = name.group(3) == "On"
            self.gpu_line, self.row = number, 1
            return
        if self.gpu is None:
            return
        self.row += 1
        if self.row == 2:
            mem = _MEMORY.search(cells[2])
            if mem:
                self.gpu["memory_total_mib"] = int(mem.group(2))
        elif self.row == 3 and len(cells) >= 5:
            mig = cells[3].strip()
            if mig in ("Enabled", "Disabled"):
                self.gpu["mig_mode"] = mig == "Enabled"

    def end(self) -> Iterator[Observation]:
        yield from self._flush()
        self.active = False
        if self.count:
            # A header without GPU rows is a paste cut short, not a machine without GPUs
            # (nvidia-smi says "No devices were found" instead of a table then).
            yield _obs("driver.device_count", self.count, self.first)

    def _flush(self) -> Iterator[Observation]:
        if self.gpu is not None:
            yield _obs("driver.gpu", self.gpu, self.gpu_line)
            self.gpu = None


_Q_FIELDS = {
    ("", "Product Name"): "name",
    ("", "GPU UUID"): "uuid",
    ("PCI", "Bus Id"): "pci_bus_id",
    ("", "Persistence Mode"): "persistence_mode",
    ("FB Memory Usage", "Total"): "memory_total_mib",
    ("MIG Mode", "Current"): "mig_mode",
}


class _Query:
    """One `nvidia-smi -q` report: top-level keys, then one block per "GPU <bus id>"."""

    def __init__(self) -> None:
        self.active = False
        self.gpu: dict[str, Any] | None = None
        self.gpu_line = 0
        self.count = 0
        self.section = ""
        self.section_indent = 0

    def start(self, number: int, s: str) -> Iterator[Observation]:
        self.active, self.gpu, self.count, self.section = True, None, 0, ""
        yield from self.feed(number, s)

    def feed(self, number: int, s: str) -> Iterator[Observation]:
        if not s.strip():
            return
        if s.startswith("="):  # the "==============NVSMI LOG==============" banner
            return
        gpu = _Q_GPU.fullmatch(s)
        if gpu:
            yield from self._flush()
            self.gpu = {"index": self.count, "pci_bus_id": gpu.group(1)}
            self.gpu_line, self.count, self.section = number, self.count + 1, ""
            return
        kv = _KEY_VALUE.fullmatch(s)
        if kv is None:
            section = _Q_SECTION.fullmatch(s)
            if section and self.gpu is not None:
                self.section, self.section_indent = section.group(2), len(section.group(1))
                return
            yield from self._flush()
            self.active = False
            return
        indent, key, value = len(kv.group(1)), kv.group(2).strip(), kv.group(3).strip()
        if indent == 0:
            yield from self._top(number, key, value)
            return
        if self.gpu is None:
            return
        if indent <= self.section_indent:
            self.section = ""
        self._gpu_field(key, value)

    def _top(self, number: int, key: str, value: str) -> Iterator[Observation]:
        if key == "Driver Version" and _VERSION.fullmatch(value):
            yield _obs("driver.driver_version", value, number)
        elif key == "CUDA Version" and _CUDA.fullmatch(value):
            yield _obs("driver.cuda_driver_version", value, number)
        elif key == "Attached GPUs" and value.isdigit():
            yield _obs("driver.device_count", int(value), number)

    def _gpu_field(self, key: str, value: str) -> None:
        assert self.gpu is not None
        field = _Q_FIELDS.get((self.section, key))
        if field is None or value in ("N/A", ""):
            return
        if field in ("persistence_mode", "mig_mode"):
            if value in ("Enabled", "Disabled"):
                self.gpu[field] = value == "Enabled"
        elif field == "memory_total_mib":
            number = value.split()[0]
            if number.isdigit():
                self.gpu[field] = int(number)
        else:
            self.gpu[field] = value

    def _flush(self) -> Iterator[Observation]:
        if self.gpu is not None:
            yield _obs("driver.gpu", self.gpu, self.gpu_line)
            self.gpu = None
