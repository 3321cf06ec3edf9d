"""The activate.csh hook in a real tcsh, on a copy of the real tensorflow[and-cuda] venv.

Where a shell hook is still the fix (TensorFlow outside the env, a stub libcuda dir to drop), it
goes into every activate script the venv has. Here the hook script puts the venv's pip cuSOLVER
directory on LD_LIBRARY_PATH (the argument the planner gives it for a TensorFlow its .pth cannot
reach); tcsh sources the venv's own activate.csh and TensorFlow's own DSO loader
(test_launch_modes.write_probe) answers whether cuSOLVER opens, before and after `deactivate`.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from fixing.cached_envs import cached_env, copy_env, site_packages
from helpers import need
from test_launch_modes import CLEAN, verdict, write_probe

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "fixes" / "activation-hook-ld-library-path.sh"
STUBS = "/usr/local/cuda/lib64/stubs"
SESSION = """set prompt=''
source "$argv[2]/bin/activate.csh"
source "$argv[2]/bin/activate.csh"
python "$argv[3]"
deactivate
if ($?LD_LIBRARY_PATH) then
    echo "LD_LIBRARY_PATH=[$LD_LIBRARY_PATH]"
else
    echo "LD_LIBRARY_PATH unset"
endif
echo "hooked=$?_TFDOCTOR_HOOKED venv=$?VIRTUAL_ENV"
"$argv[2]/bin/python" "$argv[3]"
"""
"""Activated twice (no stacking), the probe through `python` on PATH, deactivate, the state,
the probe again through the venv's interpreter by path."""


@pytest.fixture(scope="module")
def hooked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of the venv whose activate.csh carries the hook, and the probe script."""
    need(shutil.which("tcsh") is not None, "tcsh not installed (tests/envs/apt.sh installs it)")
    tmp = tmp_path_factory.mktemp("csh")
    venv = copy_env(cached_env("tf-cuda"), tmp / "venv")
    src = str(cached_env("tf-cuda"))
    csh = venv / "bin" / "activate.csh"
    csh.write_text(csh.read_text().replace(src, str(venv)))
    site = site_packages(venv)
    subprocess.run(["sh", str(HOOK), "--prepend", str(site / "nvidia" / "cusolver" / "lib"),
                    "--remove", STUBS, "venv", str(venv / "bin" / "activate")], check=True)
    assert "_tfdoctor_venv_deactivate" in csh.read_text()
    return venv, write_probe(tmp / "probe.py", venv)


def session(venv: Path, probe: Path, **env: str) -> tuple[str, str, str, str]:
    """(cuSOLVER while activated, LD_LIBRARY_PATH after deactivate, leftovers, cuSOLVER after)."""
    script = probe.parent / "session.csh"
    script.write_text(SESSION)
    done = subprocess.run(["tcsh", "-f", str(script), "tcsh", str(venv), str(probe)],
                          env={**CLEAN, **env}, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    probes = [i for i, line in enumerate(lines) if line.startswith("TFDOCTOR-PROBE ")]
    assert len(probes) == 2, done.stdout[-2000:]
    first, second = probes
    after = [line for line in lines[first + 1:second] if not line.startswith("{")]
    return (verdict(lines[first], venv), after[0], after[1], verdict(lines[second], venv))


def test_the_library_fix_holds_in_tcsh_and_deactivate_unsets_what_was_unset(hooked):
    """No LD_LIBRARY_PATH before: activated, TensorFlow's loader opens cuSOLVER; after
    `deactivate` LD_LIBRARY_PATH is unset again, nothing of the hook is left, and cuSOLVER no
    longer loads."""
    venv, probe = hooked
    assert session(venv, probe) == ("loads", "LD_LIBRARY_PATH unset", "hooked=0 venv=0", "fails")


@pytest.mark.parametrize("value", [f"{STUBS}:/opt/site lib", ""])
def test_deactivate_in_tcsh_puts_the_old_value_back_exactly(hooked, value):
    """A value the user had (with the stub dir the hook drops, a blank in a path; or empty) is
    back byte for byte after `deactivate`."""
    venv, probe = hooked
    assert session(venv, probe, LD_LIBRARY_PATH=value) == (
        "loads", f"LD_LIBRARY_PATH=[{value}]", "hooked=0 venv=0", "fails")
