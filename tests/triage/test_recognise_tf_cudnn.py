"""The cuDNN versions TensorFlow's own log prints (cuda_dnn.cc), from real text, and how the one
compatibility evaluator judges them."""

from __future__ import annotations

import pytest
from tfdoctor.report import build_report
from tfdoctor.triage import triage_facts
from tfdoctor.triage.recognisers import tf_cudnn
from triage_fixtures import observed, ticket


def test_the_version_check_names_both_sides():
    """edwardyehuang/CAR#1: cuDNN 8.0.4 loaded under a build compiled with 8.1.0."""
    assert observed(tf_cudnn, "tf_cudnn/car1_mismatch.txt") == [
        ("toolkit.loaded_cudnn", "8.0.4"), ("tensorflow.cudnn_version", "8.1.0")]


@pytest.mark.parametrize(("name", "version"), [("tf_cudnn/tf63209_loaded_8.txt", "8.9.6"),
                                               ("tf_cudnn/tf94650_loaded_9.txt", "9.10.1")])
def test_loaded_cudnn_version_in_both_encodings(name, version):
    """cudnnGetVersion(): 8906 is 8.9.6 (major*1000 before cuDNN 9), 91001 is 9.10.1 (major*10000)."""
    assert observed(tf_cudnn, name) == [("toolkit.loaded_cudnn", version)]


@pytest.mark.parametrize(("number", "dotted"), [("8204", "8.2.4"), ("8600", "8.6.0"), ("90800", "9.8.0"),
                                                ("7605", "7.6.5"), ("100000", "10.0.0"), ("1234", None)])
def test_dotted(number, dotted):
    assert tf_cudnn.dotted(number) == dotted


def test_a_loaded_cudnn_is_judged_in_any_release_without_a_second_finding():
    """tensorflow/tensorflow#62626 (2.15): the loaded cuDNN against the compiled one is a
    compatibility row (from 2.14 too, where no installed cuDNN is judged otherwise); TensorFlow's
    own line is the finding, once."""
    facts, _ = triage_facts(["tensorflow 2.15.0\n" + "\n".join(ticket("tf_cudnn/tf215_mismatch.txt"))])
    report = build_report(facts)
    [row] = [f for f in report.compatibility if f.element == "cuDNN"]
    assert (row.have, row.fits) == ("8.8.0", False)
    assert row.need == "cuDNN 8.9 or a later 8.x" and "tensorflow log" in row.need_from
    ids = [f.id for f in report.findings]
    assert "tf-log-cudnn-version-mismatch" in ids and "cudnn-wrong-version" not in ids, ids


def test_a_loaded_cudnn_that_fits():
    """cuDNN 8.9.6 loaded by TensorFlow 2.15 (built with 8.9.4 per its tested configuration)."""
    facts, _ = triage_facts(["tensorflow 2.15.0\n" + "\n".join(ticket("tf_cudnn/tf63209_loaded_8.txt"))])
    [row] = [f for f in build_report(facts).compatibility if f.element == "cuDNN"]
    assert (row.have, row.fits) == ("8.9.6", True)
