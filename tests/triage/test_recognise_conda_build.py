"""conda list's build strings: TensorFlow's build kind and CUDA from its label, the environment's
CUDA and cuDNN packages, judged by the compatibility evaluator; TensorFlow's own build info wins
over a label."""

from __future__ import annotations

from tfdoctor.report import build_report
from tfdoctor.triage import triage_facts
from tfdoctor.triage.recognisers import conda_build
from triage_fixtures import observe_all, observed, ticket

# conda list's header and rows as conda prints them; the build strings are those of the
# conda-forge packages (tensorflow 2.11.1 cuda112py39h01bd6f0_0 is quoted in
# tests/field/cases/; cudatoolkit 11.2.2 hbe64b41_10 and cudnn 8.1.0.77 h90431f1_0 are the
# conda-forge builds of those versions)
LISTING = """\
# packages in environment at /home/user/miniconda3/envs/tf:
#
# Name                    Version                   Build  Channel
cudatoolkit               11.2.2              hbe64b41_10    conda-forge
cudnn                     8.1.0.77             h90431f1_0    conda-forge
tensorflow                2.11.1          cuda112py39h01bd6f0_0    conda-forge
tensorflow-base           2.11.1          cuda112py39h0320e7d_0    conda-forge
"""


def test_labels_and_packages():
    assert [(o.path, o.value) for o in observe_all(conda_build, LISTING.splitlines())] == [
        ("toolkit.conda_version", "11.2.2"), ("toolkit.conda_cudnn", "8.1.0.77"),
        ("tensorflow.is_cuda_build", True), ("tensorflow.cuda_version", "11.2"),
        ("tensorflow.is_cuda_build", True), ("tensorflow.cuda_version", "11.2")]


def test_a_cpu_label():
    """keras-tcn#280: Anaconda's mkl_ build is TensorFlow without CUDA."""
    assert observed(conda_build, "conda_build/kerastcn280_mkl.txt") == [("tensorflow.is_cuda_build", False)]


def test_pip_rows_are_not_conda_rows():
    rows = ["tensorflow                2.15.0", "tensorflow 2.15.0 requires x"]
    assert list(conda_build.recognise(rows)) == []


def test_the_environment_is_judged_by_the_evaluator():
    """TensorFlow 2.11's CUDA build for CUDA 11.2 with the environment's cudatoolkit 11.2 and
    cuDNN 8.1: both rows fit, from the listing's lines, and the build is not assumed."""
    facts, _ = triage_facts([LISTING])
    assert facts.tensorflow.is_cuda_build is True and facts.tensorflow.cuda_version == "11.2"
    assert "tensorflow.cuda_version" not in facts.assumed
    rows = {f.element: f for f in build_report(facts).compatibility}
    assert (rows["CUDA toolkit"].have, rows["CUDA toolkit"].fits) == ("11.2.2", True)
    assert "conda list (build strings)" in rows["CUDA toolkit"].have_from
    assert (rows["cuDNN"].have, rows["cuDNN"].fits) == ("8.1.0.77", True)
    older = LISTING.replace("cudnn                     8.1.0.77", "cudnn                     7.6.5")
    rows = {f.element: f for f in build_report(triage_facts([older])[0]).compatibility}
    assert rows["cuDNN"].fits is False


def test_build_info_outweighs_the_label():
    """conda-forge/tensorflow-feedstock#365: the 2.15.0 cuda120 packages answer
    tf.test.is_built_with_cuda() with False; that answer is the fact."""
    facts, _ = triage_facts(["\n".join(ticket("conda_build/feedstock365_mislabelled.txt"))])
    assert facts.tensorflow.is_cuda_build is False
    assert "tf-cpu-only-build" in [f.id for f in build_report(facts).findings]
