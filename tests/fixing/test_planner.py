"""The planner on recorded-style facts: right script, right arguments, root never automatic."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

from click.testing import CliRunner
from helpers import change, healthy, judge
from tfdoctor.facts import Distribution
from tfdoctor.fixing.apply import apply_plan
from tfdoctor.fixing.commands import fix
from tfdoctor.fixing.model import FixPlan, FixStep
from tfdoctor.fixing.planner import plan_fixes


def test_conflict_keeps_tensorflow_on_a_gpu_machine():
    """tensorflow + tensorflow-cpu on a GPU node: remove the CPU build, make tensorflow whole."""
    facts = healthy()
    tf = facts.tensorflow
    facts = change(facts, tensorflow={"distributions": (
        Distribution("tensorflow-cpu", "2.21.0"), Distribution("tensorflow", "2.21.0"))})
    step = next(s for s in plan_fixes(judge(facts)).steps if s.fix_id == "remove-conflicting-tf")
    assert tf is not None
    assert step.args == ("--remove", "tensorflow-cpu", "--force-reinstall", "--no-deps",
                         "tensorflow==2.21.0")
    assert step.commands == ("/venv/bin/python -m pip uninstall -y tensorflow-cpu",
                             "/venv/bin/python -m pip install --force-reinstall --no-deps "
                             "tensorflow==2.21.0")


def test_two_pins_merge_into_one_pip_command():
    """numpy and protobuf both out of range: one pip install resolves them together."""
    facts = change(healthy(), python={"packages": {
        "tensorflow": "2.21.0", "numpy": "1.21.0", "protobuf": "4.25.9", "keras": "3.12.0"}})
    steps = [s for s in plan_fixes(judge(facts)).steps if s.fix_id == "pin-python-packages"]
    assert len(steps) == 1
    assert steps[0].args == ("numpy>=1.26.0", "protobuf<8.0.0,>=6.31.1")


def legacy_keras(dist: str, **packages: str):
    """TF_USE_LEGACY_KERAS=1 without tf-keras, TensorFlow installed as distribution `dist`."""
    facts = healthy()
    return change(facts, env={**facts.env, "TF_USE_LEGACY_KERAS": "1"},
                  tensorflow={"distributions": (Distribution(dist, "2.21.0"),)},
                  python={"packages": {**facts.python.packages, **packages}})


def test_tf_keras_beside_tensorflow_cpu_is_installed_without_dependencies():
    """tf-keras requires `tensorflow`; tensorflow-cpu provides the same import package, so the
    fix installs tf-keras alone (--no-deps) instead of pulling the full tensorflow in beside it;
    a protobuf pin in the same run stays a step of its own, with its dependencies."""
    report = judge(legacy_keras("tensorflow-cpu", protobuf="5.29.5"))
    finding = next(f for f in report.findings if f.id == "tf-keras-missing")
    assert finding.remediation is not None
    assert finding.remediation.commands == (
        "/venv/bin/python -m pip install --no-deps 'tf-keras~=2.21.0'",)
    steps = [s for s in plan_fixes(report).steps if s.fix_id == "pin-python-packages"]
    assert sorted((s.findings, s.args) for s in steps) == [
        (("package-out-of-range",), ("protobuf<8.0.0,>=6.31.1",)),
        (("tf-keras-missing",), ("--no-deps", "tf-keras~=2.21.0"))], steps


def test_tf_keras_beside_tensorflow_keeps_its_dependencies():
    """With the `tensorflow` distribution itself, tf-keras's requirement is met: a plain install."""
    report = judge(legacy_keras("tensorflow"))
    step = next(s for s in plan_fixes(report).steps if s.fix_id == "pin-python-packages")
    assert step.args == ("tf-keras~=2.21.0",)


def test_root_fixes_are_printed_not_run():
    """A driver mismatch needs a reboot: a manual step, never automatic, even with --apply."""
    facts = change(healthy(), driver={"nvml_error": "NVML_ERROR_LIB_RM_VERSION_MISMATCH"})
    step = next(s for s in plan_fixes(judge(facts)).steps
                if s.fix_id == "reboot-after-driver-upgrade")
    assert step.kind == "manual" and step.needs_root and not step.runnable
    assert step.commands == ("sudo reboot",)


