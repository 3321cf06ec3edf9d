"""Unknown is judged per element (issue 20, item 4): a value the ticket states is judged even when
the rest of its area is unknown, through the real `tfdoctor triage`."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from tfdoctor.cli import cli


def _findings(ticket: str) -> dict[str, dict]:
    result = CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket)
    return {f["id"]: f for f in json.loads(result.stdout)["findings"]}


@pytest.mark.parametrize("sentence", [
    "I set CUDA_VISIBLE_DEVICES=1 before running the script",
    "Running with CUDA_VISIBLE_DEVICES=\"2,3\" python train.py gives no GPU",
])
def test_a_stated_visibility_that_leaves_gpu_0_out_is_judged(sentence: str) -> None:
    """CUDA_VISIBLE_DEVICES=1 in a sentence, with no nvidia-smi: TensorFlow sees none of the GPUs of a
    machine that has only GPU 0, so the ticket gets a warning naming the value, not silence."""
    hit = _findings(sentence + "\n")["cuda-visible-devices-hides-some"]
    assert hit["severity"] == "warning"
    assert "hides GPU 0" in hit["message"]
    assert hit["evidence"]["driver.gpu_count"] == "unknown"


def test_a_stated_malformed_visibility_is_an_error_without_the_gpu_list() -> None:
    """A name CUDA cannot read ("gpu0") hides everything after it, whatever GPUs the machine has."""
    hit = _findings("then CUDA_VISIBLE_DEVICES=gpu0 python train.py\n")["cuda-visible-devices-malformed"]
    assert hit["severity"] == "error" and "'gpu0'" in hit["message"]


def test_a_visibility_that_keeps_gpu_0_says_nothing_while_the_gpus_are_unknown() -> None:
    """"0,1" is fine on any machine with GPUs: no finding for it."""
    found = _findings("CUDA_VISIBLE_DEVICES=0,1 python train.py\n")
    assert not [k for k in found if k.startswith("cuda-visible-devices")]


def test_with_the_gpu_list_the_whole_judgement_applies() -> None:
    """With nvidia-smi's list of one GPU, "1" hides all of them: the error of the full check."""
    smi = ("+-----------------------------------------------------------------------------+\n"
           "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
           "|-------------------------------+----------------------+----------------------+\n"
           "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
           "|   0  NVIDIA GeForce RTX 3090  Off | 00000000:01:00.0 Off |                  N/A |\n"
           "+-------------------------------+----------------------+----------------------+\n")
    found = _findings(smi + "I set CUDA_VISIBLE_DEVICES=1 before running\n")
    assert found["cuda-visible-devices-hides-all"]["severity"] == "error"


def test_a_stated_cudnn_older_than_the_build_s_is_judged() -> None:
    """The issue's example: cuDNN 7.4.1 stated beside TF 2.1 (built with cuDNN 7.6), nothing else
    about the libraries: cuDNN refuses a lower minor at load time, so it is an error."""
    found = _findings("tensorflow-gpu 2.1.0\ncuDNN 7.4.1\nCUDA 10.1\n")
    hit = found["cudnn-wrong-version"]
    assert hit["severity"] == "error"
    assert hit["evidence"]["needs_cudnn"] == "7.6" and hit["evidence"]["cudnn"].startswith("7.4.1")


@pytest.mark.parametrize("ticket", [
    "tensorflow-gpu 2.1.0\ncuDNN 7.6.5\n",        # the build's major, a later minor: fine
    "tensorflow 2.16.1\ncuDNN 8.1.0\n",           # pip era: the wheels bring cuDNN, not judged
    "tensorflow 2.4.0\nTF 2.4 requires cuDNN 8.0\n",  # a requirement quoted, not what is installed
])
def test_a_stated_cudnn_that_fits_or_does_not_count_is_not_judged(ticket: str) -> None:
    """Only a cuDNN the ticket says is installed, for a release that loads the system's, is judged."""
    assert "cudnn-wrong-version" not in _findings(ticket)


def test_a_library_the_user_says_is_not_found_is_a_fact_judged_per_library() -> None:
    """"Libcudart.so.11.0 not found" in a user's words (the title of
    david8862/tf-keras-stacked-hourglass-keypoint-detection#13) is read as a fact, the library not
    found, and judged by cuda-libraries like a probed library that did not resolve: libcudart is
    one TensorFlow needs for any GPU, so an error, even with no TensorFlow release named."""
    hit = _findings("Tensorflow GPU libarary Libcudart.so.11.0 not found\n")["cuda-library-missing"]
    assert hit["severity"] == "error" and "libcudart.so.11.0" in hit["message"]
    assert hit["evidence"]["library.path"] == "not found (the ticket says: ticket prose, line 1)"
    optional = _findings("libcurand.so.10 is missing\n")["cuda-library-missing"]
    assert optional["severity"] == "warning"  # curand fails only the ops that use it
    # GretaLupi/hamlet-toolkit#1: the library named without its soname, in backticks
    bare = _findings("| 1 | TF sees no GPU (`libcusolver` is not found) | all GPUs, TF 2.21 |\n")
    assert bare["cuda-library-missing"]["evidence"]["library.soname"] == "libcusolver"
    assert "cuda-library-missing" not in _findings("libcusolver is found in site-packages\n")


