"""Time and peak memory of `tfdoctor triage --json FILE` on the worst inputs up to its 8 MiB limit.

    python benchmarks/bench_triage.py [--only NAME,...] [--size BYTES] [--keep DIR] [--repeat N]

Each input is built here (see INPUTS), written to a file and read by the real command in a new
process; a middle process runs it and reports its wall time and `ru_maxrss` from
`getrusage(RUSAGE_CHILDREN)`, so the figure is tfdoctor's own peak, interpreter included.
Target (issue 21): <= 2 s and <= 200 MB for every input. tests/triage/test_worst_inputs.py
checks that triage still reads these inputs right; speed is measured here only.
"""

from __future__ import annotations

# ruff: noqa: E501  (TensorFlow's log lines are quoted whole)
import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

LIMIT = 8 * 1024 * 1024
"""tfdoctor triage's input limit (triage/read.py MAX_BYTES)."""

TARGET_S, TARGET_MB = 2.0, 200.0

_TF_LOG = """\
2023-11-02 10:14:01.353112: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on. You may see slightly different numerical results due to floating-point round-off errors from different computation orders. To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`.
2023-11-02 10:14:01.401311: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered
2023-11-02 10:14:02.812002: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT
2023-11-02 10:14:04.071545: I external/local_xla/xla/stream_executor/cuda/cuda_executor.cc:901] successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, so returning NUMA node zero. See more at https://github.com/torvalds/linux/blob/v6.0/Documentation/ABI/testing/sysfs-bus-pci#L344-L355
2023-11-02 10:14:04.331712: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1929] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 22282 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6
2023-11-02 10:14:09.117204: I external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:454] Loaded cuDNN version 8904
2023-11-02 10:14:09.220311: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:464] Loaded runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher minor version. If using a binary install, upgrade your CuDNN library.  If building from sources, make sure the library loaded at runtime is compatible with the version specified during compile configuration.
2023-11-02 10:14:09.221042: W tensorflow/core/framework/op_kernel.cc:1827] UNKNOWN: JIT compilation failed.
"""

_PROSE = (
    "I am trying to train a model with TensorFlow 2.15 on my RTX 3090 under Ubuntu 22.04 and Python "
    "3.10, but the GPU is never used; I installed CUDA 12.2 myself and numpy 1.26.4 from pip.",
    "When I run my notebook the kernel dies after a few epochs and nothing is printed, even with the "
    "batch size reduced; the same code works on the CPU of my laptop (Windows 11, WSL2).",
    "Any idea what I should check next? I tried reinstalling the driver (535) and the cuDNN files, "
    "I also tried conda install cudatoolkit and a fresh virtual environment, nothing changed at all.",
)


