"""End to end with a real TensorFlow: tensorflow-cpu 2.21 with protobuf 4, fixed, verified, undone.

The venv is a copy of the cached tests/envs tf-cpu venv (cached_envs.py: a second, no
TensorFlow download), broken with `pip install "protobuf<5"`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cached_envs import cached_env, copy_env
from click.testing import CliRunner
from fixing_venvs import freeze, pip, tree_hash
from tfdoctor.fixing.commands import fix

pytestmark = pytest.mark.slow
MATMUL = ("import tensorflow as tf; a = tf.constant([[1., 2.], [3., 4.]]); "
          "print(tf.linalg.matmul(a, a).numpy().tolist())")


@pytest.fixture(scope="module")
def broken_tf(tmp_path_factory) -> Iterator[Path]:
    """A real tensorflow-cpu 2.21.0 venv, then `pip install "protobuf<5"` (TF needs >=6.31.1).
    Removed after the module, pass or fail: a copy is 1.6 GB by du (hard links into the cache)."""
    root = copy_env(cached_env("tf-cpu"), tmp_path_factory.mktemp("real-tf") / "venv")
    try:
        pip(str(root / "bin" / "python"), "protobuf<5")
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def protobuf_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.glob("lib/python*/site-packages/google/protobuf/**/*.py")):
        h.update(str(p).encode() + p.read_bytes())
    return h.hexdigest()


def test_real_tf_dry_run_apply_verify_undo(broken_tf: Path):
    """On a real TF: the dry run changes nothing, apply fixes and TF runs, undo restores."""
    python = str(broken_tf / "bin" / "python")
    runner = CliRunner()
    before_freeze, before_proto = freeze(python), protobuf_hash(broken_tf)
    assert "protobuf==4." in before_freeze

    before_tree = tree_hash(broken_tf)
    dry = runner.invoke(fix, ["--python", python])
    assert dry.exit_code == 0, dry.output
    assert f"{python} -m pip install 'protobuf<8.0.0,>=6.31.1'" in dry.stdout
    assert tree_hash(broken_tf) == before_tree, "the dry run changed the venv"

    applied = runner.invoke(fix, ["--python", python, "--apply", "--yes", "--json"])
    doc = json.loads(applied.stdout)
    assert "package-out-of-range" in doc["before"] and "package-out-of-range" not in doc["after"]
    assert set(doc["after"]) <= set(doc["before"]), "the fix left a new finding"
    assert applied.exit_code == 0, applied.output
    run = subprocess.run([python, "-c", MATMUL], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "[[7.0, 10.0], [15.0, 22.0]]"

    fixed_tree = tree_hash(broken_tf)
    again = runner.invoke(fix, ["--python", python, "--apply", "--yes"])
    assert again.exit_code == 0 and "Nothing to fix" in again.stderr + again.stdout
    assert tree_hash(broken_tf) == fixed_tree, "a second apply changed something"

    undone = runner.invoke(fix, ["--python", python, "--undo"])
    assert undone.exit_code == 0, undone.output
    assert freeze(python) == before_freeze
    assert protobuf_hash(broken_tf) == before_proto
