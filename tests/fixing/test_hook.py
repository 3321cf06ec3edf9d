"""The library fix and the activation hook: planned from findings, written into a real venv, undone.

A library TensorFlow's RUNPATH misses becomes a start-up preload (`tfdoctor-preload.pth` beside
TensorFlow); what only a shell can change (a stub libcuda dir to drop, CUDA_VISIBLE_DEVICES=-1)
stays an activation hook. tests/launch runs both on a copy of the real TensorFlow venv.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner
from helpers import SITE, change, healthy, judge, need
from tfdoctor.facts import Facts
from tfdoctor.fixing.apply import apply_plan, undo_last
from tfdoctor.fixing.commands import fix
from tfdoctor.fixing.planner import plan_fixes

STUBS = "/usr/local/cuda/lib64/stubs"
CUDNN_DIR = f"{SITE}/nvidia/cudnn/lib"


def site_of(prefix: Path) -> Path:
    return prefix / "lib" / "python3.11" / "site-packages"


def broken_env_facts(prefix: Path, conda: bool = False, cuda_missing: bool = True,
                     shell: bool = True) -> Facts:
    """TF cannot reach pip's cuDNN, a stub libcuda is on the path, CUDA_VISIBLE_DEVICES=-1."""
    facts = healthy(gpus=2)
    site = site_of(prefix)
    site.mkdir(parents=True, exist_ok=True)
    libs = tuple(lib if lib.name != "cudnn" or not cuda_missing else type(lib)(
        name="cudnn", soname="libcudnn.so.9",
        other_copies=(f"{site}/nvidia/cudnn/lib/libcudnn.so.9",))
        for lib in facts.libraries)
    assert facts.tensorflow is not None
    dists = tuple(replace(d, location=str(site)) for d in facts.tensorflow.distributions)
    return change(facts, libraries=libs, env={"CUDA_VISIBLE_DEVICES": "-1"} if shell else {},
                  cuda_driver={"is_stub": shell,
                               "library": f"{STUBS if shell else '/usr/lib'}/libcuda.so.1"},
                  tensorflow={"package_dir": str(site / "tensorflow"), "distributions": dists},
                  python={"executable": str(prefix / "bin" / "python"), "prefix": str(prefix),
                          "is_venv": not conda, "is_conda": conda, "site_packages": (str(site),)})


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


def test_hook_plan_preloads_libraries_and_hooks_only_the_shell_fixes(tmp_path):
    """The missing library becomes a start-up preload (works without activation); the two
    findings only a shell can fix fold into one activation hook, which comes first."""
    prefix = venv(tmp_path)
    site = site_of(prefix)
    plan = plan_fixes(judge(broken_env_facts(prefix)))
    hooks = [s for s in plan.steps if s.kind == "hook"]
    assert len(hooks) == 2
    shell, preload = hooks
    assert set(shell.findings) == {"libcuda-stub", "cuda-visible-devices-hides-all"}
    assert shell.fix_id == "remove-stub-libcuda-from-path"
    assert shell.args == ("--remove", STUBS, "--cvd-from", "-1", "--cvd-to", "", "venv",
                          str(prefix / "bin" / "activate"))
    assert shell.files == tuple(str(prefix / "bin" / f"activate{ext}") for ext in ("", ".fish", ".csh"))
    assert preload.fix_id == "activation-hook-ld-library-path"
    assert preload.findings == ("cuda-library-missing",)
    assert preload.args == ("--preload", f"{site}/nvidia/cudnn/lib/libcudnn.so.9",
                            "--only-for", f"{site}/tensorflow-2.21.0.dist-info",
                            "preload", f"{site}/tfdoctor-preload.pth")
    assert preload.files == (f"{site}/tfdoctor-preload.pth", f"{site}/tfdoctor-preload.py")


def test_library_fix_alone_needs_no_shell_hook(tmp_path):
    """With only a library missing, nothing in bin/activate changes: the fix is the .pth."""
    prefix = venv(tmp_path)
    plan = plan_fixes(judge(broken_env_facts(prefix, shell=False)))
    assert [(s.fix_id, s.files) for s in plan.steps if s.kind == "hook"] == [
        ("activation-hook-ld-library-path", (f"{site_of(prefix)}/tfdoctor-preload.pth",
                                             f"{site_of(prefix)}/tfdoctor-preload.py"))]


