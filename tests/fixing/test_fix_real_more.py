"""End to end with real TensorFlow 2.21 venvs from PyPI, broken as users break them, then
`tfdoctor fix --apply --yes`, a fresh diagnosis, TensorFlow at work, and `tfdoctor fix --undo`:

- legacy Keras: TF_USE_LEGACY_KERAS=1 without tf-keras, so `tf.keras` cannot be imported;
- a cuDNN wheel older than TF's [and-cuda] pin (cuDNN checks major.minor at load time).

Everything runs the real CLI in child processes. Each venv is made once per module (the CUDA
one is about 6 GB, so it is deleted when the module ends); they are their own venvs, not the
shared tests/envs ones, because the tests break and repair them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixing_venvs import diagnosis, files_hash, freeze, make_venv, pip, tfdoctor
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow
LEGACY = {"TF_USE_LEGACY_KERAS": "1"}
KERAS2 = ("import tensorflow as tf; m = tf.keras.Sequential([tf.keras.layers.Dense(1)]); "
          "y = m(tf.ones((1, 2))); print(type(m).__module__, list(y.shape))")
MATMUL = ("import tensorflow as tf; a = tf.constant([[1., 2.], [3., 4.]]); "
          "print(tf.linalg.matmul(a, a).numpy().tolist())")
OLD_CUDNN = "9.1.0.70"
"""Below TF 2.21's pin nvidia-cudnn-cu12>=9.3.0.75,<10.0, same major (so it loads, then fails)."""
CUDNN_FILES = "lib/python*/site-packages/nvidia/cudnn/**/*"


@pytest.fixture(scope="module")
def keras_tf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real tensorflow-cpu 2.21.0 venv: Keras 3 only, no tf-keras."""
    root = tmp_path_factory.mktemp("legacy-keras") / "venv"
    pip(make_venv(root), "tensorflow-cpu==2.21.0")
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def old_cudnn_tf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real tensorflow[and-cuda]==2.21.0 venv, then cuDNN 9.1 forced in with --no-deps."""
    root = tmp_path_factory.mktemp("old-cudnn") / "venv"
    try:
        python = make_venv(root)
        pip(python, "tensorflow[and-cuda]==2.21.0")
        pip(python, "--no-deps", f"nvidia-cudnn-cu12=={OLD_CUDNN}")
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)  # about 6 GB


@pytest.fixture
def drop_backups(state_dir: Path) -> Iterator[None]:
    """The apply's backups (a zip of a whole cuDNN wheel, ~1 GB) go when the test ends."""
    yield
    shutil.rmtree(state_dir.parent, ignore_errors=True)


def run_tf(python: str, code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300,
                          env=env)


def apply_fix(python: str, env: dict[str, str] | None = None) -> dict:
    """`tfdoctor fix --apply --yes --json`: the plan, each step's result, findings before/after."""
    done = tfdoctor("fix", "--python", python, "--apply", "--yes", "--json", env=env)
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: other problems remain
    return json.loads(done.stdout)


def frozen(text: str, name: str) -> str | None:
    """The version `pip freeze` lists for a distribution (it spells names as their metadata does)."""
    pins = dict(ln.split("==", 1) for ln in text.splitlines() if "==" in ln)
    return next((v for n, v in pins.items() if canonicalize_name(n) == name), None)


def undo(python: str) -> None:
    done = tfdoctor("fix", "--python", python, "--undo")
    assert done.returncode == 0, done.stderr[-3000:]


