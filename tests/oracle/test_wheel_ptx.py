"""CUDA's own compiler as the judge of TensorFlow's PTX (benchmarks/wheel_ptx.py).

A GPU newer than every SASS target of a wheel runs TensorFlow only if its PTX JIT-compiles for
it. The compat table's `ptx_targets` say which targets each wheel carries; here they are read
again from the installed wheels (2.21 and 2.17) and the smallest module of each kind goes
through the CUDA 13.0 ptxas (the compiler of a CUDA 13.0 driver's JIT) for sm_120. tfdoctor's
rule (compat.ptx_jits_on) must say what ptxas says.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import need
from tfdoctor import compat

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "wheel_ptx.py"
PTXAS = Path("/usr/local/cuda-13.0/bin/ptxas")


def wheel_ptx():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import wheel_ptx
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return wheel_ptx


def installed(python: str) -> tuple[Path, str]:
    """The tensorflow/ directory of a venv and its version."""
    site = next((Path(python).parent.parent / "lib").glob("python3*/site-packages"))
    info = next(site.glob("tensorflow-*.dist-info")).name
    version = info.removeprefix("tensorflow-").removesuffix(".dist-info")
    return site / "tensorflow", version


def test_lz4_overlapping_match_and_limit():
    """A match longer than its offset repeats bytes (an LZ4 run); the limit stops early."""
    block = bytes([0x14, ord("a"), 1, 0, 0x10, ord("b")])  # 'a', then 8 x copy at offset 1, then 'b'
    assert wheel_ptx().lz4_block(block, 100) == b"a" * 9 + b"b"
    assert wheel_ptx().lz4_block(block, 4) == b"aaaa"


@pytest.mark.parametrize("which", ["tf_cuda_python", "tf_cuda_217_python"])
def test_ptx_targets_and_ptxas_agree_with_the_table(which, request):
    """2.21 carries sm_90 PTX only, which ptxas compiles for sm_120; 2.17 also carries sm_90a
    (1,149 kernel_gen modules), which it refuses: TensorFlow 2.17 lists an RTX 50xx, then its
    first kernel fails. The table and tfdoctor's rule say the same."""
    need(PTXAS.is_file(), f"{PTXAS} missing: the CUDA 13.0 toolkit")
    tree, version = installed(request.getfixturevalue(which))
    measured = wheel_ptx().measure(tree, str(PTXAS), ["sm_120"])
    release = compat.tf_release(version)
    assert release is not None and list(release.ptx_targets or ()) == measured["ptx_targets"]
    kinds = measured["kinds"]
    assert sum(k["modules"] for k in kinds.values()) > 1000
    for kind, row in kinds.items():
        if kind.endswith("a"):
            assert "cannot be compiled to future architecture" in row["sm_120"], row
        else:
            assert row["sm_120"] == "ok", (kind, row)
    compiles = all(row["sm_120"] == "ok" for row in kinds.values())
    assert compat.ptx_jits_on(version, release.compute_capabilities, "12.0") is compiles
    assert compiles is (version.startswith("2.21"))


def test_the_script_runs_on_a_wheel_directory(tf_cuda_python):
    """The command line prints one JSON line per target; a missing path is a usage error."""
    tree, _ = installed(tf_cuda_python)
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tree)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert '"ptx_targets": ["sm_90"]' in proc.stdout
    proc = subprocess.run([sys.executable, str(SCRIPT), "/nonexistent.whl"], capture_output=True, text=True)
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_rule_without_a_measurement_keeps_the_field_rule():
    """A build whose targets differ from the wheel's (a source build) or an unknown release:
    PTX JIT on CC >= 10 fails (tensorflow#99592, #101746), below 10 it works."""
    custom = ("sm_70", "compute_80")
    assert compat.ptx_jits_on("2.21.0", custom, "12.0") is False
    assert compat.ptx_jits_on("2.21.0", custom, "8.6") is True
    assert compat.ptx_jits_on("9.9.0", custom, "12.0") is False
    caps = compat.tf_release("2.20").compute_capabilities
    assert compat.ptx_jits_on("2.20.0", caps, "9.0") is True  # sm_90a is Hopper's own
    assert compat.ptx_jits_on("2.20.0", caps, "10.0") is False
    assert compat.best_tf_for(None, None, ("12.0",), jit_ok=True) == "2.21"
    assert compat.best_tf_for("3.9.18", None, ("12.0",), jit_ok=True) == "2.15"  # 2.21 dropped 3.9
    assert compat.best_tf_for(None, None, ("12.0",)) is None  # no release has SASS for it