def test_preload_orders_dependencies_first(tmp_path):
    """cuSOLVER needs cuBLAS and nvJitLink: dlopen() by path must find them loaded already."""
    from tfdoctor.fixing.planner import _preload_step

    prefix = venv(tmp_path)
    step = _preload_step(broken_env_facts(prefix), ["/s/libcusolver.so.11", "/s/libcublas.so.12",
                                                    "/s/libnvJitLink.so.12"], ("x",))
    assert [a for a in step.args if a.startswith("/s/")] == [
        "/s/libnvJitLink.so.12", "/s/libcublas.so.12", "/s/libcusolver.so.11"]


def test_system_python_gets_exports_not_a_preload(tmp_path):
    """A Python that is neither venv nor conda: nothing to write into; the person's profile."""
    facts = broken_env_facts(venv(tmp_path), shell=False)
    facts = change(facts, python={"is_venv": False, "is_conda": False})
    plan = plan_fixes(judge(facts))
    assert not [s for s in plan.steps if s.kind == "hook"]
    assert any(s.kind == "manual" and "LD_LIBRARY_PATH" in " ".join(s.commands)
               for s in plan.steps)


def test_hook_applies_is_idempotent_and_undoes_byte_identical(tmp_path):
    """Activation then sets what TF misses; a second apply changes nothing; undo restores bytes."""
    prefix = venv(tmp_path)
    activate = prefix / "bin" / "activate"
    original = activate.read_bytes()
    pth = site_of(prefix) / "tfdoctor-preload.pth"
    plan = plan_fixes(judge(broken_env_facts(prefix)))
    result = apply_plan(plan, yes, no)
    assert [r.status for r in result.steps if r.fix_id != "install-nvidia-driver"] == [
        "done", "done"]
    env = sourced(activate, LD_LIBRARY_PATH=f"{STUBS}:/opt/x", CUDA_VISIBLE_DEVICES="-1")
    assert env["LD_LIBRARY_PATH"] == "/opt/x"
    assert "CUDA_VISIBLE_DEVICES" not in env
    assert sourced(activate, CUDA_VISIBLE_DEVICES="0")["CUDA_VISIBLE_DEVICES"] == "0"
    code = site_of(prefix) / "tfdoctor-preload.py"
    assert f"{site_of(prefix)}/nvidia/cudnn/lib/libcudnn.so.9" in code.read_text()
    assert str(code) in pth.read_text() and len(pth.read_text().splitlines()) == 5
    after_first = activate.read_bytes(), pth.read_bytes()
    again = apply_plan(plan_fixes(judge(broken_env_facts(prefix))), yes, no)
    assert {r.status for r in again.steps if r.status != "printed"} == {"unchanged"}
    assert (activate.read_bytes(), pth.read_bytes()) == after_first
    assert after_first[0].count(b">>> tfdoctor") == 1
    undo_last(str(prefix))
    assert activate.read_bytes() == original and not pth.exists() and not code.exists()
    assert not (site_of(prefix) / "__pycache__").exists(), "the preload is exec'd, never compiled to a file"


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
    assert out[0] == "in=/opt/x"
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
    pth = site_of(prefix) / "tfdoctor-preload.pth"
    out = subprocess.run(["bash", "-c", f'. "{act}"; echo "$LD_LIBRARY_PATH"; . "{deact}"; '
                          'echo "${LD_LIBRARY_PATH-unset}"'],
                         env={"LD_LIBRARY_PATH": f"{STUBS}:/a"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["/a", f"{STUBS}:/a"]
    assert pth.is_file(), "conda gets the same start-up preload as a venv"
    journal = undo_last(str(prefix))
    assert not act.exists() and not deact.exists() and not pth.exists()
    assert not pth.with_suffix(".py").exists()
    assert len(list((journal / "undone").iterdir())) == 4, "moved aside, not deleted"


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
    # the .pth's one line runs the readable file, whose code the diff shows line by line
    assert "+import os; os.path.isfile(" in shown.stdout and "tfdoctor-preload.pth" in shown.stdout
    assert "+LIBRARIES = (" in shown.stdout and "+class TfdoctorPreload:" in shown.stdout
    assert "Dry run: nothing was changed" in shown.stdout
    assert "$ sudo" not in shown.stdout and activate.read_bytes() == original
    applied = CliRunner().invoke(fix, ["--plan", str(saved), "--apply", "--yes", "--json"])
    assert applied.exit_code in (0, 1), applied.output
    doc = json.loads(applied.stdout)
    statuses = {a["fix_id"]: a["status"] for a in doc["applied"]}
    assert statuses["activation-hook-ld-library-path"] == "done"
    assert b">>> tfdoctor activation hook >>>" in activate.read_bytes()


def test_judge_env_activates_only_a_shell_hook(tmp_path):
    """fix --apply judges a preload in the bare mode (None: no activation) and a shell hook in
    the environment activation leaves, never by sourcing the .pth file."""
    from tfdoctor.fixing.launch import judge_env, shell_hook_file

    prefix = venv(tmp_path)
    only_preload = plan_fixes(judge(broken_env_facts(prefix, shell=False)))
    assert shell_hook_file(only_preload) is None and judge_env(only_preload) is None
    both = plan_fixes(judge(broken_env_facts(prefix)))
    apply_plan(both, yes, no)
    assert shell_hook_file(both) == str(prefix / "bin" / "activate")
    env = judge_env(both, {"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "-1",
                           "LD_LIBRARY_PATH": f"{STUBS}:/opt/x"})
    assert env is not None and "CUDA_VISIBLE_DEVICES" not in env
    assert env["LD_LIBRARY_PATH"] == "/opt/x" and env["VIRTUAL_ENV"] == str(prefix)


def test_shell_hook_covers_fish_and_dash(tmp_path):
    """Where a shell hook is still needed it goes into every activate script the venv has that
    tfdoctor can hook (bin/activate for bash/zsh/dash, activate.fish, activate.csh); deactivate
    restores in fish; dash sources bin/activate without `typeset` errors; tcsh gets the same
    values; undo restores all three byte for byte."""
    import shutil


    prefix = venv(tmp_path)
    fish = prefix / "bin" / "activate.fish"
    original = (fish.read_bytes(), (prefix / "bin" / "activate").read_bytes(),
                (prefix / "bin" / "activate.csh").read_bytes())
    apply_plan(plan_fixes(judge(broken_env_facts(prefix))), yes, no)
    base = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": f"{STUBS}:/opt/x", "CUDA_VISIBLE_DEVICES": "-1"}
    dash = subprocess.run(["dash", "-c", '. "$0/bin/activate"; echo "$LD_LIBRARY_PATH"', str(prefix)],
                          env=base, capture_output=True, text=True, check=True)
    assert dash.stdout.split() == ["/opt/x"] and not dash.stderr
    if shutil.which("fish"):
        out = subprocess.run(["fish", "-c", f"source '{fish}'; source '{fish}'; "
                              'echo "in=$LD_LIBRARY_PATH cvd=$CUDA_VISIBLE_DEVICES"; deactivate; '
                              'echo "out=$LD_LIBRARY_PATH cvd=$CUDA_VISIBLE_DEVICES"'],
                             env=base, capture_output=True, text=True, check=True).stdout.split("\n")
        assert out[:2] == ["in=/opt/x cvd=", f"out={STUBS}:/opt/x cvd=-1"]
    if shutil.which("tcsh"):  # venv's activate.csh needs $prompt, as in an interactive csh
        csh = subprocess.run(["tcsh", "-f", "-c", f"set prompt=''; source '{prefix}/bin/activate.csh'; "
                              "source '" + str(prefix) + "/bin/activate.csh'; "
                              'echo "in=$LD_LIBRARY_PATH cvd=$?CUDA_VISIBLE_DEVICES"'],
                             env=base, capture_output=True, text=True, check=True)
        assert csh.stdout.split("\n")[0] == "in=/opt/x cvd=0", csh.stderr
    csh_before = original[2]
    undo_last(str(prefix))
    assert (fish.read_bytes(), (prefix / "bin" / "activate").read_bytes(),
            (prefix / "bin" / "activate.csh").read_bytes()) == (*original[:2], csh_before)
    if not shutil.which("fish"):
        need(False, "fish not installed: the fish half ran only as far as writing the file")


def test_tensorflow_outside_the_env_gets_the_shell_hook(tmp_path):
    """A venv that sees a system TensorFlow (--system-site-packages): a .pth there would change
    the system's site-packages, so the library fix stays an activation hook in the venv."""
    prefix = venv(tmp_path)
    facts = broken_env_facts(prefix, shell=False)
    facts = change(facts, tensorflow={"package_dir": f"{SITE}/tensorflow"})
    (step,) = [s for s in plan_fixes(judge(facts)).steps if s.kind == "hook"]
    assert step.args[:2] == ("--prepend", f"{site_of(prefix)}/nvidia/cudnn/lib")
    assert step.files[0] == str(prefix / "bin" / "activate")
