"""tf_log's gates: vocab.could_match asked once per distinct line, the lines' digits zeroed where
that cannot change its answer (issue 21). The fast path must keep exactly the lines asking
could_match of every line keeps."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest
from tfdoctor.knowledge import vocab
from tfdoctor.triage.recognisers import tf_log
from triage_fixtures import recorded_tickets


def slow(text: str, maybe: set[int]) -> set[int]:
    lines = text.split("\n")
    return {i for i in maybe if vocab.could_match(lines[i])}


def same(lines: list[str], maybe: set[int] | None = None) -> None:
    text = "\n".join(lines)
    if maybe is None:
        maybe = set(range(len(lines)))
    assert tf_log._vocab_lines(text, maybe) == slow(text, maybe)


# Words could_match looks up that hold digits, next to their anchors and numbers
DIGIT_WORDS = sorted(w for w in vocab.lookup_words() if any(map(str.isdigit, w)))
ANCHORS = sorted(vocab.lookup_words())


def test_zeroed_words_are_the_lookup_words_with_digits():
    assert DIGIT_WORDS, "the vocabulary has words with digits: the guard is tested on them"
    assert set(tf_log._zeroed_words()) == {w.translate(tf_log._ZERO) for w in DIGIT_WORDS}


def numbered_lines(rng: random.Random, n: int) -> list[str]:
    """Lines alike but for their numbers, some holding words with digits or two lookup words."""
    shapes = ["GPU {n} CUDA", "GPU {n} CUDA device", "CUDA {n} device", "{n} CUDA device {n}",
              "{w} {n} {a}", "{a} {n}{n} {a}", "x{n} CUDA y{n}", "{n}_{n} device CUDA",
              "{w}", "device {n}", "HDF{n} {a}", "CudnnRNNV{n} {a}"]
    out = []
    for _ in range(n):
        shape = rng.choice(shapes)
        out.append(shape.format(n=rng.choice(["0", "5", "8", "12", "1234", "99999", "2", "3", "16"]),
                                w=rng.choice(DIGIT_WORDS), a=rng.choice(ANCHORS)))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_numbered_lines(seed: int):
    rng = random.Random(seed)
    lines = numbered_lines(rng, rng.randrange(1, 6000))
    same(lines)
    same(lines, {i for i in range(len(lines)) if rng.random() < 0.3})


def test_across_chunks(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tf_log, "_CHUNK", 97)
    rng = random.Random(5)
    for _ in range(20):
        lines = numbered_lines(rng, rng.randrange(1, 400))
        same(lines)
        same(lines, {i for i in range(len(lines)) if rng.random() < 0.5})


def test_a_zeroed_word_keeps_the_raw_lines():
    """HDF5 zeroed is HDF0: a chunk holding one is read as it is. Lines over MAX_LINE are cut
    where they were (zeroing keeps every length)."""
    lines = [f"GPU {i} CUDA" for i in range(3000)]
    for extra in ("HDF0 and HDF5 CUDA device", "INT8 INT0", "x" * (vocab.MAX_LINE + 3) + " CUDA device",
                  "CUDA " + "1" * vocab.MAX_LINE + " device", "CUDA device"):
        same([*lines, extra, *lines])
        same([extra, *lines])


def test_bench_shapes():
    for text in bench_texts():
        same(text.split("\n"))


def test_ticket_files():
    tickets = recorded_tickets()
    assert tickets
    for lines in tickets:
        same(lines)


def old_lines_in(gates: tf_log._Gates, text: str) -> set[int] | None:
    """_Gates.lines_in as it was: the second scan whenever the first kept many lines, could_match
    asked of each line of an anchor that needs a second word."""
    if gates.both is None:
        return None
    keyed = gates.both.lines_in(text)
    if keyed is None:
        return None
    gate = gates.alone() if len(keyed) > tf_log._FEW else None
    if gate is not None:
        alone = gate.lines_in(text)
        if alone is None:
            return None
        maybe = keyed - alone
        if len(maybe) > tf_log._FEW:
            keyed = alone | slow(text, maybe)
    lines = text.split("\n")
    keyed |= {i for i, line in enumerate(lines) if tf_log._LOG_LINE_WIDER.search(line)}
    return keyed


def bench_texts() -> list[str]:
    """benchmarks/bench_triage.py's worst inputs, 256 KiB each."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_triage.py"
    spec = importlib.util.spec_from_file_location("bench_triage", path)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return [make(256 * 1024) for make in bench.INPUTS.values()]


def test_lines_in_is_as_it_was():
    """A log's warnings (every kept line of the log format) skip the second scan; the bench's
    shapes, a log with prose between, and the recorded tickets keep the same lines as before."""
    gates, _ = tf_log._causes()
    log = [f"2023-11-02 10:14:00.{i:06d}: W tensorflow/core/framework/op_kernel.cc:1827] "
           f"OP_REQUIRES failed at step {i}: out of range" for i in range(3000)]
    texts = ["\n".join(log), "\n".join([*log, "CUDA is on GPU 1", "GPU 2 CUDA device", *log]),
             "\n".join(f"GPU {i} CUDA" for i in range(5000)), *bench_texts()]
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.glob("field/cases/*.txt"))[:120]:
        texts.append(path.read_text(encoding="utf-8", errors="replace"))
    for text in texts:
        assert gates.lines_in(text) == old_lines_in(gates, text)
