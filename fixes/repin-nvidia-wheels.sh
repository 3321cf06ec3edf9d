#!/bin/sh
# fix-id: repin-nvidia-wheels
# summary: Re-pin nvidia-*-cu12 wheels (cuDNN, cuBLAS, ...) to TensorFlow's [and-cuda] pins.
# needs-root: no
# reversible: yes
# usage: repin-nvidia-wheels.sh PYTHON [--remove DIST]... [PIP-INSTALL-ARG]...
#
# Pins come from the [and-cuda] extra in TensorFlow's METADATA; an older cuDNN wheel than TF's build fails at load.
# Runs pip of the target interpreter only ("PYTHON" -m pip), never a bare pip that may belong to
# another Python. tfdoctor snapshots the environment (and backs up every distribution pip will
# replace or remove) before running this, so `tfdoctor fix --undo` restores it exactly.
set -eu
exec sh "$(dirname -- "$0")/_pip.sh" "$@"
