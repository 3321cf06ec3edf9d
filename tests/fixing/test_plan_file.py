"""`fix --plan FILE` through the real entry point: a plan runs exactly what it shows, and any
malformed plan is one line and exit code 2 (issue 21: an `--index-url` added to a step's args
ran unseen while its `commands` were shown; a plan nested 100,000 deep exited 70).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixing_venvs import tfdoctor, tree_hash
from tfdoctor.fixing.model import FixPlan, FixStep
from tfdoctor.fixing.planner import HOOK, hook_files, shown_commands


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real venv (no pip: nothing in these tests may get as far as running it)."""
    prefix = tmp_path_factory.mktemp("plan") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    return prefix


def good_plan(env: Path) -> dict[str, Any]:
    """A plan as --plan-out writes it: a pip step and a hook step, commands derived from args."""
    python = str(env / "bin" / "python")
    pip_args = ("--remove", "tensorflow-gpu", "protobuf<8,>=6.31.1")
    activate = str(env / "bin" / "activate")
    hook_args = ("--remove", "/usr/local/cuda/lib64/stubs", "venv", activate)
    steps = (
        FixStep("pin-python-packages", "pip", "Pin packages.", ("package-out-of-range",),
                shown_commands("pip", pip_args, python), pip_args, removes=("tensorflow-gpu",)),
        FixStep(HOOK, "hook", "Hook.", ("libcuda-stub",), shown_commands("hook", hook_args, ""),
                hook_args, files=hook_files("venv", activate)))
    return FixPlan(python, str(env), "venv", socket.gethostname(), "2026-11-27T00:00:00+00:00",
                   ("package-out-of-range", "libcuda-stub"), steps).to_dict()


def run_plan(env: Path, tmp_path: Path, content: str | bytes, *extra: str
             ) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "plan.json"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return tfdoctor("fix", "--plan", str(path), *extra, timeout=120)


def one_line_usage_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tfdoctor: error:"), done.stderr[-2000:]
    assert "Traceback" not in done.stderr and done.stdout == ""
    return lines[0]


def test_a_plan_as_saved_is_shown_as_it_will_run(env: Path, tmp_path: Path):
    """The control: the untouched plan loads and its dry run shows the derived commands."""
    done = run_plan(env, tmp_path, json.dumps(good_plan(env)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "-m pip uninstall -y tensorflow-gpu" in done.stdout
    assert "-m pip install 'protobuf<8,>=6.31.1'" in done.stdout


@pytest.mark.parametrize("change", ["args", "commands", "removes", "files"])
def test_a_step_that_would_run_what_it_does_not_show_is_refused(env: Path, tmp_path: Path,
                                                                change: str):
    """The issue's case (an `--index-url` in args, not in commands) and its relatives: shown
    commands, removed distributions and written files must all follow from what runs; the
    apply is refused before anything runs, and the venv is untouched."""
    plan = good_plan(env)
    pip_step, hook_step = plan["steps"]
    if change == "args":
        pip_step["args"] = [*pip_step["args"], "--index-url", "http://127.0.0.1:9/simple"]
    elif change == "commands":
        pip_step["commands"] = [f"{env}/bin/python -m pip install 'protobuf<8,>=6.31.1'"]
    elif change == "removes":
        pip_step["removes"] = []
    else:
        hook_step["files"] = hook_step["files"][:1]
    before = tree_hash(env)
    line = one_line_usage_error(run_plan(env, tmp_path, json.dumps(plan), "--apply", "--yes"))
    assert "is not a usable fix plan" in line, line
    if change == "args":
        assert "would run" in line and "--index-url http://127.0.0.1:9/simple" in line, line
    assert tree_hash(env) == before


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


MALFORMED: dict[str, Any] = {
    "not JSON": "{\"plan_version\": 1,",
    "not UTF-8": b"\xff\xfe{\x00}",
    "nested 100,000 deep": nested(100_000),
    "a list": [],
    "steps a string": {"steps": "pin-python-packages"},
    "python a number": {"python": 5},
    "prefix missing": {"prefix": None},
    "args a string": {"step": {"args": "protobuf<8"}},
    "needs_root a string": {"step": {"needs_root": "no"}},
    "kind missing": {"step": {"kind": None}},
    "kind unknown": {"step": {"kind": "shell"}},
    "fix id a path": {"step": {"fix_id": "../../../bin/sh"}},
    "NUL in args": {"step": {"args": ["protobuf\x00"]}},
    "version true": {"plan_version": True},
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_plan_is_one_line_and_exit_2(env: Path, tmp_path: Path, case: str):
    """Wrong types, missing keys, deep nesting, bytes that are not JSON: exit 2 with one line,
    never 70 or a traceback."""
    spec = MALFORMED[case]
    if isinstance(spec, dict):
        plan = good_plan(env)
        for key, value in spec.items():
            target = plan["steps"][0] if key == "step" else plan
            for k, v in (value.items() if key == "step" else [(key, value)]):
                if v is None:
                    target.pop(k)
                else:
                    target[k] = v
        content: str | bytes = json.dumps(plan)
    else:
        content = spec if isinstance(spec, (str, bytes)) else json.dumps(spec)
    one_line_usage_error(run_plan(env, tmp_path, content, "--apply", "--yes"))


def test_a_huge_plan_is_refused_before_it_is_parsed(env: Path, tmp_path: Path):
    """64 MiB of whitespace around a valid plan: refused by its size, in one line."""
    path = tmp_path / "plan.json"
    with open(path, "w") as f:
        f.write(json.dumps(good_plan(env)))
        f.truncate(64 << 20)  # a sparse tail: NULs, never read past the first MiB
    line = one_line_usage_error(tfdoctor("fix", "--plan", str(path), timeout=120))
    assert "MiB" in line, line


def test_a_plan_whose_prefix_is_not_its_interpreters_is_refused(env: Path, tmp_path: Path):
    """The lock and the backups follow the plan's prefix: it must be the interpreter's own."""
    plan = good_plan(env)
    plan["prefix"] = str(tmp_path)
    line = one_line_usage_error(run_plan(env, tmp_path, json.dumps(plan)))
    assert "make the plan again" in line, line
