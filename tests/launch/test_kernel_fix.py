"""`tfdoctor kernels --fix` through the real CLI on a real kernelspec, judged in a real kernel.

The kernel runs a copy of the real tensorflow[and-cuda] venv (ipykernel installed in it). Its
kernel.json env block puts first on LD_LIBRARY_PATH a directory whose libcudart.so.12 is a
git-lfs pointer (a repository checked out without `git lfs pull`): the loader stops there with
"invalid ELF header" and never reaches the pip copy TensorFlow's RUNPATH names. TensorFlow's own
DSO loader, asked inside the kernel (test_launch_modes.write_probe), answers before the fix,
after `tfdoctor kernels --fix NAME --apply --yes`, and after `tfdoctor kernels --undo NAME`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_launch_modes import CLEAN, kernel_mode, launch_venv, write_probe

TFDOCTOR = str(Path(sys.executable).parent / "tfdoctor")
"""The console script pip installed: the CLI entry point a user runs."""
LFS_POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 712032\n"
)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return launch_venv(tmp_path_factory.mktemp("kernel-fix") / "venv")


def tfdoctor(*args: str, jupyter: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI as a user runs it, seeing only the kernelspecs under `jupyter`."""
    env = {**CLEAN, "JUPYTER_PATH": str(jupyter), "HOME": str(home),
           "XDG_STATE_HOME": str(home / "state")}
    return subprocess.run([TFDOCTOR, *args], env=env, capture_output=True, text=True, timeout=300)


def test_kernels_fix_makes_the_kernel_load_cudart_and_undo_puts_kernel_json_back(venv, tmp_path):
    """The fails / loads / fails row for a kernel whose own env block breaks it: the dry run
    changes nothing, --apply --yes drops only the bad directory (every other key and entry
    kept), TensorFlow's loader in the restarted kernel then opens the pip cudart, and --undo
    makes kernel.json byte for byte what it was (and the kernel broken again)."""
    jupyter, home = tmp_path / "jupyter", tmp_path / "home"
    lfs = tmp_path / "cuda-lfs" / "lib64"
    lfs.mkdir(parents=True)
    (lfs / "libcudart.so.12").write_text(LFS_POINTER)
    spec = jupyter / "kernels" / "tf-gpu"
    spec.mkdir(parents=True)
    kernel_json = spec / "kernel.json"
    kernel_json.write_text(json.dumps({
        "argv": [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "TensorFlow (GPU)", "language": "python",
        "env": {"LD_LIBRARY_PATH": f"{lfs}:/opt/site/lib", "TF_CPP_MIN_LOG_LEVEL": "1"},
    }, indent=1) + "\n")
    original = kernel_json.read_bytes()
    probe = write_probe(tmp_path / "probe.py", venv, "cudart")
    before = kernel_mode(venv, probe, jupyter / "kernels", "tf-gpu")

    dry = tfdoctor("kernels", "--fix", "tf-gpu", jupyter=jupyter, home=home)
    assert dry.returncode == 0, dry.stderr[-3000:]
    diff = [line.replace(" ", "") for line in dry.stdout.splitlines()]
    assert dry.stdout.startswith("Dry run: nothing was changed.")
    assert f'-"LD_LIBRARY_PATH":"{lfs}:/opt/site/lib",' in diff
    assert '+"LD_LIBRARY_PATH":"/opt/site/lib",' in diff
    assert kernel_json.read_bytes() == original

    applied = tfdoctor("kernels", "--fix", "tf-gpu", "--apply", "--yes", "--json", jupyter=jupyter,
                       home=home)
    assert applied.returncode == 0, applied.stderr[-3000:]
    doc = json.loads(applied.stdout)
    (step,) = doc["plan"]["steps"]
    assert doc["applied"] and step["findings"] == ["cuda-library-unloadable"]
    assert step["args"] == ["--set", "LD_LIBRARY_PATH", "/opt/site/lib", str(kernel_json)]
    fixed = json.loads(kernel_json.read_text())
    assert fixed["env"] == {"LD_LIBRARY_PATH": "/opt/site/lib", "TF_CPP_MIN_LOG_LEVEL": "1"}
    assert fixed["argv"][0] == str(venv / "bin" / "python")
    after = kernel_mode(venv, probe, jupyter / "kernels", "tf-gpu")

    undone = tfdoctor("kernels", "--undo", "tf-gpu", jupyter=jupyter, home=home)
    assert undone.returncode == 0, undone.stderr[-3000:]
    assert kernel_json.read_bytes() == original
    after_undo = kernel_mode(venv, probe, jupyter / "kernels", "tf-gpu")
    assert (before, after, after_undo) == ("fails", "loads", "fails")
