"""Never silent (issue 20, item 5): an error or warning line of TensorFlow's own log that no
catalogue record knows still becomes a finding that quotes it, through the real `tfdoctor triage`."""

from __future__ import annotations

from helpers import triage_json
from tfdoctor.smoke import logmap

# TensorFlow's two C++ log prefixes (glog style to 2.15, Abseil from 2.16) around a message no
# record describes.
GLOG = ("2021-03-01 10:00:00.000000: E tensorflow/core/common_runtime/made_up_check.cc:42] "
        "Something no rule knows")
ABSL = "W0000 00:00:1721811870.196385   15886 made_up_check.cc:42] A warning no rule knows"


def test_an_unknown_error_line_is_quoted_with_its_source_file() -> None:
    """A ticket whose only TensorFlow output is an unknown error line used to come back with no
    finding ("incomplete"); now the verdict names the line and the file that printed it."""
    report = triage_json(GLOG + "\n")
    first = report["findings"][0]
    assert first["id"] == "tf-log-unrecognised"
    assert "Something no rule knows" in first["message"]
    assert "tensorflow/core/common_runtime/made_up_check.cc" in first["message"]
    assert first["severity"] == "warning"


def test_the_error_line_comes_before_warning_lines() -> None:
    """Of several unknown lines, the finding quotes the most severe first and keeps the others as
    evidence."""
    report = triage_json(ABSL + "\n" + GLOG + "\n")
    unknown = [f for f in report["findings"] if f["id"] == "tf-log-unrecognised"]
    assert len(unknown) == 1
    assert "Something no rule knows" in unknown[0]["message"]
    assert any("A warning no rule knows" in v for v in unknown[0]["evidence"].values())


def test_a_known_cause_is_ranked_before_an_unknown_line() -> None:
    """An unknown line is generic: the cause the catalogue knows stays the root."""
    known = ("2022-06-01 10:00:00.100000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:389] "
             "Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.")
    report = triage_json(GLOG + "\n" + known + "\n")
    ids = [f["id"] for f in report["findings"]]
    assert ids[0] == "tf-log-cudnn-version-mismatch"
    assert "tf-log-unrecognised" in ids


def test_info_lines_benign_lines_and_prose_are_not_reported() -> None:
    """Only errors and warnings of TensorFlow's log format count: an info line, a line healthy
    machines print, and a sentence are not findings."""
    info = "I0000 00:00:1721811870.196385   15886 made_up_check.cc:42] Just saying"
    benign = ("2023-08-27 03:00:04.313579: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] "
              "TF-TRT Warning: Could not find TensorRT")
    for line in (info, benign, "E is my favourite letter: it fails and errors"):
        assert logmap.recognise(line) is None, line
        assert not [f for f in triage_json(line + "\n")["findings"] if f["id"] == "tf-log-unrecognised"]


def test_known_lines_are_never_reported_as_unknown() -> None:
    """A line the catalogue knows is its cause, not "TensorFlow reported"."""
    line = ("2021-05-11 08:20:01.502470: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] "
            "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open "
            "shared object file: No such file or directory")
    assert logmap.recognise(line) == ("library-not-loaded", "libcudart.so.11.0")


# A longer ticket around a line that states no fact of its own: what the user did, a traceback
# through paths without a Python version, a question. Facts such a ticket does state (a GPU in
# nvidia-smi, a TensorFlow version) may change a finding (TensorFlow itself says a missing libcudart
# is harmless without a GPU); its length and its prose must not.
_BEFORE = "I am training my model and it fails; this is what it prints:\n\n$ python train.py\n"
_AFTER = ("Traceback (most recent call last):\n"
          '  File "train.py", line 12, in <module>\n'
          "    model.fit(x, y, epochs=3)\n"
          "Any idea what is wrong? Thanks.\n")


def _severities(text: str) -> dict[str, str]:
    return {f["id"]: f["severity"] for f in triage_json(text)["findings"]}


def test_a_line_alone_and_inside_a_longer_ticket_get_the_same_findings() -> None:
    """Issue 20, item 6: every sample line of every catalogue record, pasted alone and pasted in
    the middle of a ticket, gives the same finding ids with the same severities."""
    from tfdoctor.knowledge import catalogue

    differ = []
    for cause in catalogue().causes.values():
        for pattern in cause.patterns:
            for sample in pattern.samples:
                alone, inside = _severities(sample + "\n"), _severities(_BEFORE + sample + "\n" + _AFTER)
                if alone != inside:
                    differ.append((cause.id, sample[:80], alone, inside))
    assert not differ, differ


