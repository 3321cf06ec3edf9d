"""`conda info`'s virtual packages, through `tfdoctor triage`.

conda sets `__cuda` to the CUDA version of the driver it finds and leaves it out where it finds
none; conda-forge's CUDA builds of TensorFlow require it (conda docs, "Managing virtual packages").
"""

from __future__ import annotations

from helpers import triage_json

# conda/conda#11488 (conda 4.12 on WSL2, tensorflow-gpu=2.8.0 from conda-forge): no __cuda
NO_CUDA = """\
          conda version : 4.12.0
    conda-build version : not installed
         python version : 3.9.5.final.0
       virtual packages : __linux=5.10.102.1=0
                          __glibc=2.31=0
                          __unix=0=0
                          __archspec=1=x86_64
       base environment : /home/user/miniconda3  (writable)
"""
# conda-forge/tensorflow-feedstock#369: a driver for CUDA 12.2, listed third
WITH_CUDA = """\
       virtual packages : __archspec=1=zen
                          __conda=23.11.0=0
                          __cuda=12.2=0
                          __glibc=2.35=0
                          __linux=6.5.0=0
"""


def test_no_cuda_virtual_package_is_conda_finding_no_driver():
    report = triage_json(NO_CUDA)
    top = report["findings"][0]
    assert top["id"] == "tf-log-conda-no-cuda" and top["severity"] == "error"
    assert "__linux=5.10.102.1=0" in top["evidence"]["log_line"]
    assert report["facts"]["driver"]["cuda_driver_version"] is None


def test_the_cuda_virtual_package_is_the_drivers_cuda_version():
    report = triage_json(WITH_CUDA)
    assert report["facts"]["driver"]["cuda_driver_version"] == "12.2"
    assert report["facts"]["provenance"]["driver.cuda_driver_version"] == "conda info, line 1"
    assert "tf-log-conda-no-cuda" not in [f["id"] for f in report["findings"]]


def test_the_solvers_own_words_name_the_same_cause():
    """conda-forge/tensorflow-feedstock#222: libmamba's 'nothing provides __cuda needed by ...'."""
    report = triage_json("LibMambaUnsatisfiableError: Encountered problems while solving:\n"
                         "  - nothing provides __cuda needed by tensorflow-2.7.0-cuda102py310hcf4adbc_0\n")
    top = report["findings"][0]
    assert (top["id"], top["evidence"]["subject"]) == ("tf-log-conda-no-cuda",
                                                       "tensorflow-2.7.0-cuda102py310hcf4adbc_0")


def test_a_sentence_about_virtual_packages_is_not_conda_info():
    report = triage_json("I read that virtual packages : are how conda finds CUDA.\n")
    ids = [f["id"] for f in report["findings"]]
    assert "tf-log-conda-no-cuda" not in ids


def test_the_list_is_read_quoted_or_with_tabs():
    """A mail reply's '> ' and a tab for the alignment: the same list (field_forms caught both)."""
    quoted = "\n".join("> " + line for line in WITH_CUDA.splitlines()) + "\n"
    tabbed = WITH_CUDA.replace("                          ", "\t\t\t")
    for ticket in (quoted, tabbed):
        assert triage_json(ticket)["facts"]["driver"]["cuda_driver_version"] == "12.2", ticket
