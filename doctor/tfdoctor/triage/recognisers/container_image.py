"""The TensorFlow container image a ticket runs: TensorFlow's own images on Docker Hub and NVIDIA's
NGC images, named in `docker run`, `docker pull`, a Dockerfile's FROM, a compose file or words.

TensorFlow's images are tagged `<release>[-gpu][-jupyter]`, `latest[-gpu]`, `nightly[-gpu]`; a
`-gpu` tag holds TensorFlow's CUDA build (tensorflow.org/install/docker: "latest: the latest
release of TensorFlow CPU binary image", "-gpu: the specified tag release with GPU support"). The
release in the tag is the TensorFlow the ticket runs. NVIDIA's `nvcr.io/nvidia/tensorflow:<yy.mm>-tf2-py3`
images hold NVIDIA's CUDA build. Either way TensorFlow runs in a container.

Singularity and Apptainer name the file `singularity pull docker://tensorflow/tensorflow:latest-gpu`
writes `tensorflow_latest-gpu.sif` (<name>_<tag>.sif; NGC's image gives `tensorflow_22.06-tf2-py3.sif`),
and tickets show only that file in `singularity run --nv tensorflow_latest-gpu.sif`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "container image"

_TRIGGER = Trigger(("tensorflow/tensorflow:", "nvcr.io/nvidia/tensorflow:", ".sif"))
_TF_IMAGE = re.compile(r"(?<![\w./-])(?:docker\.io/)?tensorflow/tensorflow:(?P<tag>[\w][\w.-]{0,60})")
_TF_TAG = re.compile(r"(?P<v>2\.\d{1,2}\.\d{1,3}(?:rc\d{1,2})?)(?P<rest>(?:-[a-z]+)*)|(?:latest|nightly)(?P<rest2>(?:-[a-z]+)*)")
_NGC_IMAGE = re.compile(r"(?<![\w.-])nvcr\.io/nvidia/tensorflow:(?P<tag>\d{2}\.\d{2})-tf2-py3\b")
_SIF = re.compile(r"(?<![\w.-])tensorflow_(?P<tag>[\w][\w.-]{0,60}?)\.sif\b")
_NGC_TAG = re.compile(r"\d{2}\.\d{2}-tf2-py3")


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """platform.in_container, and the release and build kind its tag names, for each image named."""
    for number, line in Walk(lines, _TRIGGER):
        for hit in (*_TF_IMAGE.finditer(line), *_SIF.finditer(line)):
            if _NGC_TAG.fullmatch(hit.group("tag")):  # NGC's image, pulled to a .sif
                yield from _ngc(number)
                continue
            tag = _TF_TAG.fullmatch(hit.group("tag"))
            if tag is None:
                continue
            yield Observation("platform.in_container", True, number, NAME)
            if tag.group("v"):
                yield Observation("tensorflow.version", tag.group("v"), number, NAME)
            if "-gpu" in (tag.group("rest") or tag.group("rest2") or ""):
                yield Observation("tensorflow.is_cuda_build", True, number, NAME)
        if _NGC_IMAGE.search(line):
            yield from _ngc(number)


def _ngc(number: int) -> Iterator[Observation]:
    yield Observation("platform.in_container", True, number, NAME)
    yield Observation("tensorflow.is_cuda_build", True, number, NAME)