def test_a_ticket_of_harmless_warnings_is_answered_with_why() -> None:
    """A ticket whose only TensorFlow lines are warnings healthy machines print (TensorRT 7 not
    found, for TF-TRT only: AUTOMATIC1111/stable-diffusion-webui#5926) came back with nothing at
    all. Now each is answered with its reason, as an info finding: the verdict does not change,
    and a line that is not TensorFlow's own log format still says nothing."""
    lines = ("2022-12-22 01:16:10.008987: W tensorflow/compiler/xla/stream_executor/platform/default/"
             "dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: "
             "cannot open shared object file: No such file or directory\n"
             "2022-12-22 01:16:10.009187: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT "
             "Warning: Cannot dlopen some TensorRT libraries.\n")
    report = triage_json(lines)
    assert [f["severity"] for f in report["findings"]] == ["info"]
    finding = report["findings"][0]
    assert finding["id"] == "tf-log-harmless" and report["verdict"]["status"] != "problems"
    assert "libnvinfer.so.7" in finding["message"]
    assert "TF-TRT only" in finding["evidence"]["why"] and "TensorRT" in finding["evidence"]["why2"]
    for line in ("I0000 00:00:1721811870.196385   15886 cuda_dnn.cc:42] Loaded cuDNN version 8904",
                 "TF-TRT Warning: Could not find TensorRT, I wrote in my notes"):
        assert logmap.harmless(line) is None, line


def test_an_empty_gpu_list_beside_a_driver_is_a_finding_with_the_releases_advice() -> None:
    """huggingface/community-events#118: nvidia-smi's driver, TensorFlow 2.11 and
    `tf.config.list_logical_devices("GPU")` printing [] came back with no finding. TensorFlow
    registered no GPU on a machine with a driver: a warning (the GPU count is unknown), whose hint
    says what TensorFlow 2.11 loads (the system's CUDA 11.2 and cuDNN 8.1, no [and-cuda] before 2.14)."""
    ticket = ("NVIDIA-SMI 515.65.01\nDriver Version: 515.65.01\nCUDA Version: 11.7\nTensorFlow: 2.11.0\n\n"
              "tf.config.list_logical_devices(\"GPU\")\n```\nOutput:\n```\n[]\n```\n")
    report = triage_json(ticket)
    [f] = [f for f in report["findings"] if f["id"] == "smoke-no-gpu"]
    assert f["severity"] == "warning" and f["evidence"]["nvml_gpus"] == "unknown"
    assert "install CUDA 11.2 and cuDNN 8.1" in f["hint"]
    # the same list with no sign of a driver or a GPU is no finding: nothing says one was wanted
    quiet = triage_json("TensorFlow: 2.11.0\n\n[]\n")
    assert not [f for f in quiet["findings"] if f["id"] == "smoke-no-gpu"]


def test_a_short_template_keeps_its_quotes() -> None:
    """"'%s' failed with '%s'" (tf_gpu_runtime_wrappers.cc) with its quotes optional was any
    sentence with "failed with" in it: conda's "Solving environment: failed with initial frozen
    solve" became a CUDA error (loopbio/n2v#111). A template of few fixed words matches only with
    the quotes it prints; a real instance still does."""
    assert logmap.recognise("Solving environment: failed with initial frozen solve. Retrying with flexible "
                            "solve.") is None
    real = "'cuModuleLoadData(&module, data)' failed with 'CUDA_ERROR_INVALID_PTX'"
    assert logmap.recognise(real) == ("ptx-invalid", "CUDA_ERROR_INVALID_PTX")


def test_pips_no_distribution_is_never_silent_and_the_specific_record_wins() -> None:
    """pip's "No matching distribution found for X" (its resolver's words) for a package that is
    neither TensorFlow nor a companion used to get no finding (ComfyUI_LayerStyle_Advance#8: a
    requirement named after an environment variable); TensorFlow's and a companion's keep their own
    cause, once per line."""
    def ids(line: str) -> list[tuple[str, str]]:
        return [(f["id"], f["severity"]) for f in triage_json(line + "\n")["findings"]]

    assert ids("ERROR: No matching distribution found for TF_USE_LEGACY_KERAS1") == [
        ("tf-log-pip-no-distribution", "warning")]
    assert ids("ERROR: No matching distribution found for tensorflow==2.12.0") == [
        ("tf-log-no-matching-wheel", "error")]
    assert ids("ERROR: No matching distribution found for tensorflow-text==2.13") == [
        ("tf-log-companion-no-wheel", "error")]