def root_plan(tmp_path) -> tuple[FixPlan, object]:
    marker = tmp_path / "ran-as-root"
    step = FixStep("add-user-to-video-group", "manual", "s", ("driver-permission-denied",),
                   (f"touch {marker}",), needs_root=True, runnable=True, reversible=False)
    return FixPlan(str(tmp_path / "python"), str(tmp_path), "venv", "h", "t", (), (step,)), marker


def test_root_step_needs_allow_root_and_a_confirmation(tmp_path):
    """Root commands run only with allow_root and a yes to the root question."""
    plan, marker = root_plan(tmp_path)
    assert apply_plan(plan, lambda s: True, lambda s: True).steps[0].status == "printed"
    assert not marker.exists()
    assert apply_plan(plan, lambda s: True, lambda s: False,
                      allow_root=True).steps[0].status == "declined"
    assert not marker.exists()
    done = apply_plan(plan, lambda s: True, lambda s: True, allow_root=True)
    assert done.steps[0].status == "done"
    assert marker.exists()


def test_yes_does_not_answer_root_questions(tmp_path):
    """--yes covers scripts only: the root command is shown and a person must answer."""
    plan, marker = root_plan(tmp_path)
    env = tmp_path / "venv"  # a saved plan must name its interpreter's own environment
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    data = {**plan.to_dict(), "host": socket.gethostname(), "python": str(env / "bin" / "python"),
            "prefix": str(env)}
    saved = tmp_path / "plan.json"
    saved.write_text(json.dumps(data))
    result = CliRunner().invoke(fix, ["--plan", str(saved), "--apply", "--yes", "--allow-root"],
                                input="n\n")
    assert result.exit_code in (0, 1), result.output
    assert f"$ touch {marker}" in result.stderr
    assert "Run add-user-to-video-group as root?" in result.stderr
    assert "add-user-to-video-group: declined" in result.stdout
    assert not marker.exists()


def test_env_fixes_for_a_system_python_are_printed():
    """A Python outside any venv/conda has no activation script: export lines for the person."""
    facts = change(healthy(), env={"CUDA_VISIBLE_DEVICES": "-1"},
                   python={"is_venv": False, "is_conda": False})
    steps = plan_fixes(judge(facts)).steps
    assert [(s.fix_id, s.kind) for s in steps] == [("unset-cuda-visible-devices", "manual")]
    assert steps[0].commands == ("unset CUDA_VISIBLE_DEVICES",)


def test_undo_hint_is_the_exact_command() -> None:
    """The hint printed after an apply undoes that target: --python (quoted) unless it is
    tfdoctor's own interpreter (issue 12, point 5)."""
    import sys

    from tfdoctor.fixing.render import undo_command

    assert undo_command(sys.executable) == "tfdoctor fix --undo"
    want = "tfdoctor fix --undo --python '/home/me/my env/bin/python'"
    assert undo_command("/home/me/my env/bin/python") == want


def test_the_planner_runs_the_commands_argv_and_never_parses_a_shown_string():
    """A pip fix travels as a Command (its shown line and its argv); the planner takes the argv.
    A requirement with shell characters comes through exactly; a remediation whose commands are
    only text (nothing says what they run) stays a manual step, not a guess from the string."""
    from dataclasses import replace

    from tfdoctor.findings import Command, Finding, Remediation, Severity
    from tfdoctor.report import Report

    facts = healthy()
    python = facts.python.executable
    odd = "numpy>=1.26.0; python_version >= '3.9'"
    typed = Remediation("pin-python-packages", (Command([python, "-m", "pip", "install", odd]),))
    shown = "'numpy>=1.26.0; python_version >= '\"'\"'3.9'\"'\"''"  # shlex's quoting
    assert typed.commands[0] == f"{python} -m pip install {shown}"
    text = Remediation("pin-python-packages", (f"{python} -m pip install protobuf==5.29.0",))
    base = judge(facts)

    def plan_for(remediation: Remediation) -> FixStep:
        finding = Finding("package-out-of-range", Severity.ERROR, "x", remediation=remediation)
        report = Report(base.facts, base.config, base.outcomes, (finding,))
        return next(s for s in plan_fixes(report).steps if s.fix_id == "pin-python-packages")

    assert plan_for(typed).args == (odd,) and plan_for(typed).automatic
    assert not plan_for(text).automatic and not plan_for(text).args
    assert replace(typed).commands[0].argv[-1] == odd  # a copied record keeps its argv
