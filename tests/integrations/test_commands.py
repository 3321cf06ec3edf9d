"""`tfdoctor integrations` and the shell-completion callbacks, through click's own machinery."""

from __future__ import annotations

import click
from click.shell_completion import ShellComplete
from click.testing import CliRunner
from tfdoctor.completion import complete_ids, complete_recipes
from tfdoctor.integrations_cmd import integrations


def test_path_names_every_recipe_and_refuses_an_unknown_one():
    """`path` prints existing directories; an unknown name is a one-line usage error (exit 2)."""
    from tfdoctor.cli import DoctorGroup

    group = DoctorGroup("tfdoctor", commands={"integrations": integrations})
    runner = CliRunner()
    for name in ("slurm", "kubernetes", "prometheus", "provisioning", "schema"):
        out = runner.invoke(group, ["integrations", "path", name])
        assert out.exit_code == 0 and out.output.strip()
    bad = runner.invoke(group, ["integrations", "path", "nomad"])
    known = "known: cluster, kubernetes, prometheus, provisioning, slurm, schema"
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
