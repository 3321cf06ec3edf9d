"""triage reads the benchmark's worst inputs right (benchmarks/bench_triage.py builds them).

Issue 21: these shapes made triage take seconds to minutes; speed is measured by the benchmark,
not here. Each test runs the real command on the input's shape (1 MiB: what is read does not
depend on the size, and the suite stays quick) and checks what triage reads out of it.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from click.testing import CliRunner
from tfdoctor.cli import cli

SIZE = 1024 * 1024


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_triage.py"
    spec = importlib.util.spec_from_file_location("bench_triage", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def triage_json(text: str) -> dict:
    result = CliRunner().invoke(cli, ["triage", "--json", "-"], input=text)
    assert result.exit_code in (0, 1, 3), result.output
    return json.loads(result.stdout)


def test_every_worst_input_is_tested_here():
    """A new worst input in the benchmark gets its test here too."""
    assert set(BENCH.INPUTS) == {"all-newlines", "long-prose", "huge-pip-list", "one-8mib-line",
                                 "tf-log-lines", "mixed", "repeated-phrases", "short-lines", "tiny-lines",
                                 "log-warnings", "gpu-words"}


def test_all_newlines_read_as_nothing():
    """A million empty lines are an empty ticket: nothing recognised, every check unchecked."""
    report = triage_json(BENCH.all_newlines(SIZE))
    assert report["findings"] == []
    assert report["verdict"]["status"] == "incomplete"


def test_facts_after_a_cut_blank_run_keep_their_line_numbers():
    """Blank runs are cut before the recognisers read the ticket; what comes after one is still
    read, and its provenance names its line in the ticket as pasted."""
    blanks = "\n" * 500_000
    text = "tensorflow==2.15.0\n" + blanks + "Python 3.10.12\n" + blanks + "\r\n" * 300 + "Ubuntu 22.04\n"
    facts = triage_json(text)["facts"]
    assert facts["python"]["version"] == "3.10.12"
    assert facts["provenance"]["python.version"] == "ticket prose, line 500002"
    assert facts["provenance"]["platform.distro"] == "ticket prose, line 1000303"
    assert facts["platform"]["distro"] == "Ubuntu 22.04"


def test_long_prose_claims():
    """55 thousand lines of a user's words: the first claim of each kind, from line 1."""
    facts = triage_json(BENCH.long_prose(SIZE))["facts"]
    assert facts["tensorflow"]["version"] == "2.15"
    assert facts["python"]["version"] == "3.10"
    assert facts["platform"]["distro"] == "Ubuntu 22.04"
    assert facts["toolkits"] == [{"path": None, "version": "12.2", "via": "claimed", "cudnn_version": None}]
    assert facts["intent"]["gpu"] == "RTX 3090"
    assert facts["provenance"]["intent.gpu"] == "ticket prose, line 1"
    assert facts["python"]["packages"] == {"numpy": "1.26.4"}


def test_huge_pip_list_every_package():
    """A pip list of tens of thousands of packages: every one of them, and TensorFlow's version."""
    text = BENCH.huge_pip_list(SIZE)
    facts = triage_json(text)["facts"]
    rows = text.splitlines()[2:]
    assert len(facts["python"]["packages"]) == len(rows)
    assert facts["python"]["packages"]["package-0000000"] == "0.0.0"
    assert facts["tensorflow"]["version"] == "2.15.0"
    assert facts["provenance"]["python.packages"] == "pip list, line 1"


def test_one_huge_line_then_an_error():
    """A line of megabytes is skipped unread; the error line after it is still a finding."""
    report = triage_json(BENCH.one_huge_line(SIZE))
    found = {f["id"]: f["evidence"] for f in report["findings"]}
    assert found["tf-log-library-not-loaded"]["subject"] == "libcudart.so.12"


def test_tf_log_lines_causes_and_device():
    """TensorFlow's log repeated: each cause once, and the GPU it registered."""
    report = triage_json(BENCH.many_tf_log_lines(SIZE))
    ids = [f["id"] for f in report["findings"]]
    assert ids[:2] == ["tf-log-cudnn-version-mismatch", "tf-log-jit-compilation-failed"]
    smoke = report["facts"]["smoke"]
    assert [c["id"] for c in smoke["causes"] if c["id"] != "harmless"] == [
        "cudnn-version-mismatch", "jit-compilation-failed"]
    # the factory-registration and TF-TRT warnings, each once, with why they are harmless
    assert len([c for c in smoke["causes"] if c["id"] == "harmless"]) == 2, smoke["causes"]
    assert smoke["devices"] == [{"name": "GPU:0", "device_type": "GPU", "model": "NVIDIA GeForce RTX 3090",
                                 "compute_capability": "8.6"}]


def test_mixed_reads_as_one_copy_does():
    """Every recorded ticket, repeated up to the size: the same findings as one copy of them."""
    data = Path(__file__).resolve().parent / "data"
    single = "".join(p.read_text(encoding="utf-8") + "\n" for p in sorted(data.rglob("*.txt")))
    block = BENCH.mixed(SIZE)
    assert block.startswith(single)
    ids = [f["id"] for f in triage_json(single)["findings"]]
    assert [f["id"] for f in triage_json(block)["findings"]] == ids


def test_repeated_phrases_then_a_real_device_line():
    """20,000-character lines repeating what the TensorFlow-log recogniser starts on read as
    nothing; the real "Created device" line after them is the GPU TensorFlow registered."""
    report = triage_json(BENCH.repeated_phrases(SIZE))
    device = {"name": "GPU:0", "device_type": "GPU", "model": "NVIDIA GeForce RTX 3090",
              "compute_capability": "8.6"}
    assert report["facts"]["smoke"]["devices"] == [device]


def test_short_lines_then_an_error():
    """Hundreds of thousands of short log-ish lines say nothing; the error line after them is a
    finding (each recogniser jumps to the lines that concern it, and must still reach it)."""
    report = triage_json(BENCH.short_lines(SIZE))
    assert [(f["id"], f["evidence"]["subject"]) for f in report["findings"]] == [
        ("tf-log-library-not-loaded", "libcudart.so.12")]


def test_tiny_lines_then_an_error():
    """A million one-letter lines say nothing; the error line after them is a finding, on its line."""
    text = BENCH.tiny_lines(SIZE)
    report = triage_json(text)
    assert [f["id"] for f in report["findings"]] == ["tf-log-library-not-loaded"]
    assert report["facts"]["smoke"]["causes"][0]["line"].startswith("ImportError: libcudart.so.12")
    assert text.count("\n") > 500_000


def test_log_warnings_one_cause():
    """TensorFlow's warning line with a new step each time: one unrecognised log cause, from its
    first line, for the source file that printed it."""
    report = triage_json(BENCH.log_warnings(SIZE))
    causes = report["facts"]["smoke"]["causes"]
    source = "tensorflow/core/framework/op_kernel.cc"
    assert [(c["id"], c["subject"]) for c in causes] == [("unrecognised", source)]
    assert causes[0]["line"].endswith("OP_REQUIRES failed at step 0: out of range")


def test_gpu_words_read_as_wanting_a_gpu():
    """Lines naming the GPU and CUDA without a version claim nothing but the GPU: the first number
    that is a GeForce model beside GPU words ("GPU 2050 CUDA": an RTX 2050) wins over the bare
    "GPU" of the lines before it."""
    facts = triage_json(BENCH.gpu_words(SIZE))["facts"]
    assert facts["intent"]["gpu"] == "2050"
    assert facts["provenance"]["intent.gpu"] == "ticket prose, line 2051"
    assert facts["toolkits"] == [] and facts["tensorflow"] is None