def test_legacy_keras_without_tf_keras_fixed_and_undone(keras_tf: Path,
                                                        monkeypatch: pytest.MonkeyPatch):
    """TF 2.16+ with Keras 2 code (TF_USE_LEGACY_KERAS=1) needs tf-keras: the fix installs the
    series matching TF, after which tf.keras is tf_keras and a model runs; undo removes it."""
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "1")  # as the user's shell has it, for every child
    python = str(keras_tf / "bin" / "python")
    site = next(keras_tf.glob("lib/python*/site-packages"))
    before = freeze(python)
    assert frozen(before, "tf-keras") is None
    broken = run_tf(python, KERAS2)
    assert broken.returncode != 0 and "Keras cannot be imported" in broken.stderr, broken.stderr

    found = diagnosis(python, LEGACY)
    assert "tf-keras-missing" in found, sorted(found)
    assert found["tf-keras-missing"]["remediation"]["commands"] == [
        f"{python} -m pip install 'tf-keras~=2.21.0'"]

    doc = apply_fix(python, LEGACY)
    assert "tf-keras-missing" in doc["before"] and "tf-keras-missing" not in doc["after"], doc
    assert [(s["fix_id"], s["status"]) for s in doc["applied"]] == [("pin-python-packages", "done")]
    assert (frozen(freeze(python), "tf-keras") or "").startswith("2.21."), freeze(python)
    after = diagnosis(python, LEGACY)
    assert not {"tf-keras-missing", "tf-keras-mismatch"} & set(after), sorted(after)

    run = run_tf(python, KERAS2)
    assert run.returncode == 0, run.stderr[-2000:]
    module, shape = run.stdout.strip().splitlines()[-1].split(" ", 1)
    assert module.startswith("tf_keras") and shape == "[1, 1]", run.stdout

    undo(python)
    assert freeze(python) == before
    assert not (site / "tf_keras").exists()


def test_cudnn_wheel_older_than_pin_fixed_and_undone(old_cudnn_tf: Path, drop_backups: None):
    """tensorflow[and-cuda] with nvidia-cudnn-cu12 9.1 (TF pins >=9.3.0.75): both the pin check
    and the loaded-library check see it; the fix re-pins, TF runs, undo puts 9.1 back byte for byte."""
    python = str(old_cudnn_tf / "bin" / "python")
    before = freeze(python)
    assert frozen(before, "nvidia-cudnn-cu12") == OLD_CUDNN
    cudnn_before = files_hash(old_cudnn_tf, CUDNN_FILES)
    activate_before = (old_cudnn_tf / "bin" / "activate").read_bytes()  # the plan may hook it

    found = diagnosis(python)
    assert {"nvidia-wheel-off-pin", "cuda-library-too-old"} <= set(found), sorted(found)
    off_pin = found["nvidia-wheel-off-pin"]["evidence"]
    assert list(off_pin) == ["nvidia-cudnn-cu12"], off_pin
    assert off_pin["nvidia-cudnn-cu12"].startswith(f"{OLD_CUDNN} (needs ")
    assert SpecifierSet(off_pin["nvidia-cudnn-cu12"].split("needs ")[1].rstrip(")")) \
        == SpecifierSet(">=9.3.0.75,<10.0")
    too_old = found["cuda-library-too-old"]["message"]
    assert too_old.startswith("libcudnn.so.9 is version 9.1") and "9.3" in too_old, too_old

    doc = apply_fix(python)
    assert {"nvidia-wheel-off-pin", "cuda-library-too-old"} <= set(doc["before"]), doc["before"]
    assert not {"nvidia-wheel-off-pin", "cuda-library-too-old"} & set(doc["after"]), doc["after"]
    assert [(s["fix_id"], s["status"]) for s in doc["applied"]
            if s["fix_id"] == "repin-nvidia-wheels"] == [("repin-nvidia-wheels", "done")], doc
    have = frozen(freeze(python), "nvidia-cudnn-cu12")
    assert have is not None and have in SpecifierSet(">=9.3.0.75,<10.0"), have
    after = diagnosis(python)
    assert not {"nvidia-wheel-off-pin", "cuda-library-too-old"} & set(after), sorted(after)

    run = run_tf(python, MATMUL)  # no driver on CI: TF says so and runs on the CPU
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "[[7.0, 10.0], [15.0, 22.0]]"

    undo(python)
    assert freeze(python) == before
    assert files_hash(old_cudnn_tf, CUDNN_FILES) == cudnn_before
    assert (old_cudnn_tf / "bin" / "activate").read_bytes() == activate_before
