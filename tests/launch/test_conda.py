"""conda environments as targets, on a faithful layout (no conda channel is reachable here).

The layout is a copy of the real tensorflow[and-cuda] venv with what makes a prefix a conda
environment for tfdoctor and for conda itself: conda-meta/ with one JSON record per package
(name, version, build, channel: the files conda writes on install) and conda-meta/history.
What it cannot show: a Python that conda built (this one is the venv's), and conda's own
`conda activate` running activate.d (the scripts are sourced here the way conda sources them).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fixing.cached_envs import cached_env, copy_env, differences, site_packages, tree
from test_launch_modes import CLEAN, bare_mode, write_probe

RECORDS = {
    "tensorflow": ("2.21.0", "cuda126py311h2b2a1b4_200"),
    "tensorflow-base": ("2.21.0", "cuda126py311h8c3f0f1_200"),
    "cuda-version": ("12.6", "h7480c83_3"),
    "cuda-cudart": ("12.6.77", "h5888daf_0"),
    "libcublas": ("12.6.4.1", "h5888daf_1"),
    "cudnn": ("9.3.0.75", "h93bb076_0"),
    "python": ("3.11.7", "hab00c5b_1_cpython"),
    "zlib": ("1.3.1", "hb9d3cd8_2"),
}


def make_conda_layout(dest: Path) -> Path:
    copy_env(cached_env("tf-cuda"), dest)
    meta = dest / "conda-meta"
    meta.mkdir()
    for name, (version, build) in RECORDS.items():
        (meta / f"{name}-{version}-{build}.json").write_text(json.dumps({
            "name": name, "version": version, "build": build, "build_number": 0,
            "channel": "https://conda.anaconda.org/conda-forge/linux-64"}))
    (meta / "history").write_text("==> 2026-11-23 20:00:00 <==\n# cmd: micromamba create\n")
    return dest


def test_conda_env_target_fix_and_undo(tmp_path):
    """A conda prefix is recognised (is_conda, conda-meta's TensorFlow build string and CUDA
    packages); `fix --apply` writes the same start-up preload as for a venv, cuSOLVER then loads
    through TensorFlow's own loader from the bare interpreter, and `--undo` is byte-exact."""
    env = make_conda_layout(tmp_path / "conda env")
    python = str(env / "bin" / "python")
    state = {**CLEAN, "XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    quick = subprocess.run([sys.executable, "-m", "tfdoctor", "--quick", "--json", "--python",
                            python], capture_output=True, text=True, env=state, timeout=300)
    facts = json.loads(quick.stdout)["facts"]["python"]
    assert facts["is_conda"] is True
    assert facts["conda_packages"]["tensorflow"] == "2.21.0 cuda126py311h2b2a1b4_200"
    assert facts["conda_packages"]["cuda-version"] == "12.6 h7480c83_3"
    assert "zlib" not in facts["conda_packages"], "only what decides TensorFlow's CUDA"
    probe = write_probe(tmp_path / "probe.py", env)
    site = site_packages(env)
    before_tree = tree(env)
    assert bare_mode(env, probe) == "fails"
    applied = subprocess.run([sys.executable, "-m", "tfdoctor", "fix", "--python", python,
                              "--apply", "--yes", "--json"], capture_output=True, text=True,
                             env=state, timeout=600)
    doc = json.loads(applied.stdout)
    assert doc["plan"]["env_kind"] == "conda"
    hooks = [s for s in doc["plan"]["steps"] if s["kind"] == "hook"]
    assert [s["files"] for s in hooks] == [[str(site / "tfdoctor-preload.pth"),
                                             str(site / "tfdoctor-preload.py")]]
    assert bare_mode(env, probe) == "loads"
    undone = subprocess.run([sys.executable, "-m", "tfdoctor", "fix", "--undo", "--python",
                             python], capture_output=True, text=True, env=state, timeout=600)
    assert undone.returncode == 0, undone.stderr
    assert bare_mode(env, probe) == "fails"
    assert differences(env, before_tree) == []


def test_conda_packages_absent_outside_conda(tf_cpu_python):
    """A venv has no conda-meta: conda_packages is None (not collected), not an empty dict."""
    out = subprocess.run([sys.executable, "-m", "tfdoctor", "--quick", "--json", "--python",
                          tf_cpu_python], capture_output=True, text=True, timeout=300,
                         env=dict(CLEAN))
    assert json.loads(out.stdout)["facts"]["python"]["conda_packages"] is None
