#!/bin/sh
# fix-id: install-matching-tensorflow
# summary: Install the TensorFlow release that matches this GPU, driver and Python.
# needs-root: no
# reversible: yes
# usage: install-matching-tensorflow.sh PYTHON [--remove DIST]... [PIP-INSTALL-ARG]...
#
# The release is chosen by the check from tfdoctor's compatibility tables (compat_tables/tensorflow.toml).
# Runs pip of the target interpreter only ("PYTHON" -m pip), never a bare pip that may belong to
# another Python. tfdoctor snapshots the environment (and backs up every distribution pip will
# replace or remove) before running this, so `tfdoctor fix --undo` restores it exactly.
set -eu
exec sh "$(dirname -- "$0")/_pip.sh" "$@"
