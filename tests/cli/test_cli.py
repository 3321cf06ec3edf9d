"""The CLI through its entry point: exit codes, stdout as data, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from helpers import change, healthy
from tfdoctor.cli import cli
from tfdoctor.exit_codes import ExitCode
from tfdoctor.facts import Facts

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "report.schema.json").read_text())


def save(tmp_path: Path, facts: Facts, name: str = "facts.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(facts.to_dict()))
    return path


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_facts_round_trip():
    """to_dict/from_dict is the replay format: it must lose nothing."""
    facts = healthy()
    again = Facts.from_dict(json.loads(json.dumps(facts.to_dict())))
    assert again == facts


def test_a_large_package_map_round_trips_and_a_wrong_value_is_still_refused():
    """A pasted pip list of 50,000 packages is copied as a whole map (issue 21: triage's speed), not
    walked name by name: it must round-trip exactly, keep its order, and a value of the wrong type
    anywhere in it is still refused with its path."""
    packages = {f"pkg-{i}": f"1.{i}.0" for i in range(50_000)}
    facts = change(healthy(), python={"packages": packages})
    data = facts.to_dict()
    assert data["python"]["packages"] == packages and data["python"]["packages"] is not packages
    again = Facts.from_dict(json.loads(json.dumps(data)))
    assert again == facts and list(again.python.packages) == list(packages)
    data["python"]["packages"]["pkg-49999"] = 3
    with pytest.raises(ValueError, match=r"python\.packages\.pkg-49999: expected str, got int"):
        Facts.from_dict(data)


def test_replay_healthy_json_matches_schema(tmp_path):
    """--json writes exactly one document that validates against the published schema."""
    result = invoke("replay", str(save(tmp_path, healthy())), "--json")
    assert result.exit_code == ExitCode.OK, result.output
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["verdict"]["status"] == "healthy"
    assert doc["verdict"]["exit_code"] == 0


def test_replay_problem_exit_code_and_root_cause(tmp_path):
    """A broken machine exits 1 and names the root cause first, in JSON and in text."""
    facts = change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""})
    path = save(tmp_path, facts)
    result = invoke("replay", str(path), "--json", "--expect-gpus", "8")
    assert result.exit_code == ExitCode.PROBLEMS
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["verdict"]["root_cause"] == "cuda-visible-devices-hides-all"
    assert doc["findings"][0]["id"] == "cuda-visible-devices-hides-all"
    text = invoke("replay", str(path), "--expect-gpus", "8")
    assert text.exit_code == ExitCode.PROBLEMS
    assert text.stdout.splitlines()[1].startswith(
        "Verdict: 2 problem(s); root cause: cuda-visible-devices-hides-all")
    assert "$ unset CUDA_VISIBLE_DEVICES" in text.stdout


def test_replay_of_json_report_gives_same_findings(tmp_path):
    """A --json report is itself replayable, with the same findings and config."""
    facts = change(healthy(), env={"CUDA_VISIBLE_DEVICES": "0,1"})
    first = json.loads(invoke("replay", str(save(tmp_path, facts)), "--json", "--expect-gpus", "8").stdout)
    report_file = tmp_path / "report.json"
    report_file.write_text(json.dumps(first))
    second = json.loads(invoke("replay", str(report_file), "--json").stdout)
    assert [f["id"] for f in second["findings"]] == [f["id"] for f in first["findings"]]
    assert second["config"]["expect_gpus"] == 8


def test_replay_reads_the_saved_log_with_todays_map(tmp_path):
    """Replay re-reads the TensorFlow log the document holds: a tail line no cause was recorded for
    (an older tfdoctor, or a document written by hand) becomes a finding, and a cause whose line
    maps elsewhere today (cuInit's COMPAT_NOT_SUPPORTED was a driver too old) follows today's map;
    a recipe's error text is read too."""
    from dataclasses import replace

    from tfdoctor.facts_smoke import LogCause, RecipeResult, SmokeFacts

    compat = "failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"
    jit = "tensorflow.python.framework.errors_impl.UnknownError: JIT compilation failed. [Op:FloorMod]"
    old = LogCause("driver-too-old", compat, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE")
    raised = RecipeResult("matmul", "GPU:0", "error", detail="InternalError: No allocator statistics")
    smoke = SmokeFacts(python="/usr/bin/python3", outcome="completed", log_tail=("noise", jit), causes=(old,),
                       recipes=(raised,))
    path = save(tmp_path, replace(healthy(), smoke=smoke))
    doc = json.loads(invoke("replay", str(path), "--json").stdout)
    ids = [f["id"] for f in doc["findings"]]
    assert {"tf-log-jit-compilation-failed", "tf-log-cuda-compat-unsupported",
            "tf-log-allocator-stats-missing"} <= set(ids)
    assert "tf-log-driver-too-old" not in ids
    jsonschema.validate(doc, SCHEMA)


def test_fail_on_warning(tmp_path):
    """--fail-on warning turns a warning-only machine into exit code 1."""
    facts = change(healthy(), xla={"ptxas": None})
    path = str(save(tmp_path, facts))
    assert invoke("replay", path).exit_code == ExitCode.OK
    assert invoke("replay", path, "--fail-on", "warning").exit_code == ExitCode.PROBLEMS


def test_incomplete_exit_code(tmp_path):
    """A probe that timed out, and nothing failed: exit 3, 'could not check', not healthy."""
    from dataclasses import replace

    from tfdoctor.facts import ProbeIssue

    facts = replace(healthy(), probe_issues=(ProbeIssue("driver", "timeout", "timed out"),))
    result = invoke("replay", str(save(tmp_path, facts)), "--json")
    assert result.exit_code == ExitCode.INCOMPLETE
    assert json.loads(result.stdout)["verdict"]["status"] == "incomplete"


def test_fail_on_warning_keeps_could_not_check_apart(tmp_path):
    """A probe that timed out is a warning finding, but still exit 3 with --fail-on warning:
    provisioning drains on 1 and must not drain a node it merely could not check."""
    from dataclasses import replace

    from tfdoctor.facts import ProbeIssue

    facts = replace(healthy(), probe_issues=(ProbeIssue("driver", "timeout", "timed out"),))
    result = invoke("replay", str(save(tmp_path, facts)), "--fail-on", "warning")
    assert result.exit_code == ExitCode.INCOMPLETE


def test_unwritable_outputs_fail_before_probing(tmp_path):
    """--save into a missing directory is a usage error at once, not after the diagnosis."""
    result = invoke("--quick", "--save", str(tmp_path / "nope" / "facts.json"))
    assert result.exit_code == ExitCode.USAGE and "does not exist" in result.stderr
    assert result.stdout == ""


def test_prometheus_failure_prints_no_contradicting_document(tmp_path):
    """A textfile that cannot be written fails the run before any JSON reaches stdout."""
    target = tmp_path / "dir-not-file"
    target.mkdir()
    result = invoke("replay", str(save(tmp_path, healthy())), "--json", "--prometheus-textfile",
                    str(target))
    assert result.exit_code == ExitCode.USAGE and result.stdout == ""


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not a JSON document"),
    ("[1, 2]", "is not a tfdoctor facts or report file"),
    ('{"hello": 1}', "is not a tfdoctor facts or report file"),
    ('{"schema_version": "9", "python": {}}',
     "has schema version 9; this tfdoctor reads versions 1, 2 (upgrade"),
    ('{"schema_version": "1", "python": {"executable": 3}, "tool_version": "x", "collected_at": "y"}',
     "is damaged: facts.python.executable"),
])
def test_bad_input_files(tmp_path, content, message):
    """Corrupt, foreign or newer files: one line on stderr, exit 2, no traceback."""
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = invoke("replay", str(path))
    assert result.exit_code == ExitCode.USAGE
    assert message in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_file_and_bad_flag(tmp_path):
    """A missing file and an unknown option value are usage errors (exit 2)."""
    result = invoke("replay", str(tmp_path / "nope.json"))
    assert result.exit_code == ExitCode.USAGE and "cannot read" in result.stderr
    assert invoke("replay", "x", "--fail-on", "loud").exit_code == ExitCode.USAGE


def test_missing_python_interpreter():
    """--python pointing nowhere is a one-line usage error, before any probing."""
    result = invoke("--python", "/no/such/python", "--quick")
    assert result.exit_code == ExitCode.USAGE
    assert "no such interpreter" in result.stderr


def test_checks_and_explain():
    """`checks` lists every check; `explain` knows checks and findings, and rejects unknown ids."""
    listing = invoke("checks", "--json")
    assert listing.exit_code == 0
    checks = json.loads(listing.stdout)
    assert {"driver-present", "cuda-libraries", "cuda-visible-devices"} <= {c["id"] for c in checks}
    assert "minor-version compatibility" in invoke("explain", "driver-too-old").stdout
    bad = invoke("explain", "no-such-thing")
    assert bad.exit_code == ExitCode.USAGE and "no check or finding" in bad.stderr


def test_every_command_has_help():
    """--help renders for every command (and does not probe anything)."""
    assert invoke("--help").exit_code == 0
    for name in cli.commands:
        result = invoke(name, "--help")
        assert result.exit_code == 0 and result.stdout.strip()


def test_import_hygiene():
    """Importing the CLI pulls in no tensorflow, textual or pynvml: --help and --quick stay fast."""
    code = ("import sys, tfdoctor.cli, tfdoctor.report, tfdoctor.probes; "
            "print([m for m in ('tensorflow','textual','pynvml') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_entry_point_exit_code(tmp_path):
    """The installed console script exits with the documented code (not click's default 1)."""
    facts = change(healthy(), env={"CUDA_VISIBLE_DEVICES": "-1"})
    path = save(tmp_path, facts)
    exe = Path(sys.executable).parent / "tfdoctor"
    proc = subprocess.run([str(exe), "replay", str(path), "--json"], capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == ExitCode.PROBLEMS
    assert json.loads(proc.stdout)["verdict"]["status"] == "problems"


@pytest.mark.slow
def test_full_run_real_tensorflow_cpu(tf_cpu_python):
    """A full run on real tensorflow-cpu: smoke facts in the JSON, schema-valid, healthy, exit 0."""
    exe = Path(sys.executable).parent / "tfdoctor"
    proc = subprocess.run([str(exe), "--json", "--python", tf_cpu_python, "--only", "matmul,xla"],
                          capture_output=True, text=True, timeout=300)
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    smoke = doc["facts"]["smoke"]
    assert smoke["outcome"] == "completed" and smoke["tf_version"] == "2.21.0"
    ran = {r["name"]: r["status"] for r in smoke["recipes"]}
    assert ran["matmul"] == "passed" and ran["xla"] == "passed"
    assert doc["verdict"]["status"] == "healthy" and proc.returncode == ExitCode.OK


def test_unknown_recipe_is_usage_error():
    """--only with a recipe that does not exist names the known ones and exits 2."""
    result = invoke("--only", "matmul,warp-drive", "--json")
    assert result.exit_code == ExitCode.USAGE
    assert "warp-drive" in result.output and "matmul" in result.output


@pytest.mark.slow
def test_real_tf_and_cuda_without_driver(tf_cuda_python):
    """Real tensorflow[and-cuda] 2.21, no driver: real library versions, driver named as root cause."""
    exe = Path(sys.executable).parent / "tfdoctor"
    proc = subprocess.run([str(exe), "--quick", "--json", "--python", tf_cuda_python],
                          capture_output=True, text=True, timeout=120)
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert proc.returncode == ExitCode.PROBLEMS
    assert doc["verdict"]["root_cause"] == "driver-not-installed"
    libs = {lib["name"]: lib for lib in doc["facts"]["libraries"]}
    cudnn = libs["cudnn"]
    assert cudnn["version_source"] == "library" and cudnn["version"].startswith("9.")
    assert "/site-packages/nvidia/cudnn/lib/libcudnn.so.9" in cudnn["path"]
    assert libs["cudart"]["version"].startswith("12.") and libs["cudart"]["found_via"] == "runpath"
    # TF 2.21's libtensorflow_framework.so.2 RUNPATH lacks nvidia/cusolver/lib: a real TF bug.
    assert libs["cusolver"]["path"] is None and libs["cusolver"]["other_copies"]
    missing = [f for f in doc["findings"] if f["id"] == "cuda-library-missing"
               and f["evidence"]["library.soname"] == "libcusolver.so.11"]
    assert missing and missing[0]["severity"] == "error"
    assert missing[0]["remediation"]["fix_id"] == "activation-hook-ld-library-path"


def test_stopped_smoke_run_is_incomplete(tmp_path):
    """Smoke work stopped by the user leaves a partial verdict: exit 3, never 'healthy'."""
    from dataclasses import replace

    from tfdoctor.facts import SmokeFacts

    facts = replace(healthy(), smoke=SmokeFacts(python="/venv/bin/python", outcome="cancelled"))
    result = invoke("replay", str(save(tmp_path, facts)), "--json")
    assert json.loads(result.stdout)["verdict"]["status"] == "incomplete"
    assert result.exit_code == ExitCode.INCOMPLETE


def test_main_options_before_a_subcommand_go_to_it():
    """`tfdoctor --python P fix` used to fix tfdoctor's own interpreter: now it means
    `tfdoctor fix --python P`; an option the command does not take is a usage error."""
    before = invoke("--python", "/usr/bin/python3", "fix", "--json")
    after = invoke("fix", "--python", "/usr/bin/python3", "--json")
    assert before.exit_code == after.exit_code == ExitCode.OK, before.output
    assert json.loads(before.stdout)["plan"]["python"] == "/usr/bin/python3"
    assert json.loads(before.stdout)["plan"] == json.loads(after.stdout)["plan"]
    refused = invoke("--quick", "fix")
    assert refused.exit_code == ExitCode.USAGE
    assert "--quick does not apply to `tfdoctor fix`" in refused.output


def test_no_tf_on_a_cpu_machine_offers_the_cpu_build_for_this_python(tmp_path):
    """No TensorFlow, no GPU: the fix installs the CPU build of the newest release that supports
    this Python (not the GPU build, not a release pip cannot install here)."""
    from tfdoctor.facts import DriverFacts

    facts = change(healthy(), tensorflow=None, libraries=(), xla=None, driver=DriverFacts(
        nvml_error="NVML_ERROR_LIBRARY_NOT_FOUND"), python={"version": "3.9.18"})
    doc = json.loads(invoke("replay", str(save(tmp_path, facts)), "--json").stdout)
    fix = next(f for f in doc["findings"] if f["id"] == "tf-not-installed")["remediation"]
    assert fix["fix_id"] == "install-matching-tensorflow"
    assert fix["commands"][-1].endswith("install 'tensorflow-cpu==2.20.*'")  # 2.21 dropped 3.9


@pytest.mark.slow
def test_real_cuda13_ptxas_on_path_is_flagged(tf_cuda_python):
    """This machine's real CUDA 13.0 ptxas first on PATH, under a TF built with CUDA 12.5: XLA
    would use it (it prefers PATH), so tfdoctor warns and offers the wheel's ptxas instead."""
    exe = Path(sys.executable).parent / "tfdoctor"
    env = {**os.environ, "PATH": "/usr/local/cuda-13.0/bin:/usr/bin:/bin"}
    proc = subprocess.run([str(exe), "--quick", "--json", "--python", tf_cuda_python],
                          capture_output=True, text=True, timeout=120, env=env)
    doc = json.loads(proc.stdout)
    found = next(f for f in doc["findings"] if f["id"] == "xla-ptxas-other-cuda")
    assert found["evidence"]["xla.ptxas_version"].startswith("13.")
    fixed_dir = found["remediation"]["commands"][0].split("=", 1)[1].split('"')[0]
    assert Path(fixed_dir, "ptxas").exists(), fixed_dir  # the wheel's ptxas really is there
