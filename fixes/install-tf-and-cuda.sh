#!/bin/sh
# fix-id: install-tf-and-cuda
# summary: Install TensorFlow's GPU build with its pip CUDA libraries (tensorflow[and-cuda]), removing CPU-only builds first.
# needs-root: no
# reversible: yes
# usage: install-tf-and-cuda.sh PYTHON [--remove DIST]... [PIP-INSTALL-ARG]...
#
# CPU-only distributions (tensorflow-cpu, tensorflow-intel ...) are removed with --remove, then tensorflow[and-cuda]==X is installed.
# Runs pip of the target interpreter only ("PYTHON" -m pip), never a bare pip that may belong to
# another Python. tfdoctor snapshots the environment (and backs up every distribution pip will
# replace or remove) before running this, so `tfdoctor fix --undo` restores it exactly.
set -eu

py=$1
shift
while [ "$#" -ge 2 ] && [ "$1" = "--remove" ]; do
    "$py" -m pip uninstall --yes --disable-pip-version-check "$2"
    shift 2
done
if [ "$#" -gt 0 ]; then
    "$py" -m pip install --disable-pip-version-check --no-input "$@"
fi