def _repeat(block: str, size: int) -> str:
    """block repeated to at most size bytes of UTF-8, ending at a line break."""
    data = block.encode() * (size // len(block.encode()) + 1)
    return data[:size].decode(errors="ignore").rsplit("\n", 1)[0] + "\n"


def all_newlines(size: int = LIMIT) -> str:
    """Nothing but line breaks: 8.4 million empty lines (issue 21: 20 s, 169 MB)."""
    return "\n" * size


def long_prose(size: int = LIMIT) -> str:
    """A user's words, 55 thousand lines of them, no two alike, every one with claims prose reads."""
    out, total, i = [], 0, 0
    while total < size:
        line = f"{_PROSE[i % len(_PROSE)]} (attempt {i}, run {i * 7919 % 100003})\n" + ("\n" if i % 3 == 2 else "")
        out.append(line)
        total += len(line)
        i += 1
    return _repeat("".join(out), size)


def huge_pip_list(size: int = LIMIT) -> str:
    """`pip list` with 300 thousand packages, TensorFlow among the first (issue 21: 6 s, 220 MB)."""
    head = "Package                      Version\n---------------------------- -----------\n"
    rows = ["tensorflow                   2.15.0", "numpy                        1.26.4",
            "keras                        2.15.0"]
    body = "\n".join(f"package-{i:07d}              {i % 97}.{i % 13}.{i % 7}" for i in range(size // 36))
    return (head + "\n".join(rows) + "\n" + body)[:size].rsplit("\n", 1)[0] + "\n"


def one_huge_line(size: int = LIMIT) -> str:
    """One 8 MiB line of words that several recognisers start on, then one real error line."""
    tail = "\nImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n"
    return _repeat("tensorflow 2.15 CUDA 12 GPU NVRM: | Driver Version: site-packages ", size - len(tail))[
        :-1] + tail


def many_tf_log_lines(size: int = LIMIT) -> str:
    """TensorFlow's own log, 40 thousand lines, with a cuDNN mismatch in every block."""
    return _repeat(_TF_LOG, size)


def mixed(size: int = LIMIT) -> str:
    """Every recorded triage ticket (tests/triage/data) one after another, repeated up to the limit."""
    data = Path(__file__).resolve().parents[1] / "tests" / "triage" / "data"
    block = "".join(p.read_text(encoding="utf-8") + "\n" for p in sorted(data.rglob("*.txt")))
    return _repeat(block, size)


def repeated_phrases(size: int = LIMIT) -> str:
    """Lines of 20,000 characters (triage's longest read line) repeating the start of what a
    recogniser reads, which made patterns with an open-ended stretch quadratic, then a real line."""
    phrases = ["Found device 0 with properties:\n" + "name: " * 3330, "Created device GPU:0 " * 950,
               "list_physical_devices(" + ")" * 19970, "Python " * 2850, "CUDA 1" * 3330]
    tail = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1929] Created device "
            "/job:localhost/replica:0/task:0/device:GPU:0 with 22282 MB memory:  -> device: 0, "
            "name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6\n")
    return _repeat("\n".join(phrases) + "\n", size - len(tail)) + tail


_LIBCUDART = "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n"


def _lines(line: Callable[[int], str], size: int, tail: str = "") -> str:
    """Numbered lines up to size bytes of UTF-8, then tail."""
    out, total, i = [], len(tail.encode()), 0
    while True:
        s = line(i)
        total += len(s.encode())
        if total > size:
            return "".join(out) + tail
        out.append(s)
        i += 1


def short_lines(size: int = LIMIT) -> str:
    """380 thousand distinct 20-byte log-ish lines, then a real error line (last time: 20 s)."""
    return _lines(lambda i: f"I{i:07d} gpu.cc:{i % 97}] x\n", size, _LIBCUDART)


def tiny_lines(size: int = LIMIT) -> str:
    """4 million one-letter lines (each a line every recogniser used to look at), then a real
    error line."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return _lines(lambda i: letters[i % 26] + "\n", size, _LIBCUDART)


def log_warnings(size: int = LIMIT) -> str:
    """TensorFlow's own warning line, 64 thousand times, each with its own step and timestamp:
    no two alike, so nothing read once is read for free."""
    return _lines(lambda i: f"2023-11-02 10:14:{i // 1000000 % 60:02d}.{i % 1000000:06d}: W tensorflow/core/"
                            f"framework/op_kernel.cc:1827] OP_REQUIRES failed at step {i}: out of range\n", size)


def gpu_words(size: int = LIMIT) -> str:
    """530 thousand short lines each naming the GPU and CUDA, words prose and TensorFlow's log
    start on, with a number: distinct lines every recogniser that reads words must look at."""
    return _lines(lambda i: f"GPU {i} CUDA\n", size)


INPUTS: dict[str, Callable[[int], str]] = {
    "all-newlines": all_newlines,
    "long-prose": long_prose,
    "huge-pip-list": huge_pip_list,
    "one-8mib-line": one_huge_line,
    "tf-log-lines": many_tf_log_lines,
    "mixed": mixed,
    "repeated-phrases": repeated_phrases,
    "short-lines": short_lines,
    "tiny-lines": tiny_lines,
    "log-warnings": log_warnings,
    "gpu-words": gpu_words,
}


def tfdoctor_argv() -> list[str]:
    exe = Path(sys.executable).parent / "tfdoctor"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tfdoctor"]


def measure(path: Path) -> dict[str, float]:
    """Wall and CPU time, peak RSS and exit code of `tfdoctor triage --json path`, from a middle
    process (its RUSAGE_CHILDREN is that one command). CPU time is the figure to compare on a
    loaded machine: wall time there includes waiting for a core."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
        "took = time.perf_counter() - start\n"
        "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "crashed = b'Traceback' in proc.stderr\n"
        "print(took, use.ru_utime + use.ru_stime, use.ru_maxrss, proc.returncode, int(crashed))\n"
    )
    argv = [sys.executable, "-c", probe, *tfdoctor_argv(), "triage", "--json", str(path)]
    took, cpu, kib, rc, crashed = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    return {"seconds": float(took), "cpu_seconds": float(cpu), "peak_mb": int(kib) / 1024, "exit": int(rc),
            "crashed": bool(int(crashed))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="Comma-separated input names (default: all).")
    parser.add_argument("--size", type=int, default=LIMIT, help="Bytes per input (default: the limit).")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="Write the inputs to DIR and keep them.")
    parser.add_argument("--json", action="store_true", help="One JSON object per input instead of a table.")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="Run each input N times and keep the run with the least CPU time (a loaded "
                             "machine adds to some runs, never takes away; default 1).")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(INPUTS)
    unknown = [n for n in names if n not in INPUTS]
    if unknown:
        parser.error(f"unknown input(s) {', '.join(unknown)}; known: {', '.join(INPUTS)}")
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        if not args.json:
            print(f"{'input':<16} {'bytes':>9} {'lines':>9} {'seconds':>8} {'cpu s':>6} {'peak MB':>8} {'exit':>4}  "
                  f"(target <= {TARGET_S:g} s, <= {TARGET_MB:g} MB)")
        worst = 0
        for name in names:
            text = INPUTS[name](args.size)
            path = where / f"{name}.txt"
            path.write_text(text, encoding="utf-8")
            row = min((measure(path) for _ in range(max(1, args.repeat))), key=lambda r: r["cpu_seconds"])
            over = (row["cpu_seconds"] > TARGET_S or row["peak_mb"] > TARGET_MB or row["crashed"]
                    or row["exit"] not in (0, 1, 3))
            worst |= over
            if args.json:
                print(json.dumps({"input": name, "bytes": len(text.encode()), **row}))
            else:
                print(f"{name:<16} {len(text.encode()):>9} {text.count(chr(10)):>9} {row['seconds']:>8.2f} "
                      f"{row['cpu_seconds']:>6.2f} {row['peak_mb']:>8.0f} {row['exit']:>4}"
                      f"{'  CRASHED' if row['crashed'] else ''}{'  OVER' if over else ''}")
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main())
