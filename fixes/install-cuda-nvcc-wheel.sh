#!/bin/sh
# fix-id: install-cuda-nvcc-wheel
# summary: Install the nvidia-cuda-nvcc wheel TensorFlow pins, which ships ptxas and libdevice for XLA.
# needs-root: no
# reversible: yes
# usage: install-cuda-nvcc-wheel.sh PYTHON [--remove DIST]... [PIP-INSTALL-ARG]...
#
# XLA looks for ptxas and nvvm/libdevice in the pip nvidia/cuda_nvcc directory (research/compat.md section 8).
# Runs pip of the target interpreter only ("PYTHON" -m pip), never a bare pip that may belong to
# another Python. tfdoctor snapshots the environment (and backs up every distribution pip will
# replace or remove) before running this, so `tfdoctor fix --undo` restores it exactly.
set -eu
exec sh "$(dirname -- "$0")/_pip.sh" "$@"
