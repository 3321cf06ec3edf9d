#!/bin/sh
# The body every pip fix runs (pin-python-packages.sh, repin-nvidia-wheels.sh, ...): not a fix
# itself, so it has no fix-id header and tfdoctor/fixing/scripts.py skips files starting with "_".
# usage: _pip.sh PYTHON [--remove DIST]... [PIP-INSTALL-ARG]...
#
# Runs pip of the target interpreter only ("PYTHON" -m pip), never a bare pip that may belong to
# another Python: first `pip uninstall` for each --remove DIST, then one `pip install` of the rest.
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
