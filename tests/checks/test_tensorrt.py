"""TF-TRT's TensorRT (issue 20, item 5: a ticket about TensorRT gets a finding): the soname
TensorFlow's own loader asks for, or the version TF-TRT says it was linked with, against the
TensorRT installed (apt or dpkg's libnvinfer package, TF-TRT's loaded version, ldconfig, pip's
wheels, a file the user names), judged by stack.tensorrt and reported by the tensorrt check."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import change, healthy, judge, triage_json
from tfdoctor import stack
from tfdoctor.facts import TensorRtFacts
from tfdoctor.findings import CheckStatus
from tfdoctor.triage.recognisers import tensorrt

H = healthy()


def _seen(text: str) -> list[tuple[str, str]]:
    lines = text.splitlines()
    seen = list(tensorrt.recognise(lines))
    assert all(o.source == tensorrt.NAME and 1 <= o.line <= len(lines) for o in seen)
    return [(o.path, o.value) for o in seen]


# github.com/tensorflow/tensorflow/issues/53697 (tests/field/cases/tensorflow-53697.txt)
DOCKER_270 = """\
$ apt list --installed | grep infer

libnvinfer-plugin8/unknown,now 8.0.0-1+cuda11.0 amd64 [installed,upgradable to: 8.2.0-1+cuda11.4]
libnvinfer8/unknown,now 8.0.0-1+cuda11.0 amd64 [installed,upgradable to: 8.2.0-1+cuda11.4]

$ python3
import tensorflow as tf
import tensorflow.compiler as tf_cc
tf_cc.tf2tensorrt._pywrap_py_utils.get_linked_tensorrt_version()

(7, 2, 2)
"""
# github.com/tensorflow/tensorflow/issues/64809 (tests/field/cases/tensorflow-64809.txt)
VLOG_216 = """\
2024-06-04 15:42:11.291621: I external/local_tsl/tsl/platform/default/dso_loader.cc:70] Could not load \
dynamic library 'libnvinfer.so.8.6.1'; dlerror: libnvinfer.so.8.6.1: cannot open shared object file: \
No such file or directory; LD_LIBRARY_PATH: :/home/user/miniconda3/lib/
2024-06-04 15:42:11.291687: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: \
Could not find TensorRT

