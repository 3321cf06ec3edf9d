"""pip fixes in real venvs put into real broken states, with small local wheels for speed.

The TensorFlow distributions here are small real wheels whose METADATA declares the real
Requires-Dist lines (research/compat.md section 7): a real TF 2.15 wheel is 500 MB, and what
these fixes act on is pip metadata and files, which the small wheels have for real. pip,
the venv, numpy and the tfdoctor probes are all real. One test with a real TensorFlow is in
test_real_tf.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixing_venvs import freeze, make_venv, pip, tree_hash
from fixing_wheels import TF_215_REQUIRES, TF_221_REQUIRES, fake_tf
from tfdoctor.errors import FixError
from tfdoctor.fixing.apply import apply_plan
from tfdoctor.fixing.commands import fix
from tfdoctor.fixing.model import FixPlan, FixStep


def run_fix(*args: str):
    result = CliRunner().invoke(fix, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.fixture
def offline(tmp_path, monkeypatch) -> Path:
    """pip sees only a local directory of wheels (the fakes can never come from PyPI)."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    return wheels


def test_conflicting_tf_distributions_fixed_and_undone(tmp_path, offline):
    """tensorflow-gpu left behind under tensorflow-cpu: the fix keeps one; undo brings both back."""
    fake_tf(offline, "tensorflow-gpu", "2.12.0")
    fake_tf(offline, "tensorflow-cpu", "2.21.0", TF_221_REQUIRES)
    python = make_venv(tmp_path / "venv")
    pip(python, "--no-deps", "tensorflow-gpu==2.12.0")
    pip(python, "--no-deps", "tensorflow-cpu==2.21.0")
    init = next((tmp_path / "venv").glob("lib/python*/site-packages/tensorflow/__init__.py"))
    before_freeze, before_init = freeze(python), init.read_bytes()
    before_tree = tree_hash(tmp_path / "venv")

    dry = run_fix("--python", python)
    assert "remove-conflicting-tf" in dry.stdout and "uninstall -y tensorflow-gpu" in dry.stdout
    assert tree_hash(tmp_path / "venv") == before_tree, "the dry run changed the venv"

    applied = run_fix("--python", python, "--apply", "--yes", "--json")
    doc = json.loads(applied.stdout)
    assert "tf-multiple-distributions" in doc["before"]
    assert "tf-multiple-distributions" not in doc["after"]
    assert set(doc["after"]) <= set(doc["before"]), "the fix left a new finding"
    assert "tensorflow-gpu" not in freeze(python) and "tensorflow-cpu==2.21.0" in freeze(python)

    again = run_fix("--python", python, "--apply", "--yes")
    assert "remove-conflicting-tf" not in again.stdout

    undone = run_fix("--python", python, "--undo")
    assert undone.exit_code == 0, undone.output
    assert freeze(python) == before_freeze
    assert init.read_bytes() == before_init


def test_numpy2_beside_tf215_is_pinned_and_undone(tmp_path):
    """TF 2.15 needs numpy<2 (its import fails on numpy 2): the fix installs numpy 1.26."""
    wheels = tmp_path / "wheels"
    wheel = fake_tf(wheels, "tensorflow", "2.15.0", TF_215_REQUIRES)
    python = make_venv(tmp_path / "venv")
    pip(python, "--no-deps", str(wheel), "numpy==2.2.6")
    before = freeze(python)

    applied = run_fix("--python", python, "--apply", "--yes", "--json")
    doc = json.loads(applied.stdout)
    assert "package-out-of-range" in doc["before"]
    assert "package-out-of-range" not in doc["after"]
    assert set(doc["after"]) <= set(doc["before"]), "the fix left a new finding"
    version = subprocess.run([python, "-c", "import numpy; print(numpy.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version.startswith("1.")

    assert run_fix("--python", python, "--undo").exit_code == 0
    assert freeze(python) == before


def test_failing_step_rolls_back_everything(tmp_path, offline):
    """Step 2 fails after step 1 edited a file and step 2 uninstalled a package: both come back."""
    fake_tf(offline, "tensorflow-gpu", "2.12.0")
    python = make_venv(tmp_path / "venv")
    pip(python, "--no-deps", "tensorflow-gpu==2.12.0")
    activate = tmp_path / "venv" / "bin" / "activate"
    before_freeze, before_activate = freeze(python), activate.read_bytes()
    before_tree = tree_hash(tmp_path / "venv")
    hook = FixStep("activation-hook-ld-library-path", "hook", "hook", ("x",), (),
                   args=("--prepend", "/opt/lib", "venv", str(activate)),
                   files=tuple(str(activate) + ext for ext in ("", ".fish", ".csh")))
    bad = FixStep("remove-conflicting-tf", "pip", "pip", ("y",), (),
                  args=("--remove", "tensorflow-gpu", "tfdoctor-no-such-package==1.0"),
                  removes=("tensorflow-gpu",))
    plan = FixPlan(python, str(tmp_path / "venv"), "venv", "here", "now", (), (hook, bad))
    with pytest.raises(FixError, match=r"step 2 \(remove-conflicting-tf\) failed.*rolled back"):
        apply_plan(plan, lambda s: True, lambda s: False)
    assert activate.read_bytes() == before_activate
    assert freeze(python) == before_freeze
    assert tree_hash(tmp_path / "venv") == before_tree
