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
exec sh "$(dirname -- "$0")/_pip.sh" "$@"
