"""The typed tables every renderer draws: bars, the GPU table, the topology matrix, the cluster.

Plain frozen data with every cell already worded, so the plain-text report, the Markdown
support report, the HTML report and the TUI show the same words; a renderer only chooses how
to draw a bar. `None` is "not known": a bar without a value is "not measured", never 0 %.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Bar:
    """One horizontal bar: a value against a scale, and the words that go with it."""

    label: str
    """What is measured, e.g. "bf16", "memory", "64 MiB", "worker:1"."""
    value: float | None
    """The measured value; None when it was not measured (the bar is then drawn empty, never 0)."""
    scale: float | None
    """What a full bar means (a spec peak, the largest of a series); None when there is none."""
    text: str
    """The words beside the bar, e.g. "61 % of 989 TFLOPS", "not measured", "12.3 ms"."""
    flag: str | None = None
    """Why the bar stands out: "low" (under half its peak), "straggler"; None when it does not."""

    @property
    def fraction(self) -> float | None:
        """How full the bar is (may exceed 1 above the spec); None without value or scale."""
        if self.value is None or not self.scale or self.scale <= 0:
            return None
        return max(0.0, self.value / self.scale)


GPU_COLUMNS = ("GPU", "name", "CC", "mem used/total", "PCIe now/max", "temp", "MIG", "throttle")
"""Headings of GpuRow.cells, in order."""


@dataclass(frozen=True, slots=True)
class GpuRow:
    """One GPU as NVML saw it, with what the smoke run measured on it."""

    index: int
    """NVML's index."""
    cells: tuple[str, ...]
    """The GPU_COLUMNS cells, worded ("?" where NVML did not say)."""
    device: str | None
    """The TensorFlow device measured on it, e.g. "GPU:0"; None when none was matched."""
    bars: tuple[Bar, ...]
    """Measured matmul TFLOPS and memory bandwidth against the model's spec peak; empty when the
    smoke run did not run (GpuTable.note says why)."""
    warn: bool = False
    """Something on this row stands out: a low bar, throttling, a PCIe link below its maximum."""


@dataclass(frozen=True, slots=True)
class GpuTable:
    """Every GPU NVML lists, and the all-reduce measured across them."""

    rows: tuple[GpuRow, ...]
    peak_source: str | None
    """The spec the bars are measured against, e.g. "NVIDIA H100 SXM5 80 GB (compat_tables)"."""
    note: str | None = None
    """One line when the bars are missing for all GPUs, e.g. "not measured: --quick"."""
    allreduce: Bar | None = None
    """NCCL all-reduce bus bandwidth of the smoke run, when it ran over two or more GPUs."""
    unmatched: tuple[str, ...] = ()
    """TensorFlow devices measured that could not be matched to an NVML GPU, worded."""
    topology: TopologyMatrix | None = None
    """How the GPUs reach each other, with the busbw it predicts beside the one measured (then
    `allreduce` is None: the matrix carries it); None when NVML did not read it."""


TOPOLOGY_LEGEND = (
    ("X", "the GPU itself"),
    ("NV#", "NVLink peer-to-peer, # links"),
    ("PCIe", "PCIe peer-to-peer"),
    ("SYS", "no peer-to-peer: through host memory"),
    ("?", "not known"),
)
"""The cells a TopologyMatrix derived from NVML uses; one read from `nvidia-smi topo -m` keeps
that tool's own words (PIX, PXB, PHB, NODE, SYS, NV#)."""


@dataclass(frozen=True, slots=True)
class TopologyMatrix:
    """How each pair of a node's GPUs is connected, like `nvidia-smi topo -m`, and the all-reduce
    bus bandwidth that connection predicts beside the one measured."""

    where: str
    """Which node, e.g. "worker:0's node", "this machine"."""
    labels: tuple[str, ...]
    """GPU0, GPU1, ..."""
    cells: tuple[tuple[str, ...], ...]
    """cells[a][b]: how GPU a reaches GPU b ("X" on the diagonal)."""
    source: str
    """"nvidia-smi topo -m" or "NVML (NVLink states, P2P status)"."""
    busbw: Bar | None = None
    """Measured all-reduce busbw against what the topology predicts (a healthy node's ~80 % of
    the link rate); value or scale None when unknown."""


@dataclass(frozen=True, slots=True)
class ClusterPictures:
    """A cluster run as bars: all-reduce busbw by message size and each node's step time."""

    busbw: tuple[Bar, ...]
    """One bar per message size (the first worker that reported), against the largest."""
    busbw_whose: str
    """Whose figures they are, e.g. "worker:0, RING, 2 worker(s)"."""
    steps: tuple[Bar, ...]
    """One bar per worker: its fastest compute step against the slowest worker's, its median
    step in the words; the worker the cluster-straggler finding names is flagged."""
    topologies: tuple[TopologyMatrix, ...] = ()
    """Each distinct node topology the run collected."""