def test_every_wording_of_a_missing_library_is_the_same_fact() -> None:
    """Users say a library is missing before its name as often as after it: "the images have no
    libcudnn.so.8" (DeepLabCut#2164), "tensorflow tries to load `libcudnn.so.9`, but the image uses
    8" (tensorflow/build#221), "cannot find shared library file libcudart.so.11.0". Each is the
    same fact; a library named as what a release needs, a load that did not fail, or cuDNN's own
    "Could not load library" (a program's line, the log's) is none."""
    for said, soname in (
            ("The container images have no libcudnn.so.8, and I cannot use the GPU", "libcudnn.so.8"),
            ("tensorflow tries to load `libcudnn.so.9`, but the docker image uses 8", "libcudnn.so.9"),
            ("tensorflow cannot find shared library file libcudart.so.11.0", "libcudart.so.11.0"),
            ("there is no cudnn64_8.dll in my CUDA bin folder", "cudnn64_8.dll")):
        hit = _findings(said + "\n")["cuda-library-missing"]
        assert hit["evidence"]["library.soname"] == soname, (said, hit["evidence"])
    for said in ("TensorFlow 2.4 requires libcudart.so.11.0",
                 "it tries to load libcudnn.so.8 from /usr/lib and works",
                 "Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared "
                 "object file"):
        assert "cuda-library-missing" not in _findings(said + "\n"), said


def test_a_windows_dll_the_user_says_is_not_found_is_judged_with_windows_advice() -> None:
    """tensorflow/tensorflow#57531: "cudart64_110.dll not found" on native Windows with TensorFlow
    2.9 (the name TensorFlow's loader asks for there): the same fact, with the Windows advice
    (the CUDA and cuDNN of the release on PATH, no pip extra)."""
    ticket = "tf 2.9 on windows 10\nit gave cudart64_110.dll not found error\n"
    hit = _findings(ticket)["cuda-library-missing"]
    assert hit["severity"] == "error" and hit["evidence"]["library.soname"] == "cudart64_110.dll"
    assert "CUDA 11.2 and cuDNN 8.1" in hit["hint"] and "PATH" in hit["hint"], hit["hint"]
    assert hit.get("remediation") is None


def test_a_stated_missing_library_gets_the_fix_of_its_release() -> None:
    """TensorFlow 2.8 has no [and-cuda] extra: the hint names its CUDA 11.2 and cuDNN 8.1, and no
    pip command installs an extra that does not exist; TensorFlow 2.16 gets its own [and-cuda]."""
    old = _findings("tensorflow 2.8.0\nlibcublasLt.so.11 not found\n")["cuda-library-missing"]
    assert "CUDA 11.2 and cuDNN 8.1" in old["hint"], old["hint"]
    assert old.get("remediation") is None, old.get("remediation")
    assert old["evidence"]["library.soname"] == "libcublasLt.so.11"
    new = _findings("tensorflow 2.16.1\nlibcudnn.so.8 not found\n")["cuda-library-missing"]
    assert "tensorflow[and-cuda]==2.16.1" in " ".join(new["remediation"]["commands"]), new


def test_a_library_named_in_a_program_s_output_is_not_a_claim() -> None:
    """TensorFlow's own line is the log's cause (tf-log-library-not-loaded), not a user's claim."""
    line = ("2020-11-26 10:23:19.183104: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] "
            "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open "
            "shared object file: No such file or directory\n")
    found = _findings("tensorflow 2.4.0\n" + line)
    assert "tf-log-library-not-loaded" in found and "cuda-library-missing" not in found


def test_the_release_the_code_worked_with_is_a_fact_judged_against_keras_3() -> None:
    """"works in tensorflow 2.15 ... in tensorflow 2.16" (tensorflow/tensorflow#70394) gives two
    facts, the release the code worked with and the one in hand; keras-version judges the move
    across Keras 2 -> 3 as the cause Keras 3's own errors show. A move within Keras 2 says nothing."""
    ticket = "Model works in tensorflow 2.15 perfectly but unable to import the model in tensorflow 2.16!\n"
    result = CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket)
    report = json.loads(result.stdout)
    assert report["facts"]["intent"]["worked_with"] == "2.15"
    assert report["facts"]["tensorflow"]["version"] == "2.16"
    hit = {f["id"]: f for f in report["findings"]}["tf-log-keras3-incompatible"]
    assert hit["evidence"]["worked_with"] == "2.15 (ticket prose, line 1)" and hit["check"] == "keras-version"
    assert "tf-log-keras3-incompatible" not in _findings(
        "Upgrading from TensorFlow 2.12 to 2.13 broke my model\n")
    assert "tf-log-keras3-incompatible" in _findings("Upgrading from TF 2.14 to 2.17 broke my model\n")


