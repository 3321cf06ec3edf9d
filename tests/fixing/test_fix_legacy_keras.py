"""Legacy Keras in a real tensorflow-cpu 2.21 venv (issue 12): TF_USE_LEGACY_KERAS=1 without
tf-keras is fixed, not refused.

tf-keras's only Requires-Dist is `tensorflow`, which tensorflow-cpu does not satisfy by name
although it provides the same import package; a plain `pip install tf-keras` would pull the full
tensorflow in beside it. The fix installs tf-keras with --no-deps, so only tf-keras is added.
The venv is a copy of the cached tests/envs tf-cpu venv (hard links, no TensorFlow download);
only the tf-keras wheel (1.7 MB) comes through pip. The CLI is the real console script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cached_envs import cached_env, copy_env, differences, tree
from fixing_venvs import freeze

pytestmark = pytest.mark.slow
LEGACY = {"TF_USE_LEGACY_KERAS": "1"}
TF_KERAS = ("import tensorflow as tf; import tf_keras; "
            "m = tf.keras.Sequential([tf.keras.layers.Input((2,)), tf.keras.layers.Dense(1)]); "
            "m.compile(loss='mse'); m.fit(tf.ones((4, 2)), tf.ones((4, 1)), verbose=0); "
            "print(tf_keras.__version__, tf.keras.__name__.split('.')[0], "
            "type(m).__module__.split('.')[0])")


def tfdoctor(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed `tfdoctor` console script, with TF_USE_LEGACY_KERAS=1."""
    binary = Path(sys.executable).parent / "tfdoctor"
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, **LEGACY})


def test_legacy_keras_in_tensorflow_cpu_is_fixed_with_tf_keras_alone(tmp_path: Path):
    """apply: tf-keras-missing gone, nothing new, only tf-keras added (pip freeze), legacy
    tf.keras trains in the venv; undo: the venv byte for byte as before."""
    env = copy_env(cached_env("tf-cpu"), tmp_path / "venv")
    python = str(env / "bin" / "python")
    before_tree, before_freeze = tree(env), freeze(python)
    assert not any(ln.lower().startswith(("tf-keras", "tf_keras", "tensorflow=="))
                   for ln in before_freeze.splitlines()), before_freeze

    done = tfdoctor("fix", "--python", python, "--apply", "--yes", "--json")
    assert done.returncode in (0, 1), done.stderr[-3000:]
    doc = json.loads(done.stdout)
    assert "tf-keras-missing" in doc["before"] and "tf-keras-missing" not in doc["after"], doc
    assert set(doc["after"]) <= set(doc["before"]), "the fix left a new finding"
    steps = [(s["fix_id"], s["status"]) for s in doc["applied"]]
    assert steps == [("pin-python-packages", "done")], doc["applied"]
    assert "--no-deps" in doc["applied"][0]["detail"], doc["applied"]

    after = set(freeze(python).splitlines())
    added, gone = after - set(before_freeze.splitlines()), set(before_freeze.splitlines()) - after
    assert (sorted(added), sorted(gone)) == (["tf_keras==2.21.0"], []), (added, gone)

    run = subprocess.run([python, "-c", TF_KERAS], capture_output=True, text=True, timeout=600,
                         env={**os.environ, **LEGACY})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-3:] == ["2.21.0", "tf_keras", "tf_keras"], run.stdout  # not Keras 3

    undone = tfdoctor("fix", "--python", python, "--undo")
    assert undone.returncode == 0, undone.stderr[-3000:]
    assert "byte for byte" in undone.stdout, undone.stdout
    assert differences(env, before_tree) == [], "undo did not give back the original exactly"
