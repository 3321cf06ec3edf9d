"""The cuDNN version its header's macros give, in the forms users paste them (NVIDIA's installation
guide: `cat cudnn_version.h | grep CUDNN_MAJOR -A 2`; cudnn.h before cuDNN 8), and what triage
makes of it: the installed cuDNN, judged against the build even when the toolkit is not shown."""

from __future__ import annotations

import json

from click.testing import CliRunner
from tfdoctor.cli import cli
from tfdoctor.triage.recognisers import cudnn_header
from triage_fixtures import observe_all


def _header(text: str) -> list[str]:
    return [o.value for o in observe_all(cudnn_header, text.splitlines())]


# github.com/frankkramer-lab/MIScnn/issues/146 (tests/field/cases/miscnn-146.txt): grep -A 1
MISCNN = """\
Here is the cudnn output;
```
>> !cat /usr/include/cudnn.h | grep CUDNN_MAJOR -A 1
#define CUDNN_MAJOR 7
#define CUDNN_MINOR 6
--
#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)
```
"""
# PowerShell's Select-String -Context 0,2 (kurekagura/samples, SetupGuide/Detectron2 on Windows)
POWERSHELL = """\
PS>Select-String -Path "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7\\\
include\\cudnn_version.h" -Pattern "#define CUDNN_MAJOR" -Context 0,2

> (omit)cudnn_version.h:57:#define CUDNN_MAJOR 8
  (omit)cudnn_version.h:58:#define CUDNN_MINOR 5
  (omit)cudnn_version.h:59:#define CUDNN_PATCHLEVEL 0
"""
# grep -A 2 of cuDNN 5.1's aligned macros, quoted in a list
ALIGNED = """\
    * #define CUDNN_MAJOR      5
    * #define CUDNN_MINOR      1
    * #define CUDNN_PATCHLEVEL 10
"""


def test_the_macros_give_the_version() -> None:
    assert _header(MISCNN) == ["7.6"]
    assert _header(POWERSHELL) == ["8.5.0"]
    assert _header(ALIGNED) == ["5.1.10"]


def test_the_formula_and_other_macros_are_no_version() -> None:
    assert _header("#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)") == []
    assert _header("#define CUDNN_MAJOR 8\n\n\n\n\n\n#define CUDNN_MINOR 9") == []  # not together
    assert _header("#define NCCL_MAJOR 2\n#define NCCL_MINOR 18") == []


def test_a_header_older_than_the_build_is_the_cause_of_the_cudnn_failure() -> None:
    """TensorFlow 2.7 was built with cuDNN 8.1; a 7.6 header with "Failed to get convolution
    algorithm" is cudnn-wrong-version, the handle failure its consequence, though no toolkit is
    shown (the toolkit part of cuda-toolkit could not be checked)."""
    ticket = ("Tensorflow  - 2.7.0\n`Failed to get convolution algorithm. This is probably because cuDNN "
              "failed to initialize`\n" + MISCNN)
    report = json.loads(CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket).stdout)
    assert report["facts"]["tensorflow"]["version"] == "2.7.0"
    assert report["verdict"]["root_cause"] == "cudnn-wrong-version"
    [f] = [f for f in report["findings"] if f["id"] == "cudnn-wrong-version"]
    assert f["evidence"]["cudnn"].startswith("7.6 (cuDNN header, line ")
    handle = [f for f in report["findings"] if f["id"] == "tf-log-cudnn-handle-failed"]
    assert handle and handle[0]["caused_by"] == "cudnn-wrong-version"
