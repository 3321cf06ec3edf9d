#!/usr/bin/env bash
# Make the real TensorFlow venvs the tests use, and the framework libraries of older releases
# (idempotent: what is made is kept; nothing goes into pip's cache, which would keep another
# copy of every wheel, about 6 GB, for a rerun that happens only when a requirement changes).
# TFDOCTOR_TEST_ENVS: where (the tests read the same variable); PYTHON: the interpreter.
#   tf-cpu:  tensorflow-cpu 2.21.0
#   tf-cuda: tensorflow[and-cuda] 2.21.0 (real CUDA 12 libraries from pip; about 6 GB)
#   tf-cuda-2-17: tensorflow[and-cuda] 2.17.1 (the older release the loader oracle and the stub
#                 libcuda are tested against: older Abseil, cuDNN 8; about 5 GB)
set -euo pipefail
envs="${TFDOCTOR_TEST_ENVS:-$HOME/.cache/tfdoctor/test-envs}"
python="${PYTHON:-python3}"
mkdir -p "$envs"

make_env() {  # name, requirement
  local dir="$envs/$1" req="$2"
  if [ -x "$dir/bin/python" ] && [ -f "$dir/.tfdoctor-req" ] && [ "$(cat "$dir/.tfdoctor-req")" = "$req" ]; then
    echo "tests/envs: $1 ready ($req)" >&2
    return
  fi
  rm -rf "$dir"
  "$python" -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir "$req"
  echo "$req" > "$dir/.tfdoctor-req"
  echo "tests/envs: $1 made ($req)" >&2
}

make_env tf-cpu "tensorflow-cpu==2.21.0"
make_env tf-cuda "tensorflow[and-cuda]==2.21.0"
make_env tf-cuda-2-17 "tensorflow[and-cuda]==2.17.1"

# frameworks/<version>/tensorflow/libtensorflow_framework.so.2 of one wheel per release family the
# compat tables cover: the loader oracle asks each one's DsoLoader (tests/oracle/test_tfloader_releases.py).
# Only that library is fetched, by HTTP range out of the wheel on pip's configured index (about
# 1.1 GB downloaded in about a minute, 2.4 GB kept; it used to download 23 whole wheels, 12 GB).
"$python" "$(dirname "$0")/fetch_frameworks.py" "$envs/frameworks" 2.0.0:3.7:tensorflow-gpu \
  2.1.0:3.7 2.2.0:3.8 2.3.0:3.8 2.4.0:3.8 2.5.0:3.8 2.6.0:3.8 2.7.0:3.8 2.8.0:3.8 2.9.0:3.8 \
  2.10.0:3.8 2.11.0:3.8 2.12.0:3.11 2.13.0:3.11 2.14.0:3.11 2.15.0:3.11 2.16.2:3.11 2.17.1:3.11 \
  2.18.0:3.11 2.19.0:3.11 2.20.0:3.11 2.21.0:3.11 2.22.0rc0:3.11
