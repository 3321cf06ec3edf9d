#!/bin/sh
# fix-id: remove-conflicting-tf
# summary: Keep one TensorFlow distribution: remove the others and reinstall the kept one so its files are whole.
# needs-root: no
# reversible: yes
# usage: remove-conflicting-tf.sh PYTHON [--remove DIST]... [PIP-INSTALL-ARG]...
#
# tensorflow, tensorflow-cpu and a leftover tensorflow-gpu all write the same tensorflow/ directory; the last install wins file by file.
# Runs pip of the target interpreter only ("PYTHON" -m pip), never a bare pip that may belong to
# another Python. tfdoctor snapshots the environment (and backs up every distribution pip will
# replace or remove) before running this, so `tfdoctor fix --undo` restores it exactly.
set -eu
exec sh "$(dirname -- "$0")/_pip.sh" "$@"
