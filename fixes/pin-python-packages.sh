#!/bin/sh
# fix-id: pin-python-packages
# summary: Install the numpy, protobuf, ml-dtypes, Keras or tf-keras versions the installed TensorFlow accepts.
# needs-root: no
# reversible: yes
# usage: pin-python-packages.sh PYTHON [--remove DIST]... [PIP-INSTALL-ARG]...
#
# Requirements come from TensorFlow's own METADATA (Requires-Dist), e.g. 'numpy<2.0.0,>=1.23.5'.
# Runs pip of the target interpreter only ("PYTHON" -m pip), never a bare pip that may belong to
# another Python. tfdoctor snapshots the environment (and backs up every distribution pip will
# replace or remove) before running this, so `tfdoctor fix --undo` restores it exactly.
set -eu
exec sh "$(dirname -- "$0")/_pip.sh" "$@"
