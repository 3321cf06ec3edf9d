"""The TensorFlow container image a ticket runs (TensorFlow's Docker Hub images, NVIDIA's NGC
images): TensorFlow runs in a container, the release its tag names, a CUDA build for a -gpu tag;
and on a Windows host (Docker Desktop) that container is Linux on WSL 2, not native Windows."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from tfdoctor.cli import cli
from tfdoctor.triage.recognisers import container_image
from triage_fixtures import observe_all


def _seen(text: str) -> list[tuple[str, object]]:
    return [(o.path, o.value) for o in observe_all(container_image, text.splitlines())]


@pytest.mark.parametrize("line,want", [
    # tensorflow/tensorflow#53697
    ("$ sudo docker run -it --name tf270 --gpus all tensorflow/tensorflow:2.7.0-gpu",
     [("platform.in_container", True), ("tensorflow.version", "2.7.0"), ("tensorflow.is_cuda_build", True)]),
    ("FROM tensorflow/tensorflow:2.10.0-gpu-jupyter",
     [("platform.in_container", True), ("tensorflow.version", "2.10.0"), ("tensorflow.is_cuda_build", True)]),
    ("docker pull tensorflow/tensorflow:latest-gpu",
     [("platform.in_container", True), ("tensorflow.is_cuda_build", True)]),
    # a CPU image says nothing about the build's CUDA (which tags hold which build changed over time)
    ("docker run -it tensorflow/tensorflow:2.18.0", [("platform.in_container", True),
                                                      ("tensorflow.version", "2.18.0")]),
    # tensorflow/tensorflow#112272
    ("- Container: `nvcr.io/nvidia/tensorflow:25.02-tf2-py3`",
     [("platform.in_container", True), ("tensorflow.is_cuda_build", True)]),
    # Singularity's and Apptainer's pull writes <name>_<tag>.sif (sylabs/singularity#3694)
    ("$ singularity run --nv --nvccli tensorflow_latest-gpu.sif",
     [("platform.in_container", True), ("tensorflow.is_cuda_build", True)]),
    ("srun singularity exec --nv /nfsd/opt/sif-images/tensorflow_2.15.0-gpu.sif python3 main.py",
     [("platform.in_container", True), ("tensorflow.version", "2.15.0"), ("tensorflow.is_cuda_build", True)]),
    ("apptainer exec --nv tensorflow_22.06-tf2-py3.sif python", [("platform.in_container", True),
                                                                  ("tensorflow.is_cuda_build", True)]),
])
def test_an_image_names_where_and_which_tensorflow_runs(line: str, want: list) -> None:
    assert _seen(line) == want


@pytest.mark.parametrize("line", [
    "see github.com/tensorflow/tensorflow:issues for more",
    "myorg/tensorflow/tensorflow:2.7.0-gpu-custom is our fork",
    "tensorflow/tensorflow:devel-gpu",
    "singularity run --nv my_tensorflow_latest-gpu.sif",
    "singularity run --nv tensorflow_env.sif",
])
def test_other_words_and_images_are_not_read(line: str) -> None:
    assert _seen(line) == []


def test_a_container_on_a_windows_host_is_linux_on_wsl2() -> None:
    """Docker Desktop runs the container on WSL 2's kernel: a ticket's "Windows 11" is the host, so
    no native-Windows finding (tensorflow/tensorflow#112272 had one)."""
    ticket = ("- Host OS: Windows 11\n- Runtime: Docker Desktop\n- GPU: NVIDIA GeForce RTX 5080 Laptop\n"
              "- Container: `nvcr.io/nvidia/tensorflow:25.02-tf2-py3`\n")
    report = json.loads(CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket).stdout)
    platform = report["facts"]["platform"]
    assert (platform["system"], platform["is_wsl"], platform["in_container"]) == ("Linux", True, True)
    where = report["facts"]["provenance"]["platform.system"]
    assert where.startswith("a container (container image, line 4)")
    assert not [f for f in report["findings"] if f["id"].startswith("tf-windows-native")]
