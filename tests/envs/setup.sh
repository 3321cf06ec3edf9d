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

# frameworks/<version>/tensorflow/libtensorflow_framework.so.2 of one wheel per release family the
# compat tables cover: the loader oracle asks each one's DsoLoader (tests/oracle/test_tfloader_releases.py).
# Only the framework library is kept (about 2.4 GB in all); the wheel is downloaded, unpacked, deleted.
frameworks="$envs/frameworks"
make_framework() {  # version, python version the wheel is for, [distribution]
  local version="$1" py="$2" dist="${3:-tensorflow}" dir="$frameworks/$1"
  if [ -f "$dir/tensorflow/libtensorflow_framework.so.2" ]; then
    return
  fi
  local scratch
  scratch="$(mktemp -d)"
  "$python" -m pip download --quiet --disable-pip-version-check --no-cache-dir --no-deps \
    --only-binary=:all: --python-version "$py" --platform manylinux2010_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 \
    -d "$scratch" "$dist==$version"
  mkdir -p "$dir/tensorflow"
  "$python" - "$scratch" "$dir/tensorflow" <<'PY'
import sys, zipfile
from pathlib import Path
wheel = next(Path(sys.argv[1]).glob("*.whl"))
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/libtensorflow_framework.so.2"))
    Path(sys.argv[2], "libtensorflow_framework.so.2.part").write_bytes(z.read(name))
PY
  mv "$dir/tensorflow/libtensorflow_framework.so.2.part" "$dir/tensorflow/libtensorflow_framework.so.2"
  rm -rf "$scratch"
  echo "tests/envs: frameworks/$version made" >&2
}
make_framework 2.0.0 3.7 tensorflow-gpu
for spec in 2.1.0:3.7 2.2.0:3.8 2.3.0:3.8 2.4.0:3.8 2.5.0:3.8 2.6.0:3.8 2.7.0:3.8 2.8.0:3.8 2.9.0:3.8 \
    2.10.0:3.8 2.11.0:3.8 2.12.0:3.11 2.13.0:3.11 2.14.0:3.11 2.15.0:3.11 2.16.2:3.11 2.17.1:3.11 \
    2.18.0:3.11 2.19.0:3.11 2.20.0:3.11 2.21.0:3.11 2.22.0rc0:3.11; do
  make_framework "${spec%%:*}" "${spec##*:}"
done