While I have TensorRT, and thus libnvinfer, installed, the actual libraries are named libnvinfer.so.10 \
and libnvinfer_plugin.so.10
"""


def test_what_tensorflow_wants_and_what_is_installed_are_read_from_their_programs() -> None:
    assert _seen(DOCKER_270) == [("tensorrt.installed", "8.0.0"), ("tensorrt.installed", "8.0.0"),
                                 ("tensorrt.wanted", "7.2.2")]
    assert _seen(VLOG_216) == [("tensorrt.wanted", "libnvinfer.so.8.6.1"),
                               ("tensorrt.stated", "libnvinfer.so.10")]
    # every release's loader line; the plugin carries the library's version
    line = ("2020-11-26 10:23:19.183104: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] "
            "Could not load dynamic library 'libnvinfer_plugin.so.7'; dlerror: ...")
    assert _seen(line) == [("tensorrt.wanted", "libnvinfer.so.7")]
    assert _seen("I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Successfully opened "
                 "dynamic library libnvinfer.so.7") == [("tensorrt.wanted", "libnvinfer.so.7"),
                                                ("tensorrt.installed", "libnvinfer.so.7")]
    assert _seen(">>> print(get_loaded_tensorrt_version())  # (8, 6, 1)") == [("tensorrt.installed", "8.6.1")]
    assert _seen("ii  libnvinfer10:amd64  10.0.1.6-1+cuda12.4  amd64  TensorRT runtime libraries") == [
        ("tensorrt.installed", "10.0.1.6")]


@pytest.mark.parametrize("said", [
    "According to tensorflow I should be installing tensorrt=7.2.2 but the available versions are > 8",
    "libnvinfer.so.7 is not installed",
    "TensorFlow wants libnvinfer.so.7 but I installed TensorRT 8",
    "I have tried to find libnvinfer.so.7",
])
def test_a_library_the_user_wants_or_lacks_is_not_an_installed_one(said: str) -> None:
    assert [p for p, _ in _seen(said) if p != "tensorrt.wanted"] == []


@pytest.mark.parametrize("ticket,wanted,installed", [
    (DOCKER_270, "TensorRT 7 (libnvinfer.so.7)", "TensorRT 8.0.0"),
    (VLOG_216, "TensorRT 8.6.1 (libnvinfer.so.8.6.1)", "libnvinfer.so.10"),
])
def test_another_tensorrt_than_tensorflow_loads_is_the_finding(ticket: str, wanted: str,
                                                               installed: str) -> None:
    report = triage_json(ticket)
    [f] = [f for f in report["findings"] if f["id"] == "tensorrt-wrong-version"]
    assert f["check"] == "tensorrt" and f["severity"] == "warning"
    assert f["evidence"]["tensorrt.wanted"].startswith(wanted)
    assert f["evidence"]["tensorrt.installed"].startswith(installed)
    assert "GPU work that does not use TF-TRT is not affected" in f["message"]
    assert report["findings"][0]["id"] == "tensorrt-wrong-version"  # (ranked first)


def test_tensorflows_tensorrt_line_alone_stays_harmless_and_asks_what_is_installed() -> None:
    """Healthy machines print the libnvinfer line too: without the installed TensorRT it is no
    warning, and pip list is asked for."""
    report = triage_json(VLOG_216.split("\n\n")[0] + "\n")
    assert [f["id"] for f in report["findings"] if f["severity"] != "info"] == []
    [row] = [o for o in report["outcomes"] if o["check"] == "tensorrt"]
    assert row["status"] == "could-not-check" and row["missing"] == ["python.packages"]
    [pip] = [a for a in report["ask_for"] if a["command"] == "pip list"]
    assert "tensorrt" in pip["decides"]


def _fit(facts):
    return stack.tensorrt(facts)


def test_the_soname_decides_by_its_numbers() -> None:
    def fit(wanted, installed):
        return _fit(replace(H, tensorrt=TensorRtFacts(wanted=wanted, installed=installed))).fits

    assert fit("libnvinfer.so.8.6.1", "8.6.1.6") is True
    assert fit("libnvinfer.so.8.6.1", "libnvinfer.so.10") is False
    assert fit("libnvinfer.so.8.6.1", "libnvinfer.so.8") is None  # which 8 cannot be told
    assert fit("libnvinfer.so.7", "7.2.3.4") is True
    assert fit("7.2.2", "7.1.3") is True  # linked 7.2.2 loads libnvinfer.so.7
    assert fit("7.2.2", "8.0.0") is False


def test_a_live_run_judges_pips_tensorrt_against_the_release_table() -> None:
    """No ticket: TensorFlow 2.10's wheel dlopens libnvinfer.so.7 (the release table); pip's
    tensorrt 8.5 is another major."""
    facts = change(H, tensorflow={"version": "2.10.1"}, python={"packages": {**H.python.packages,
                                                                             "tensorrt": "8.5.3.1"}})
    fit = _fit(facts)
    assert fit is not None and fit.fits is False
    assert fit.need_from == "tested build configuration of TensorFlow 2.10" and "tensorrt in" in fit.have_from
    report = judge(facts)
    assert [f.id for f in report.findings if f.id == "tensorrt-wrong-version"] == ["tensorrt-wrong-version"]


def test_nothing_to_judge_is_not_applicable() -> None:
    report = judge(H)
    [row] = [o for o in report.outcomes if o.check == "tensorrt"]
    assert row.status is CheckStatus.NOT_APPLICABLE
    cpu = replace(change(H, tensorflow={"is_cuda_build": False}),
                  tensorrt=TensorRtFacts(wanted="libnvinfer.so.7", installed="8.0.0"))
    assert _fit(cpu) is None


def test_the_live_probe_lists_every_tensorrt_wheel_the_judgement_reads() -> None:
    """A live run's installed TensorRT is pip's wheel: the target child must report each of them."""
    from tfdoctor.probes import _target_child

    assert [w for w in stack.TENSORRT_WHEELS if not _target_child.is_watched(w)] == []
