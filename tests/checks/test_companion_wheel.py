"""A companion with no wheel (issue 20, item 3): what the user says pip cannot install is a fact
(`intent.no_wheel`, read by triage's prose recogniser), judged by companion-wheel under the same
cause id as pip's own "No matching distribution found for tensorflow-text"."""

from __future__ import annotations

from helpers import triage_json
from tfdoctor.triage.recognisers import prose


def _stated(text: str) -> list[str]:
    return [o.value for o in prose.recognise(text.splitlines()) if o.path == "intent.no_wheel"]


def test_what_the_user_says_has_no_wheel_is_read_by_its_pypi_name() -> None:
    # github.com/keras-team/keras-hub/issues/1218 (the package named only by its repository's URL)
    assert _stated("But there is [no wheel](https://github.com/tensorflow/text/issues/1175) for the "
                   "`2.13.x` series, so the installation falls back to `2.12.1`") == ["tensorflow-text"]
    # github.com/keras-team/keras-hub/issues/1649
    said = "I found the reason. tensorflow-text has no distribution for python3.12."
    assert _stated(said) == ["tensorflow-text"]
    assert _stated("tensorflow_io publishes no wheels for 3.12 and there are no wheels of "
                   "tensorflow-addons either") == ["tensorflow-io", "tensorflow-addons"]


def test_pips_own_line_and_other_words_are_not_this_fact() -> None:
    assert _stated("ERROR: No matching distribution found for tensorflow-text") == []
    assert _stated("there is no GPU in tensorflow-text's tokenizers") == []
    assert _stated("the wheel for tensorflow-text installed fine") == []


def test_a_stated_companion_without_a_wheel_is_the_cause_with_the_python_in_hand() -> None:
    report = triage_json("Python 3.12, keras-hub 0.17\nI found the reason. tensorflow-text has no "
                     "distribution for python3.12.\n")
    [f] = [f for f in report["findings"] if f["id"] == "tf-log-companion-no-wheel"]
    assert f["check"] == "companion-wheel"
    assert f["evidence"]["package"] == "tensorflow-text" and f["evidence"]["python.version"] == "3.12"
    assert "https://pypi.org/project/tensorflow-text/#files" in f["hint"]
    assert report["verdict"]["root_cause"] == "tf-log-companion-no-wheel"


def test_pips_own_line_is_reported_once() -> None:
    """pip's line gives the cause from the log; the same words beside it add no second finding."""
    report = triage_json("ERROR: No matching distribution found for tensorflow-text\n"
                     "tensorflow-text has no wheels for Python 3.12\n")
    found = [f for f in report["findings"] if f["id"] == "tf-log-companion-no-wheel"]
    assert len(found) == 1 and found[0]["check"] != "companion-wheel"


def test_tensorflow_itself_is_not_a_companion() -> None:
    report = triage_json("there is no wheel for tensorflow-cpu on this Python\n")
    assert report["facts"]["intent"]["no_wheel"] == ["tensorflow-cpu"]
    assert not [f for f in report["findings"] if f["id"] in ("tf-log-companion-no-wheel", "check-crashed")]
    [outcome] = [o for o in report["outcomes"] if o["check"] == "companion-wheel"]
    assert outcome["status"] == "not-applicable"