def test_a_multi_gpu_run_that_gives_nan_is_judged_as_the_recipe_s_wrong_all_reduce() -> None:
    """"with MirroredStrategy the losses become nan ... single-GPU training is fine"
    (tensorflow/tensorflow#57893) is the user's own multi-GPU run giving wrong numbers: a ticket
    multi-device result, judged by smoke-multi-gpu as the live recipe's wrong all-reduce sums are,
    as broken peer-to-peer (the cause gpu_device.cc's "no peering could be enabled" names too).
    One finding: smoke-recipes does not report the same failure again."""
    ticket = ("All GPUs show in nvidia-smi, but with MirroredStrategy the losses and outputs become nan "
              "after a few iterations. Single-GPU training is fine.\n")
    found = _findings(ticket)
    hit = found["tf-log-multi-gpu-nan"]
    assert hit["check"] == "smoke-multi-gpu" and hit["severity"] == "error"
    assert hit["evidence"]["wrong_on"] == "the ticket says (ticket prose, line 1)"
    assert "smoke-multi-device-failed" not in found
    assert not _findings("Multi-GPU training is fine for hours, single GPU too\n")


def test_the_live_recipe_s_wrong_all_reduce_names_the_same_cause() -> None:
    """The multi-device recipe's checked all-reduce came out wrong on a GPU: the same finding."""
    from dataclasses import replace

    from tfdoctor.facts import RecipeResult, SmokeFacts
    from tfdoctor.findings import CheckStatus

    from tests.helpers import healthy, judge

    wrong = RecipeResult(name="multi-device", status="failed", device="GPU:0",
                         detail="all-reduce sum wrong on /job:localhost/replica:0/task:0/device:GPU:1",
                         info={"cross_device_ops": "nccl", "wrong_results": "GPU:1"})
    smoke = SmokeFacts(python="python", outcome="completed", tf_version="2.21.0", is_cuda_build=True,
                       recipes=(RecipeResult(name="import", status="passed"), wrong))
    report = judge(replace(healthy(), smoke=smoke))
    ids = [f.id for f in report.findings]
    assert "tf-log-multi-gpu-nan" in ids and "smoke-multi-device-failed" not in ids, ids
    outcome = next(o for o in report.outcomes if o.check == "smoke-multi-gpu")
    assert outcome.status is CheckStatus.FAILED


def test_a_pip_install_of_tensorflow_gpu_is_judged_against_what_pypi_has() -> None:
    """The requirements of a pip install command are facts (intent.pip_install): tensorflow-gpu has
    wheels up to 2.11.0 and then only the 2.12.0 placeholder that fails on install, so an unpinned
    or >= 2.12 requirement, or a version it never had (2.12.0rc0, tensorflow/tensorflow#59720), is
    the removed-package cause; a pin to a real release is not."""
    hit = _findings("pip install tensorflow-gpu==2.12.0rc0\n")["tf-log-tensorflow-gpu-removed"]
    assert "no tensorflow-gpu release matches it" in hit["message"]
    assert "tensorflow==2.12.*" in hit["hint"]
    unpinned = _findings("$ python -m pip install tensorflow-gpu numpy\n")["tf-log-tensorflow-gpu-removed"]
    assert "placeholder" in unpinned["message"] and unpinned["evidence"]["pip install"] == "tensorflow-gpu"
    assert "tf-log-tensorflow-gpu-removed" not in _findings("pip install tensorflow-gpu==2.10.0\n")
    assert "tf-log-tensorflow-gpu-removed" not in _findings("pip install 'tensorflow[and-cuda]==2.16.1'\n")


def test_the_driver_version_a_user_states_is_judged_like_nvidia_smi_s() -> None:
    """Issue templates and sentences give the driver ("- Nvidia Driver: 572.16", tensorflow/tfjs#8509;
    "host driver 450.203.8"): that is the machine's driver, judged against the CUDA of the release in
    hand as nvidia-smi's would be. A version some release needs is not the machine's."""
    old = _findings("TensorFlow 2.16.1 does not see my GPU\n- NVIDIA driver version: 470.57.02\n")
    assert old["driver-too-old"]["evidence"]["driver.driver_version"] == "470.57.02"
    assert "driver-too-old" not in _findings("TensorFlow 2.16.1\n- NVIDIA driver version: 550.54.14\n")
    needed = "TensorFlow 2.16.1 requires driver 525.60.13 or newer; mine is the one the cluster has\n"
    assert "driver-too-old" not in _findings(needed)
