#!/usr/bin/env bash
# Make the real TensorFlow venvs the tests use (idempotent; pip's cache makes reruns cheap).
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
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$req"
  echo "$req" > "$dir/.tfdoctor-req"
  echo "tests/envs: $1 made ($req)" >&2
}

make_env tf-cpu "tensorflow-cpu==2.21.0"
make_env tf-cuda "tensorflow[and-cuda]==2.21.0"
make_env tf-cuda-2-17 "tensorflow[and-cuda]==2.17.1"
