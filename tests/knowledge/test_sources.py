"""Which TensorFlow releases print from a source file (knowledge/sources.py, mined into
vocabulary/source_files.txt from every family's wheel by benchmarks/mine_vocabulary.py), and the
never-silent finding that names them (issue 20, item 5)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tfdoctor.cli import cli
from tfdoctor.knowledge import sources
from tfdoctor.smoke.logmap import LOG_LINE

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "field"))
from corpus import load_cases  # noqa: E402

# Paths as real logs of these releases print them, read from public reports (not from the data):
# tensorflow/tensorflow#61403 (2.13), #62075 (2.14), easybuilders/easybuild-easyconfigs#21790
# (2.15.1), tensorflow/tensorflow#45200 (2.4), a 2.21 wheel's own log (tests/recorded/tf-logs).
SEEN = [
    ("tensorflow/stream_executor/platform/default/dso_loader.cc", "2.4"),
    ("tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc", "2.13"),
    ("tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc", "2.14"),
    ("external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc", "2.15"),
    ("tensorflow/compiler/tf2tensorrt/utils/py_utils.cc", "2.14"),  # a small library's own file
    ("tensorflow/compiler/tf2tensorrt/utils/py_utils.cc", "2.16"),
]
# The same file moved: each path is printed by its own releases only.
NOT_SEEN = [
    ("tensorflow/stream_executor/cuda/cuda_dnn.cc", "2.15"),
    ("external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc", "2.10"),
    ("tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc", "2.4"),
]


@pytest.mark.parametrize(("path", "family"), SEEN)
def test_a_path_real_logs_of_a_release_print_names_that_release(path: str, family: str) -> None:
    assert family in sources.releases(path), sources.describe(sources.releases(path))


@pytest.mark.parametrize(("path", "family"), NOT_SEEN)
def test_a_moved_path_does_not_name_the_releases_after_or_before_it(path: str, family: str) -> None:
    assert sources.releases(path) and family not in sources.releases(path)


def test_a_bare_file_name_has_the_releases_of_every_path_with_that_name() -> None:
    """Abseil-style lines (TF >= 2.16) print "cuda_dnn.cc:535]" alone."""
    got = set(sources.releases("cuda_dnn.cc"))
    each = [set(sources.releases(p)) for p in (
        "tensorflow/stream_executor/cuda/cuda_dnn.cc",
        "external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc")]
    assert each[0] | each[1] <= got and not each[0] & each[1]


def test_tensorflow_built_as_a_bazel_dependency_prints_the_same_files() -> None:
    """TensorFlow Serving's logs say external/org_tensorflow/tensorflow/...; same files."""
    path = "tensorflow/stream_executor/platform/default/dso_loader.cc"
    assert sources.releases("external/org_tensorflow/" + path) == sources.releases(path) != ()


def test_ranges_are_written_compactly() -> None:
    assert sources.describe(("2.0", "2.1", "2.2", "2.5")) == "TF 2.0-2.2, 2.5"
    assert sources.covered() == "2.0-2.21"


def test_the_field_corpus_logs_agree_with_their_stated_release() -> None:
    """The tf_family a case's header gives (from the report, by hand) is among the releases of the
    paths its glog-style lines print, for nearly every line (a report may paste an older
    TensorFlow's log than it names: two reports of the corpus do). A path no mined wheel names (the
    wheels are Linux x86-64: tensorflow/core/platform/windows/...) says no release either way."""
    agree = disagree = 0
    for case in load_cases():
        family = case.header.get("tf_family")
        for line in case.ticket.splitlines():
            m = LOG_LINE.search(line)
            if not family or m is None or not m.group("fa") or not sources.releases(m.group("fa")):
                continue
            if family in sources.releases(m.group("fa")):
                agree += 1
            else:
                disagree += 1
    assert agree >= 130 and disagree <= agree // 20, (agree, disagree)


def _triage(text: str) -> dict:
    result = CliRunner().invoke(cli, ["triage", "--json", "-"], input=text)
    return next(f for f in json.loads(result.stdout)["findings"] if f["id"] == "tf-log-unrecognised")


def test_an_unknown_line_names_the_releases_that_print_its_file() -> None:
    finding = _triage("2023-11-10 23:45:55.325517: E tensorflow/compiler/xla/stream_executor/cuda/"
                      "cuda_driver.cc:1032] Something no record describes\n")
    assert finding["evidence"]["releases"] == sources.describe(
        sources.releases("tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc"))
    assert "2.13" in sources.releases("tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc")
    assert finding["message"].endswith(f"(tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc, "
                                       f"{finding['evidence']['releases']}).")


def test_a_file_no_wheel_names_is_said_to_be_one() -> None:
    """A plugin's or another library's line in TensorFlow's log format."""
    finding = _triage("2023-11-10 23:45:55.325517: W some_plugin/src/plugin_device.cc:12] Plugin warning\n")
    assert finding["evidence"]["releases"] == "a file no TensorFlow 2.0-2.21 Linux x86-64 wheel names"


def test_python_log_lines_name_no_release() -> None:
    finding = _triage("ERROR:tensorflow:Something went wrong that nobody knows\n")
    assert "releases" not in finding["evidence"]
