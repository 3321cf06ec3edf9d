"""The recognisers as a set: registered in order, never raising, linear on an 8 MB ticket."""

from __future__ import annotations

import random
import time

import pytest
from tfdoctor.triage.observe import PATHS
from tfdoctor.triage.recognisers import RECOGNISERS
from triage_fixtures import DATA, ticket

# Fragments of every recognised kind, so the junk exercises each recogniser's slow path too.
_FRAGMENTS = [
    "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |",
    "|   0  NVIDIA A100-SXM4-40GB    Off | 00000000:07:00.0 Off |                    0 |",
    "Driver Version                            : 535.104.05",
    "GPU 00000000:07:00.0",
    "Package                  Version",
    "absl-py                  2.1.0",
    "numpy==1.26.4",
    "# packages in environment at /opt/conda:",
    "NVRM: API mismatch: the client has the version 535.54.03, but",
    "Module                  Size  Used by",
    "nvidia_uvm           1589299  0",
    "export CUDA_VISIBLE_DEVICES=0",
    "echo $LD_LIBRARY_PATH",
    "('cuda_version', '12.2'),",
    "print(tf.__version__)",
    "== env ==========================================================",
    "Collecting environment information...",
    "Flags: fpu vme de pse avx avx2",
    "Linux host 5.15.0-91-generic #101-Ubuntu SMP x86_64 GNU/Linux",
    'PRETTY_NAME="Ubuntu 22.04.3 LTS"',
    "\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8",
    "$ ls /usr/local",
    "2024-01-01 00:00:00.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] x",
    "[   12.345678] NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.",
    "v2.3.0-54-gfcc4b966f1 2.3.1",
    "```",
    "=" * 80,
    "|" * 80,
]
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 .:=|/-_()[]'\"$#>\t"


def _junk(size: int) -> list[str]:
    rng = random.Random(20261123)
    lines: list[str] = []
    total = 0
    while total < size:
        if rng.random() < 0.4:
            line = rng.choice(_FRAGMENTS)
        else:
            line = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 100)))
        lines.append(line)
        total += len(line) + 1
    return lines


def test_registry_order_and_names():
    """RECOGNISERS lists every module in the brief's order (tf_log is appended by the triage lead)."""
    names = [r.__name__.rsplit(".", 1)[1] for r in RECOGNISERS]
    assert names == [
        "nvidia_smi", "pip_list", "build_info", "ldconfig", "proc_version", "kernel_log", "lsmod", "nvcc",
        "uname", "os_release", "collect_env", "tf_env_collect", "env_vars", "tf_reported",
        "tf_cudnn", "tf_ptxas", "conda_build", "conda_info", "cudnn_header", "tensorrt", "container_image",
    ]  # fmt: skip
    assert len({r.NAME for r in RECOGNISERS}) == len(RECOGNISERS)


def test_every_recorded_ticket_through_every_recogniser():
    """Each recogniser on each recorded ticket (and on all of them at once) stays within the contract."""
    everything: list[str] = []
    for path in sorted(DATA.rglob("*.txt")):
        lines = ticket(str(path.relative_to(DATA)))
        everything += lines
        for recogniser in RECOGNISERS:
            for o in recogniser.recognise(lines):
                assert o.path in PATHS and o.source == recogniser.NAME and 1 <= o.line <= len(lines)
    for recogniser in RECOGNISERS:
        assert all(o.path in PATHS for o in recogniser.recognise(everything))


def test_eight_megabytes_of_junk_and_one_huge_line_in_linear_time():
    """A pasted 8 MB log and a megabytes-long line must not hang triage: every recogniser (the
    TensorFlow-log, pip-output and prose ones too) runs in time linear in the input. Judged by the
    ratio of 8 MB to 4 MB (about 2 when linear, 4 when quadratic), not by a wall-clock bound that a
    loaded CI machine could miss; 60 s is only a backstop against a catastrophic pattern."""
    from tfdoctor.triage.recognisers import pip_output, prose, tf_log

    modules = (*RECOGNISERS, pip_output, tf_log, prose)
    huge = ["x" * 4_000_000, "| " * 2_000_000, "NVRM: " + "9." * 1_000_000, "a==" + "1" * 1_000_000]
    huge += ["\r\n", "", "\t", "> " * 1000, "[" * 10_000, "(" * 10_000 + "$ "]

    def sweep(size: int) -> tuple[float, set[str]]:
        lines = _junk(size) + huge
        start = time.perf_counter()
        paths = {o.path for recogniser in modules for o in recogniser.recognise(lines)}
        return time.perf_counter() - start, paths

    half, _ = sweep(4_000_000)
    elapsed, paths = sweep(8_000_000)
    assert paths <= PATHS.keys()
    assert elapsed < 3 * half + 1.0 and elapsed < 60, f"{half:.2f} s for 4 MB, {elapsed:.2f} s for 8 MB"


ODD_INPUTS = [
    # (lines, what a person reads from them: path -> value), judged by reading each input
    ([], {}),
    ([""], {}),
    (["|"], {}),
    (["+---+"], {}),
    (["Driver Version : 1", "GPU 0000:00:00.0", "    MIG Mode", "        Current : Enabled"],
     # nvidia-smi -q: one GPU at that bus id, MIG enabled; "1" is no driver version
     {"driver.gpu": {"index": 0, "pci_bus_id": "0000:00:00.0", "mig_mode": True}}),
    (["Name: tensorflow"], {}),  # pip show without its Version line: nothing installed is named
    (["NVRM: API mismatch"], {}),  # the kernel's words without the two versions
    (["('cuda_compute_capabilities',"], {}),  # build_info cut before its value
    (["Collecting environment information...", "GPU models and configuration:", "cuDNN version:"], {}),
    (["== cuda libs  ===", "/usr/local/cuda/lib64/libcudart.so"],  # tf_env_collect's library list
     {"library.file": "/usr/local/cuda/lib64/libcudart.so"}),
    (["echo $CUDA_HOME"], {}),  # the command without its output
]


@pytest.mark.parametrize("lines, reads", ODD_INPUTS, ids=range(len(ODD_INPUTS)))
def test_odd_inputs_read_as_a_person_reads_them(lines, reads):
    """Empty tickets, lone separators and half tables are read without an exception, and yield
    what a person reads from them (written by hand beside each input): nothing where the value
    is missing, never a value made from a cut-off line."""
    got = {o.path: o.value for recogniser in RECOGNISERS for o in recogniser.recognise(lines)}
    assert got == reads


def test_a_malformed_nvidia_smi_header_gives_no_versions():
    """`Driver Version: x CUDA Version: y` in an nvidia-smi frame: x and y are not versions, so
    neither the driver's nor its CUDA version is read from them."""
    lines = ["| NVIDIA-SMI 535 Driver Version: x CUDA Version: y |", "|  |  |"]
    got = {o.path: o.value for recogniser in RECOGNISERS for o in recogniser.recognise(lines)}
    assert "driver.driver_version" not in got and "driver.cuda_driver_version" not in got, got
