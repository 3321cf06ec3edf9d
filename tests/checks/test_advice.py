"""Advice fits the release in hand (issue 20, item 6): the library and driver causes' hints name
what that TensorFlow release needs, never a blanket `pip install 'tensorflow[and-cuda]'` (an extra
that exists only from 2.14 and would replace an older TensorFlow by the newest release)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from tfdoctor import compat
from tfdoctor.cli import cli

DLOPEN = ("2021-05-11 08:20:01.502470: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] "
          "Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared "
          "object file: No such file or directory")
CUDART = ("2023-07-13 15:38:30.515088: I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda "
          "drivers on your machine, GPU will not be used.")
CUDNN = ("2024-05-02 10:11:18.101010: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:535] "
         "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.3.0.")
DRIVER = ("2021-03-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:328] failed call "
          "to cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display driver / cuda "
          "driver combination")
FAMILIES = [v for v in compat.known_tf_versions() if not compat.tf_release(v).prerelease]
UNPINNED = re.compile(r"tensorflow\[and-cuda\](?!==)'")


def _hint(ticket: str, finding: str) -> str:
    result = CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket)
    report = json.loads(result.stdout)
    hit = next(f for f in report["findings"] if f["id"] == finding)
    return hit["hint"]


# Written by hand from tensorflow.org's tested build configurations (install/source#gpu) and the
# release notes of 2.14 / 2.15.0.post1, not from compat_tables/, which the code reads.
BY_HAND = [
    ("2.4.0", "CUDA 11.0 and cuDNN 8.0"),
    ("2.6.2", "CUDA 11.2 and cuDNN 8.1"),
    ("2.11.0", "CUDA 11.2 and cuDNN 8.1"),
    ("2.12.0", "CUDA 11.8 and cuDNN 8.6"),
    ("2.14.0", "tensorflow[and-cuda]==2.14.*"),
    ("2.15.1", "tensorflow[and-cuda]==2.15.0.post1"),
    ("2.17.1", "tensorflow[and-cuda]==2.17.*"),
    ("2.21.0", "tensorflow[and-cuda]==2.21.*"),
]


@pytest.mark.parametrize("version, wanted", BY_HAND)
def test_library_advice_names_the_release_s_own_cuda(version: str, wanted: str) -> None:
    """The ticket of the issue: TF 2.11, libcudnn.so.8 missing, was told to pip install
    'tensorflow[and-cuda]'; now it is told CUDA 11.2 and cuDNN 8.1, and 2.14+ the pinned extra."""
    hint = _hint(f"tensorflow=={version}\n{DLOPEN}\n", "tf-log-library-not-loaded")
    assert wanted in hint
    assert not UNPINNED.search(hint), hint


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("line, finding", [(DLOPEN, "tf-log-library-not-loaded"),
                                           (CUDART, "tf-log-cudart-not-loaded"),
                                           (CUDNN, "tf-log-cudnn-version-mismatch")])
def test_every_family_gets_advice_for_itself(family: str, line: str, finding: str) -> None:
    """Over every release family the tables know: the hint names that release, and an [and-cuda]
    it gives is pinned to it (or says the extra does not exist for it)."""
    hint = _hint(f"tensorflow=={family}.0\n{line}\n", finding)
    assert f"TensorFlow {family}" in hint or f"=={family}." in hint or "2.15.0.post1" in hint, hint
    assert not UNPINNED.search(hint), hint
    row = compat.tf_release(family)
    if not row.and_cuda:
        assert f"CUDA {row.cuda}" in hint and f"cuDNN {row.cudnn}" in hint, hint


@pytest.mark.parametrize("family", FAMILIES)
def test_driver_advice_names_the_driver_the_release_needs(family: str) -> None:
    """driver-too-old says which driver this TensorFlow's CUDA needs, from the CUDA tables."""
    hint = _hint(f"tensorflow=={family}.0\n{DRIVER}\n", "tf-log-driver-too-old")
    row = compat.tf_release(family)
    need = compat.min_driver(row.cuda_build or row.cuda)
    assert f"CUDA {row.cuda}" in hint
    assert (need.minor_compat or need.full) in hint, hint


def test_driver_advice_by_hand() -> None:
    """TF 2.4 is built with CUDA 11.0, whose minor-version compatibility floor is 450.80.02 (CUDA
    compatibility guide, table 2); TF 2.15 with CUDA 12.2, floor 525.60.13."""
    assert "450.80.02" in _hint(f"tensorflow==2.4.0\n{DRIVER}\n", "tf-log-driver-too-old")
    assert "525.60.13" in _hint(f"tensorflow==2.15.0\n{DRIVER}\n", "tf-log-driver-too-old")


def test_native_windows_gets_windows_advice() -> None:
    """On native Windows, TF 2.10 is told the CUDA 11.2 / cuDNN 8.1 it needs on PATH; 2.11+ has no
    GPU build there, so the advice is WSL2."""
    old = _hint(f"OS: Windows 10\ntensorflow==2.10.0\n{DLOPEN}\n", "tf-log-library-not-loaded")
    assert "CUDA 11.2 and cuDNN 8.1" in old and "PATH" in old
    new = _hint(f"OS: Windows 10\ntensorflow==2.12.0\n{DLOPEN}\n", "tf-log-library-not-loaded")
    assert "WSL2" in new and "no GPU build for native Windows" in new


def test_unknown_release_gets_the_rule_not_a_command() -> None:
    """Without the TensorFlow version, no command that would move TensorFlow is given."""
    hint = _hint(f"{DLOPEN}\n", "tf-log-library-not-loaded")
    assert "<your version>" in hint
    assert not UNPINNED.search(hint)


def test_explain_gives_the_fix_for_the_release_asked_for() -> None:
    """`tfdoctor explain <cause> --tf 2.11` gives 2.11's fix; without --tf, the rule and no command
    that would move TensorFlow; never a placeholder left in the text."""
    for_211 = CliRunner().invoke(cli, ["explain", "tf-log-library-not-loaded", "--tf", "2.11"])
    assert for_211.exit_code == 0 and "CUDA 11.2 and cuDNN 8.1" in for_211.output
    rule = CliRunner().invoke(cli, ["explain", "tf-log-library-not-loaded"])
    assert "<your version>" in rule.output and "{" not in rule.output
    windows = CliRunner().invoke(cli, ["explain", "tf-log-library-not-loaded", "--tf", "2.12", "--windows"])
    assert "WSL2" in windows.output


NO_TF_KERAS = "ModuleNotFoundError: No module named 'tf_keras'"


@pytest.mark.parametrize("family", [f for f in FAMILIES if tuple(map(int, f.split(".")[:2])) >= (2, 16)])
def test_tf_keras_advice_names_the_releases_own_series(family: str) -> None:
    """tf-keras publishes one series per TensorFlow minor: the hint installs this release's."""
    hint = _hint(f"tensorflow=={family}.0\n{NO_TF_KERAS}\n", "tf-log-tf-keras-not-installed")
    assert f"tf-keras~={family}.0" in hint and "{tf_keras}" not in hint


def test_tf_keras_advice_without_the_release_is_the_rule() -> None:
    hint = _hint(f"{NO_TF_KERAS}\n", "tf-log-tf-keras-not-installed")
    assert "tf-keras~=<TensorFlow's major.minor>.0" in hint
