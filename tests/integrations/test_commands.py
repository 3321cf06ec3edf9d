"""`tfdoctor integrations` and the shell-completion callbacks, through click's own machinery."""

from __future__ import annotations

import os
import subprocess

import click
import pytest
from click.shell_completion import ShellComplete
from click.testing import CliRunner
from programs import TFDOCTOR
from tfdoctor.completion import complete_ids, complete_recipes
from tfdoctor.integrations_cmd import integrations


def test_path_names_every_recipe_and_refuses_an_unknown_one():
    """`path` prints existing directories and both schemas (the cluster one could not be named);
    an unknown name is a one-line usage error (exit 2)."""
    from tfdoctor.cli import DoctorGroup

    group = DoctorGroup("tfdoctor", commands={"integrations": integrations})
    runner = CliRunner()
    for name in ("slurm", "kubernetes", "prometheus", "provisioning", "schema", "cluster-schema"):
        out = runner.invoke(group, ["integrations", "path", name])
        assert out.exit_code == 0 and out.output.strip()
    schema = runner.invoke(group, ["integrations", "path", "cluster-schema"]).output.strip()
    assert schema.endswith("cluster.schema.json") and os.path.isfile(schema)
    bad = runner.invoke(group, ["integrations", "path", "nomad"])
    known = "known: cluster, kubernetes, prometheus, provisioning, slurm, schema, cluster-schema"
    assert bad.exit_code == 2 and known in bad.output


def completions(params, args, incomplete):
    cmd = click.Command("t", params=params)
    return [c.value for c in ShellComplete(cmd, {}, "t", "_T_COMPLETE").get_completions(args, incomplete)]


def test_ids_and_recipes_complete():
    """Check and finding ids complete by prefix; --only completes after the last comma and does
    not offer a recipe twice."""
    ids = completions([click.Argument(["id"], shell_complete=complete_ids)], [], "driver-")
    assert "driver-present" in ids and "driver-not-installed" in ids
    only = [click.Option(["--only"], shell_complete=complete_recipes)]
    assert completions(only, ["--only"], "mat") == ["matmul"]
    assert "matmul,xla" in completions(only, ["--only"], "matmul,")
    assert "matmul,matmul" not in completions(only, ["--only"], "matmul,")


def fish_completes(line: str, tmp_path) -> list[str]:
    """What the real fish offers for `line` with tfdoctor's own completion script sourced
    (`_TFDOCTOR_COMPLETE=fish_source tfdoctor`, as docs/integrations.md says to install it)."""
    from programs import program

    fish = program("fish")
    bin_dir = os.path.dirname(TFDOCTOR)
    run = subprocess.run(
        [fish, "--no-config", "-c",
         "_TFDOCTOR_COMPLETE=fish_source tfdoctor | source; complete -C $argv[1]", line],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "LC_ALL": "C.UTF-8"},
        capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return [entry.split("\t")[0] for entry in run.stdout.splitlines()]


def test_fish_completes_after_a_comma(tmp_path):
    """In fish, `--only matmul,x<TAB>` offers `matmul,xla`: click's own fish script split each
    completion on every comma and offered nothing."""
    assert fish_completes("tfdoctor --only matmul,x", tmp_path) == ["matmul,xla"]
    assert fish_completes("tfdoctor --only mat", tmp_path) == ["matmul"]
    assert "driver-present" in fish_completes("tfdoctor explain driver-pr", tmp_path)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_internal_slurm_task_launcher_is_not_offered(shell, tmp_path):
    """`tfdoctor cluster --launcher <TAB>` offers the three public launchers in every shell
    click completes (its completion protocol, as each shell's script calls it), never slurm-task,
    which only `--launcher slurm` runs through srun; --help does not list it either."""
    words = "tfdoctor cluster --launcher "
    env = {**os.environ, "_TFDOCTOR_COMPLETE": f"{shell}_complete", "COMP_WORDS": words,
           "COMP_CWORD": "" if shell == "fish" else "3"}
    run = subprocess.run([TFDOCTOR], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    offered = set(run.stdout.replace(",", "\n").split())  # bash/fish: "plain,X"; zsh: one per line
    assert {"local", "tf-config", "slurm"} <= offered, run.stdout
    assert "slurm-task" not in run.stdout
    if shell == "fish":
        assert fish_completes(words, tmp_path) == ["local", "slurm", "tf-config"]
    shown = subprocess.run([TFDOCTOR, "cluster", "--help"], capture_output=True, text=True, timeout=60)
    assert "--launcher [local|tf-config|slurm]" in shown.stdout and "slurm-task" not in shown.stdout
