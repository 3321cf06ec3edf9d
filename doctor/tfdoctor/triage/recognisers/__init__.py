"""The recognisers `tfdoctor triage` runs over a ticket, in the order their observations are listed.

Each module has `NAME` and a pure `recognise(lines) -> Iterator[Observation]`; see
`tfdoctor.triage.observe`.
"""

from __future__ import annotations

from . import (
    build_info,
    collect_env,
    conda_build,
    conda_info,
    container_image,
    cudnn_header,
    env_vars,
    kernel_log,
    ldconfig,
    lsmod,
    nvcc,
    nvidia_smi,
    os_release,
    pip_list,
    proc_version,
    tensorrt,
    tf_cudnn,
    tf_env_collect,
    tf_ptxas,
    tf_reported,
    uname,
)

# The TensorFlow-log recogniser (tf_log, the triage lead's) is appended here.
RECOGNISERS = (
    nvidia_smi,
    pip_list,
    build_info,
    ldconfig,
    proc_version,
    kernel_log,
    lsmod,
    nvcc,
    uname,
    os_release,
    collect_env,
    tf_env_collect,
    env_vars,
    tf_reported,
    tf_cudnn,
    tf_ptxas,
    conda_build,
    conda_info,
    cudnn_header,
    tensorrt,
    container_image,
)
