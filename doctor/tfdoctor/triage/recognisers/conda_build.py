"""What `conda list`'s build strings say beside the versions (pip_list reads names and versions):

    tensorflow                2.11.1          cuda112py39h01bd6f0_0    conda-forge
    tensorflow-base           2.15.0          cuda120py311h43b5e44_1    conda-forge
    tensorflow                2.12.0          mkl_py311h34a0fa1_0
    cudatoolkit               11.2.2              hbe64b41_10    conda-forge
    cudnn                     8.1.0.77             h90431f1_0    conda-forge

conda-forge labels TensorFlow's CUDA builds cuda<major><minor>py.. and its CPU builds cpu_py..;
Anaconda's defaults channel gpu_py.. (its CUDA from the cudatoolkit package), mkl_py.. and
eigen_py... A label is what the package says it is: TensorFlow's own build info, where the ticket
shows it, comes first (a mislabelled build: conda-forge/tensorflow-feedstock#365). The
cudatoolkit (CUDA 11) or cuda-version (CUDA 12 on) package is the CUDA of the environment, cudnn
its cuDNN.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "conda list (build strings)"

_ROW = re.compile(r"^(tensorflow(?:-base|-gpu)?|cudatoolkit|cuda-version|cudnn)\s+(\d[\w.+!-]*)\s+"
                  r"([A-Za-z0-9_.+]*_[A-Za-z0-9_.+]*|h[0-9a-f]{7}_\d+)(?:\s+(\S+))?\s*$")
_CUDA_BUILD = re.compile(r"^cuda(\d{2})(\d)")  # cuda112 -> 11.2, cuda120 -> 12.0 (CUDA 10-13)
# (no \b before the names: re tries it at every position, four times as slow; _ROW decides)
_TRIGGER = Trigger(regex=re.compile(r"(?:tensorflow|cudatoolkit|cuda-version|cudnn)(?:-base|-gpu)?[ \t]+\d\S*[ \t]+\S*_"),
                   line_local=True)


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """TensorFlow's build kind and CUDA from its label; the environment's CUDA and cuDNN."""
    for number, s in Walk(lines, _TRIGGER):
        m = _ROW.match(s.strip())
        if not m:
            continue
        name, version, build = m.group(1), m.group(2), m.group(3)
        if name.startswith("tensorflow"):
            if cuda := _CUDA_BUILD.match(build):
                yield Observation("tensorflow.is_cuda_build", True, number, NAME)
                yield Observation("tensorflow.cuda_version", f"{int(cuda.group(1))}.{cuda.group(2)}",
                                  number, NAME)
            elif build.startswith("gpu_"):
                yield Observation("tensorflow.is_cuda_build", True, number, NAME)
            elif build.startswith(("cpu_", "mkl_", "eigen_")):
                yield Observation("tensorflow.is_cuda_build", False, number, NAME)
        elif name == "cudnn":
            yield Observation("toolkit.conda_cudnn", version, number, NAME)
        else:
            yield Observation("toolkit.conda_version", version, number, NAME)
