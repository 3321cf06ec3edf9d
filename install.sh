#!/usr/bin/env bash
# Install tfdoctor into a venv (default .venv) and, unless told otherwise, the TensorFlow that
# fits this machine: tensorflow[and-cuda] where an NVIDIA driver is present, tensorflow-cpu
# otherwise. Running it twice is harmless: an existing venv is reused, pip skips what is there.
#
#   ./install.sh                 tfdoctor + the fitting TensorFlow, in .venv
#   ./install.sh --no-tensorflow tfdoctor only (diagnose another env with --python)
#   ./install.sh --dev           tfdoctor with test tools, plus the real TensorFlow venvs, stub
#                                libraries and (as root, via apt) the Slurm, Prometheus and
#                                cloud-init programs the test suite uses (no TensorFlow in .venv)
#   ./install.sh --venv DIR      another venv directory
set -euo pipefail
cd "$(dirname "$0")"

venv=.venv
dev=0
tensorflow=auto
while [ $# -gt 0 ]; do
  case "$1" in
    --dev) dev=1; tensorflow=no ;;
    --no-tensorflow) tensorflow=no ;;
    --venv) venv="${2:?--venv needs a directory}"; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)

if [ "$dev" = 1 ]; then
  "${pip[@]}" -e ".[dev]"
  bash tests/envs/apt.sh  # the real programs tests/integrations drives (Debian packages, as root)
  bash tests/envs/setup.sh
  "$venv/bin/python" tests/stubs/build.py > /dev/null
else
  "${pip[@]}" .
fi

if [ "$tensorflow" = auto ]; then
  if [ -r /proc/driver/nvidia/version ] || command -v nvidia-smi > /dev/null 2>&1; then
    want='tensorflow[and-cuda]'
  else
    want='tensorflow-cpu'
  fi
  if ! "$venv/bin/python" -c 'import importlib.util,sys; sys.exit(importlib.util.find_spec("tensorflow") is None)'; then
    echo "install.sh: installing $want (this takes a few minutes)" >&2
    "${pip[@]}" "$want"
  fi
fi
echo "install.sh: ready: $venv/bin/tfdoctor" >&2
