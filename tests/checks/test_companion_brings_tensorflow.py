"""A companion that requires `tensorflow` by name beside another TensorFlow build (issue 20, item 3:
the ticket's pip commands are facts): tensorflow-text's and TF Decision Forests' setup.py require
`tensorflow`, so beside tensorflow-cpu, tensorflow-gpu or tf-nightly pip installs a second
distribution of the one `tensorflow` package (tensorflow/text#547, #1393). Judged by
companion-brings-tensorflow through `tfdoctor triage`, the command's real path."""

from __future__ import annotations

from helpers import triage_json

# github.com/tensorflow/text/issues/547 (tests/field/cases/tftext-547.txt)
COMMANDS = """\
python3 -m venv venv
source venv/bin/activate
pip install tensorflow-cpu==2.4.1
pip install tensorflow-text
"""


def _found(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["id"] == "companion-brings-tensorflow"]


def test_a_companion_beside_tensorflow_cpu_brings_a_second_distribution() -> None:
    report = triage_json(COMMANDS)
    [f] = _found(report)
    assert f["check"] == "companion-brings-tensorflow" and f["severity"] == "warning"
    assert f["evidence"]["pip install"] == "tensorflow-cpu==2.4.1, tensorflow-text"
    assert "install tensorflow-cpu==2.4.1 again" in f["hint"] and "--no-deps" in f["hint"]
    assert report["findings"][0]["id"] == "companion-brings-tensorflow"
    assert report["ask_for"][0]["command"] == "pip list"


def test_every_other_build_and_both_companions() -> None:
    for build, companion in (("tensorflow-gpu==2.10.0", "tensorflow_decision_forests"),
                             ("tf-nightly", "tensorflow-text==2.16.1")):
        [f] = _found(triage_json(f"pip install {build}\npip install {companion}\n"))
        assert build in f["evidence"]["pip install"], build


def test_not_when_tensorflow_itself_macos_or_the_installed_list_decide() -> None:
    assert not _found(triage_json("pip install tensorflow==2.15.0 tensorflow-text==2.15.0\n"))
    assert not _found(triage_json("pip install tensorflow-cpu\n"))  # no companion
    assert not _found(triage_json("pip install tensorflow-text\n"))  # no other build
    assert not _found(triage_json("macOS 14\n" + COMMANDS))  # tensorflow-text requires tensorflow-macos there
    # a pip list that shows what got installed: tf-installed judges the pair itself
    listed = triage_json(COMMANDS + "\n$ pip list\nPackage         Version\n--------------- -------\n"
                     "tensorflow      2.4.4\ntensorflow-cpu  2.4.1\ntensorflow-text 2.4.3\nnumpy 1.19.5\n")
    assert not _found(listed)
    assert [f["id"] for f in listed["findings"]].count("tf-multiple-distributions") == 1
