"""End to end with a real TensorFlow 2.21 [and-cuda] venv, broken as users break it, then
`tfdoctor fix --apply --yes`, a fresh diagnosis, TensorFlow at work, and `tfdoctor fix --undo`:
a cuDNN wheel older than TF's [and-cuda] pin (cuDNN checks major.minor at load time).

The venv is a copy of the cached tests/envs tf-cuda venv (cached_envs.py: hard links, about a
second, no TensorFlow download). The old cuDNN wheel and the one the fix re-pins to come from
the test wheel cache (cached_envs.cached_wheels: downloaded on the first run only, 1.3 GB),
and the fix's pip sees only that directory. Everything runs the real CLI in child processes.

Legacy Keras (TF_USE_LEGACY_KERAS=1 without tf-keras) in a tensorflow-cpu venv is in
test_fix_legacy_keras.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cached_envs import cached_env, cached_wheels, copy_env
from fixing_venvs import diagnosis, files_hash, freeze, pip, tfdoctor
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow
MATMUL = ("import tensorflow as tf; a = tf.constant([[1., 2.], [3., 4.]]); "
          "print(tf.linalg.matmul(a, a).numpy().tolist())")
OLD_CUDNN = "9.1.0.70"
"""Below TF 2.21's pin nvidia-cudnn-cu12>=9.3.0.75,<10.0, same major (so it loads, then fails)."""
CUDNN_FILES = "lib/python*/site-packages/nvidia/cudnn/**/*"


@pytest.fixture(scope="module")
def cudnn_wheels() -> Path:
    """The old cuDNN wheel and the one the cached venv has (what the fix re-pins to), both
    downloaded once into the test wheel cache: 1.3 GB a run otherwise."""
    src = cached_env("tf-cuda")
    have = next(src.glob("lib/python*/site-packages/nvidia_cudnn_cu12-*.dist-info"))
    pinned = have.name.removesuffix(".dist-info").split("-", 1)[1]
    return cached_wheels(str(src / "bin" / "python"), f"nvidia-cudnn-cu12=={OLD_CUDNN}",
                         f"nvidia-cudnn-cu12=={pinned}")


@pytest.fixture(scope="module")
def old_cudnn_tf(tmp_path_factory: pytest.TempPathFactory, cudnn_wheels: Path) -> Iterator[Path]:
    """A real tensorflow[and-cuda]==2.21.0 venv, then cuDNN 9.1 forced in with --no-deps."""
    root = copy_env(cached_env("tf-cuda"), tmp_path_factory.mktemp("old-cudnn") / "venv")
    try:
        pip(str(root / "bin" / "python"), "--no-deps", "--no-index", "--find-links",
            str(cudnn_wheels), f"nvidia-cudnn-cu12=={OLD_CUDNN}")
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


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


def test_cudnn_wheel_older_than_pin_fixed_and_undone(old_cudnn_tf: Path, cudnn_wheels: Path,
                                                     drop_backups: None):
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

    # pip of the fix sees only the cached wheels: the cached venv's own cuDNN satisfies the pin.
    doc = apply_fix(python, env={"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(cudnn_wheels)})
    assert {"nvidia-wheel-off-pin", "cuda-library-too-old"} <= set(doc["before"]), doc["before"]
    assert not {"nvidia-wheel-off-pin", "cuda-library-too-old"} & set(doc["after"]), doc["after"]
    assert set(doc["after"]) <= set(doc["before"]), "the fix left a new finding"
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
