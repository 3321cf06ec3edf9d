"""The activation hook: planned from findings, written into a real venv's activate, undone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from helpers import SITE, change, healthy, judge
from tfdoctor.facts import Facts
from tfdoctor.fixing.apply import apply_plan, undo_last
from tfdoctor.fixing.commands import fix
from tfdoctor.fixing.planner import plan_fixes

STUBS = "/usr/local/cuda/lib64/stubs"
CUDNN_DIR = f"{SITE}/nvidia/cudnn/lib"


def broken_env_facts(prefix: Path, conda: bool = False) -> Facts:
    """TF cannot reach pip's cuDNN, a stub libcuda is on the path, CUDA_VISIBLE_DEVICES=-1."""
    facts = healthy(gpus=2)
    libs = tuple(lib if lib.name != "cudnn" else type(lib)(
        name="cudnn", soname="libcudnn.so.9", other_copies=(f"{CUDNN_DIR}/libcudnn.so.9",))
        for lib in facts.libraries)
    return change(facts, libraries=libs, env={"CUDA_VISIBLE_DEVICES": "-1"},
                  cuda_driver={"is_stub": True, "library": f"{STUBS}/libcuda.so.1"},
                  python={"executable": str(prefix / "bin" / "python"), "prefix": str(prefix),
                          "is_venv": not conda, "is_conda": conda})


def venv(tmp_path: Path) -> Path:
    """A real venv (no pip needed here): its bin/activate is the file the hook edits."""
    prefix = tmp_path / "env with space"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    return prefix


def sourced(script: Path, **env: str) -> dict[str, str]:
    """The environment bash sees after sourcing `script`, starting from `env`."""
    out = subprocess.run(["bash", "-c", '. "$1" >/dev/null; env -0', "sh", str(script)],
                         env={"PATH": "/usr/bin:/bin", **env}, capture_output=True, check=True)
    return dict(line.split("=", 1) for line in out.stdout.decode().split("\0") if "=" in line)


def yes(step) -> bool:
    return True


def no(step) -> bool:
    raise AssertionError("no root step may be asked for here")


def test_hook_plan_folds_env_fixes_into_one_step(tmp_path):
    """Three findings that need env changes become one hook step with exact arguments."""
    prefix = venv(tmp_path)
    plan = plan_fixes(judge(broken_env_facts(prefix)))
    hooks = [s for s in plan.steps if s.kind == "hook"]
    assert len(hooks) == 1
    step = hooks[0]
    assert set(step.findings) == {"cuda-library-missing", "libcuda-stub",
                                  "cuda-visible-devices-hides-all"}
    assert step.args == ("--prepend", CUDNN_DIR, "--remove", STUBS, "--cvd-from", "-1",
                         "--cvd-to", "", "venv", str(prefix / "bin" / "activate"))
    assert step.files == (str(prefix / "bin" / "activate"),)


def test_hook_applies_is_idempotent_and_undoes_byte_identical(tmp_path):
    """Activation then sets what TF misses; a second apply changes nothing; undo restores bytes."""
    prefix = venv(tmp_path)
    activate = prefix / "bin" / "activate"
    original = activate.read_bytes()
    plan = plan_fixes(judge(broken_env_facts(prefix)))
    result = apply_plan(plan, yes, no)
    assert [r.status for r in result.steps if r.fix_id.startswith("activation")] == ["done"]
    env = sourced(activate, LD_LIBRARY_PATH=f"{STUBS}:/opt/x", CUDA_VISIBLE_DEVICES="-1")
    assert env["LD_LIBRARY_PATH"] == f"{CUDNN_DIR}:/opt/x"
    assert "CUDA_VISIBLE_DEVICES" not in env
    assert sourced(activate, CUDA_VISIBLE_DEVICES="0")["CUDA_VISIBLE_DEVICES"] == "0"
    after_first = activate.read_bytes()
    again = apply_plan(plan_fixes(judge(broken_env_facts(prefix))), yes, no)
    assert [r.status for r in again.steps if r.fix_id.startswith("activation")] == ["unchanged"]
    assert activate.read_bytes() == after_first and after_first.count(b">>> tfdoctor") == 1
    undo_last(str(prefix))
    assert activate.read_bytes() == original


def test_venv_deactivate_restores_the_variables(tmp_path):
    """`deactivate` undoes what the hook set (LD_LIBRARY_PATH back to the user's own value,
    CUDA_VISIBLE_DEVICES back), and activating twice does not stack the hook's changes."""
    prefix = venv(tmp_path)
    activate = prefix / "bin" / "activate"
    apply_plan(plan_fixes(judge(broken_env_facts(prefix))), yes, no)
    script = ('. "$1"; . "$1"; echo "in=$LD_LIBRARY_PATH"; deactivate; '
              'echo "out=$LD_LIBRARY_PATH cvd=${CUDA_VISIBLE_DEVICES-unset}"; '
              'type deactivate >/dev/null 2>&1 && echo leftover || echo clean')
    out = subprocess.run(["bash", "-c", script, "sh", str(activate)], capture_output=True,
                         text=True, check=True,
                         env={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": f"{STUBS}:/opt/x",
                              "CUDA_VISIBLE_DEVICES": "-1"}).stdout.split("\n")
    assert out[0] == f"in={CUDNN_DIR}:/opt/x"
    assert out[1] == f"out={STUBS}:/opt/x cvd=-1"
    assert out[2] == "clean"


def test_conda_hook_creates_and_undo_removes_files(tmp_path):
    """For conda the hook is activate.d/deactivate.d scripts; deactivate restores the variables."""
    prefix = tmp_path / "conda-env"
    (prefix / "bin").mkdir(parents=True)
    plan = plan_fixes(judge(broken_env_facts(prefix, conda=True)))
    apply_plan(plan, yes, no)
    act = prefix / "etc/conda/activate.d/tfdoctor.sh"
    deact = prefix / "etc/conda/deactivate.d/tfdoctor.sh"
    out = subprocess.run(["bash", "-c", f'. "{act}"; echo "$LD_LIBRARY_PATH"; . "{deact}"; '
                          'echo "${LD_LIBRARY_PATH-unset}"'], env={"LD_LIBRARY_PATH": "/a"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [f"{CUDNN_DIR}:/a", "/a"]
    journal = undo_last(str(prefix))
    assert not act.exists() and not deact.exists()
    assert len(list((journal / "undone").iterdir())) == 2, "moved aside, not deleted"


def test_cli_dry_run_shows_diff_and_saved_plan_applies(tmp_path):
    """The dry run prints the diff and changes nothing; a saved plan applies later as shown."""
    prefix = venv(tmp_path)
    activate = prefix / "bin" / "activate"
    original = activate.read_bytes()
    plan = plan_fixes(judge(broken_env_facts(prefix)))
    saved = tmp_path / "plan.json"
    saved.write_text(json.dumps(plan.to_dict()))
    shown = CliRunner().invoke(fix, ["--plan", str(saved)])
    assert shown.exit_code == 0, shown.output
    assert f"+_tfdoctor_new='{CUDNN_DIR}'" in shown.stdout
    assert "Dry run: nothing was changed" in shown.stdout
    assert "$ sudo" not in shown.stdout and activate.read_bytes() == original
    applied = CliRunner().invoke(fix, ["--plan", str(saved), "--apply", "--yes", "--json"])
    assert applied.exit_code in (0, 1), applied.output
    doc = json.loads(applied.stdout)
    statuses = {a["fix_id"]: a["status"] for a in doc["applied"]}
    assert statuses["activation-hook-ld-library-path"] == "done"
    assert b">>> tfdoctor activation hook >>>" in activate.read_bytes()
