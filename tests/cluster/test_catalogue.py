"""The cluster finding ids are one catalogue: what the cluster code can emit, what `tfdoctor
checks` lists, what `tfdoctor explain` knows, and what the docs say."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import tfdoctor.cluster as cluster_pkg
from click.testing import CliRunner
from tfdoctor.cli import cli
from tfdoctor.cluster import judge as judge_module
from tfdoctor.cluster import topology
from tfdoctor.cluster.catalogue import CLUSTER_CHECKS, FINDINGS
from tfdoctor.completion import complete_ids
from tfdoctor.exit_codes import ExitCode

CLUSTER_DOC = Path(__file__).resolve().parents[2] / "docs" / "cluster.md"


def emitted_ids() -> dict[str, str]:
    """Finding id -> module, for every `_finding("id", ...)` call in the cluster package: the
    only way the cluster code builds a finding, read from its source, not from the catalogue."""
    found: dict[str, str] = {}
    for path in sorted(Path(cluster_pkg.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_finding":
                first = node.args[0] if node.args else None
                assert isinstance(first, ast.Constant) and isinstance(first.value, str), (
                    f"{path.name}:{node.lineno}: a finding id must be a literal (the catalogue test reads it)"
                )
                found[first.value] = path.name
    return found


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_every_emitted_id_is_in_the_catalogue_and_every_row_is_emitted():
    """Adding a cluster finding without a catalogue row (or leaving a dead row) fails here."""
    emitted = emitted_ids()
    assert len(emitted) >= 20  # the scan really sees judge.py and topology.py
    assert set(emitted) - set(FINDINGS) == set(), "add these to tfdoctor/cluster/catalogue.py"
    assert set(FINDINGS) - set(emitted) == set(), "catalogue rows no cluster code emits"
    assert set(judge_module.ROOTS) | set(judge_module.CONSEQUENCES) <= set(FINDINGS)


def test_an_id_without_a_row_cannot_be_emitted():
    """The rules take severity and hint from the catalogue: an unknown id is a KeyError at once."""
    with pytest.raises(KeyError):
        judge_module._finding("cluster-not-in-the-catalogue", "message")
    with pytest.raises(KeyError):
        topology._finding("node-not-in-the-catalogue", "message")
    made = judge_module._finding("cluster-straggler", "worker:1 is slow", ratio=2)
    assert made.severity is FINDINGS["cluster-straggler"].severity
    assert made.hint == FINDINGS["cluster-straggler"].hint and made.check == "cluster"


def test_ids_are_kebab_case_unique_and_apart_from_the_single_node_ones():
    """One meaning per id across both catalogues: `explain` must not have to pick."""
    from tfdoctor.checks import all_checks

    single = {s.id for s in all_checks()} | {f for s in all_checks() for f in s.finding_ids}
    ids = [c.id for c in CLUSTER_CHECKS] + [f for c in CLUSTER_CHECKS for f in c.finding_ids]
    assert len(ids) == len(set(ids)) and not set(ids) & single
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids)


def test_checks_lists_the_cluster_ids():
    """`tfdoctor checks` shows the cluster groups; `--json` lists every cluster finding id."""
    text = invoke("checks")
    assert text.exit_code == 0
    rows = {line.split()[0]: line for line in text.stdout.splitlines()}
    assert {"cluster", "cluster-node", "driver-present"} <= set(rows)
    listed = json.loads(invoke("checks", "--json").stdout)
    by_id = {c["id"]: c for c in listed}
    assert by_id["cluster"]["area"] == "cluster"
    assert {f for c in CLUSTER_CHECKS for f in by_id[c.id]["findings"]} == set(emitted_ids())


@pytest.mark.parametrize("fid", sorted(FINDINGS))
def test_explain_prints_each_cluster_finding(fid):
    """`tfdoctor explain ID` for a cluster id: its severity, when it fires and what to do."""
    result = invoke("explain", fid)
    assert result.exit_code == 0, result.stderr
    flat = " ".join(result.stdout.split())
    spec = FINDINGS[fid]
    assert f"{fid} ({spec.severity.value}): {spec.when}" in flat
    assert f"Hint: {spec.hint}" in flat


def test_explain_a_cluster_group_and_an_unknown_id():
    """The group id explains the group; an unknown id is still a one-line usage error."""
    result = invoke("explain", "cluster-node")
    assert result.exit_code == 0 and "node-nvlink-down" in result.stdout
    bad = CliRunner().invoke(cli, ["explain", "cluster-nope"])
    assert bad.exit_code == ExitCode.USAGE and "no check or finding" in bad.stderr


def test_completion_offers_cluster_ids():
    """Shell completion of `tfdoctor explain cluster-st` knows the cluster ids."""
    import click

    ctx = click.Context(cli)
    got = {c.value for c in complete_ids(ctx, cli.commands["explain"].params[0], "cluster-st")}
    assert got == {"cluster-stack-differs", "cluster-straggler"}


def test_cluster_doc_table_matches_the_catalogue():
    """docs/cluster.md's findings table: the same ids and severities as the catalogue."""
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| (error|warning|info) \|", CLUSTER_DOC.read_text(), re.M)
    assert dict(rows) == {i: f.severity.value for i, f in FINDINGS.items()}
