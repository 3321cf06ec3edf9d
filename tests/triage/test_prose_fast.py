"""prose.recognise reads only the lines a claim not yet made can come from (found in C, a chunk
of lines at a time): it must claim exactly what reading every line claims (issue 21)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from tfdoctor.textgate import folded
from tfdoctor.triage.observe import Observation
from tfdoctor.triage.recognisers import _text, prose
from tfdoctor.triage.recognisers._text import MAX_LINE, clean
from triage_fixtures import recorded_tickets


def every_line(lines: Sequence[str]) -> Iterator[Observation]:
    """prose.recognise as it read a ticket before: every line cleaned and asked every claim."""
    done: set[str] = set()
    generic: Observation | None = None
    read = [(i + 1, line) for i, raw in enumerate(lines)
            if len(raw) <= MAX_LINE and (line := clean(raw)) and len(line) <= 2000
            and not prose._PROGRAM_LINE.search(line, folded(line))]
    wsl = any(prose._WSL.search(line, folded(line)) for _, line in read)
    for number, line in read:
        for path, value in prose._claims(line, folded(line), done):
            if wsl and (path, value) == ("platform.system", "Windows"):
                continue
            if path == "intent.gpu" and value == "GPU":
                generic = generic or Observation(path, value, number, prose.NAME)
                continue
            kind = f"{path}:{value[0]}" if isinstance(value, tuple) else path
            if kind not in done:
                done.add(kind)
                yield Observation(path, value, number, prose.NAME)
    if generic is not None and "intent.gpu" not in done:
        yield generic


def same(lines: list[str]) -> None:
    try:
        assert list(prose.recognise(lines)) == list(every_line(lines))
    finally:
        _text.forget()


TRICKY = [
    "[ 7386.259769]pip install tensorflow==2.15.0 keras",  # dmesg stamp without a space, then ^
    "[ 7386.259769] pip3 install -U numpy==1.26.4",
    "2023-06-30 11:07:05.123 conda install cudatoolkit=11.8",
    "Jun 30 11:07:05 gpu-0 I installed CUDA 12.2 on Ubuntu 22.04",
    "> > my GPU is an RTX 3090 with cuDNN 8.9.4",
    "  File \"/usr/lib/python3.10/site-packages/tensorflow/x.py\", line 3: TensorFlow 2.11",
    "gpu_device.cc:2251] CUDA 11.2 Python 3.9 windows 10",
    "works with tf 2.15 but fails with tf 2.16",
    "upgrading from TensorFlow 2.15 to 2.16",
    "Windows 11 and then WSL2",
    "wſl 2 on win10",  # long s: IGNORECASE matches it to s, folded() lowers it so
    "PYTHON 3.11 with \u212aeras 3.0.1",  # Kelvin sign
    "Pİp install protobuf==3.20.3",
    "GPU model and memory: 4090",
    "GPU model and memory: 5070TI",
    "running on an NVIDIA GPU",
    "libcudart.so.11.0 not found, libcublasLt.so.12 missing",
    "cudart64_110.dll not found, cudnn64_8.dll is missing",
    "with MirroredStrategy the loss becomes nan",
    "the CPU version that is installed",
    "pip install tensorflow[and-cuda]",
    "Jetson Orin with JetPack 6",
    "macOS 14 on Apple M2",
    "cudnn version: 8.1",
    "requires CUDA 11.8",
    "now with cuda 12.2",
    "plain words and nothing else",
    "",
    "   ",
    "> " * 1200 + "Python 3.8",  # over 2000 characters raw, not once cleaned
    "x" * 1999 + " tensorflow 2.9",
    "x" * 2001 + " tensorflow 2.9",
    "y" * (MAX_LINE + 5) + " CUDA 10.1",
    "Σ ΑΣ tensorflow 2.12 ΣΑ",
]


def test_tricky_lines_each_alone_and_together():
    for line in TRICKY:
        same([line])
    same(TRICKY)
    same(TRICKY[::-1])


def test_random_tickets_across_chunks():
    """Many lines (past the first chunks), claims late and early, in random orders."""
    rng = random.Random(21)
    filler = ["just some words", "GPU 7 CUDA", "package-0001 1.2.3", "a", "I0000 gpu.cc:1] x", "install it"]
    for _ in range(12):
        lines = [rng.choice(filler) for _ in range(rng.randrange(1, 5000))]
        for line in rng.sample(TRICKY, rng.randrange(1, len(TRICKY))):
            lines.insert(rng.randrange(len(lines) + 1), line)
        same(lines)


def test_long_line_first_and_last():
    same(["z" * 2500 + " TensorFlow 2.14", "numpy 1.26.4", "> " * 1500 + "keras 2.15.0"])
    same(["numpy 1.26.4", "w" * 3000])


def test_ticket_files():
    """The recorded tickets and field cases read as before."""
    tickets = recorded_tickets()
    assert tickets
    for lines in tickets:
        same(lines)


def test_lines_holding_line_breaks():
    """Lines not from splitlines (a caller's own list) read as before."""
    same(["a\nb tensorflow 2.15", "x" * 2500, "\r\n", "Python 3.9 on wsl", "c\nd" * 1500 + " CUDA 11.2"])


def test_few_lines_in_is_lines_in_or_gives_up():
    """textgate.Gate.few_lines_in: lines_in's lines where the keys are on few lines, else None."""
    gate = prose._CLAIM_GATE
    sparse = "\n".join(["nothing here"] * 3000 + ["TensorFlow 2.15", "cuda 12"] + ["x"] * 3000)
    assert gate.few_lines_in(sparse) == gate.lines_in(sparse) == {3000, 3001}
    dense = "\n".join(["GPU 1 CUDA"] * 3000)
    assert gate.few_lines_in(dense) is None
    assert gate.lines_in(dense) == set(range(3000))
