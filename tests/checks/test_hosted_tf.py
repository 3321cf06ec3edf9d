"""TensorFlow of the ticket's own on Colab (issue 20, item 3: where the ticket runs is a fact): the
GPU runtime carries the CUDA and cuDNN of the TensorFlow it preinstalls (tensorflow/tensorflow#90014,
googlecolab/colabtools#442), so a ticket there that installs or names another release gets the
hosted-tf warning. Through `tfdoctor triage`, the command's real path."""

from __future__ import annotations

from helpers import triage_json
from tfdoctor.triage.recognisers import prose


def _found(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["id"] == "hosted-runtime-tf-replaced"]


def _hosted(text: str) -> list[object]:
    return [o.value for o in prose.recognise(text.splitlines()) if o.path == "platform.hosted"]


def test_where_the_ticket_runs_is_read_from_its_words_not_from_links() -> None:
    assert _hosted("I use Google Colab for my personal project.") == ["Google Colab"]
    assert _hosted("### OS platform and distribution\nColab notebook") == ["Google Colab"]
    assert _hosted("from google.colab import drive") == ["Google Colab"]
    # tracker templates ask every reporter for a Colab gist; a link says nothing of where it ran
    assert _hosted("https://colab.research.google.com/gist/user/25b8598f/42957.ipynb") == []
    assert _hosted("the same as googlecolab/colabtools#4230") == []


def test_a_tensorflow_installed_on_colab_is_not_the_one_its_gpu_is_set_up_for() -> None:
    # googlecolab/colabtools#3332 (tests/field/cases/colab-3332.txt)
    report = triage_json("I am using colab pro. Restart runtime lose GPU device.\n"
                     "!pip install tensorflow==2.4.0\n")
    [f] = _found(report)
    assert f["severity"] == "warning" and f["check"] == "hosted-tf"
    assert "installs tensorflow==2.4.0" in f["message"]
    assert f["evidence"]["platform.hosted"].startswith("Google Colab (ticket prose, line 1)")
    assert "Disconnect and delete runtime" in f["hint"] and "and-cuda" not in f["hint"]
    assert report["findings"][0]["id"] == "hosted-runtime-tf-replaced"


def test_from_214_the_advice_names_the_releases_own_cuda_libraries() -> None:
    # tensorflow/tensorflow#90014
    [f] = _found(triage_json("### TensorFlow version\n2.15\n### OS platform and distribution\n"
                             "Colab notebook\n### GPU model and memory\nA100\n"))
    assert "runs TensorFlow 2.15" in f["message"]
    assert "pip install 'tensorflow[and-cuda]==2.15.0.post1'" in f["hint"]


def test_not_with_its_own_cuda_libraries_a_gpu_listed_no_release_or_elsewhere() -> None:
    assert not _found(triage_json("On Colab: !pip install 'tensorflow[and-cuda]==2.16.1'\n"))
    assert not _found(triage_json("On Colab I import tensorflow and train.\n"))  # the preinstalled one
    assert not _found(triage_json("Ubuntu 22.04\npip install tensorflow==2.12.0\n"))  # not a hosted runtime
    listed = ("Colab, tensorflow 2.15.0\n>>> tf.config.list_physical_devices('GPU')\n"
              "[PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')]\n")
    assert not _found(triage_json(listed))


def test_a_companion_that_pins_tensorflow_brings_its_release_onto_the_runtime() -> None:
    """keras-team/keras-hub#1321: on Colab, `pip install keras-nlp` fetched tensorflow-text 2.15.0,
    whose wheels require tensorflow 2.15 by name (tensorflow/text's setup.py), so pip replaces the
    runtime's TensorFlow: pip's own "Downloading" line is the fact, the user never named TF."""
    ticket = ("In google colab, after importing keras-nlp, access to GPU is lost:\n"
              "!pip install keras-nlp==0.6.3\n"
              "Collecting tensorflow-text (from keras-nlp==0.6.3)\n"
              "  Downloading tensorflow_text-2.15.0-cp310-cp310-manylinux_2_17_x86_64.whl (5.2 MB)\n")
    [f] = _found(triage_json(ticket))
    assert "installs tensorflow-text==2.15.0 (which requires tensorflow 2.15)" in f["message"], f["message"]
    # a companion that follows no TensorFlow release, or one not pinned, brings none
    assert not _found(triage_json("On Colab\n!pip install tensorflow-text\n"))
    assert not _found(triage_json("On Colab\n  Downloading keras_nlp-0.6.3-py3-none-any.whl (584 kB)\n"))
