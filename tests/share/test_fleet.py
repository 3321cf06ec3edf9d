"""`tfdoctor fleet`: stacks, odd ones out, failing and slow nodes; junk files never fatal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from share_helpers import change, healthy, invoke, report_doc, with_smoke, write_json
from tfdoctor.share.fleet import load_node, summarise
from tfdoctor.share.stats import low_outliers


def make_fleet(root: Path, n: int = 12) -> Path:
    """n healthy 8-GPU nodes with smoke figures, one on an old driver, one broken, one slow,
    plus junk: a corrupt file, a foreign JSON, a list, and a report from a newer schema."""
    base = report_doc(with_smoke(healthy(), tflops=64.0))
    for i in range(n):
        tflops = 64.0 + (i % 3) * 0.5
        doc = (
            base
            if i not in (3, 7)
            else report_doc(with_smoke(healthy(), tflops=tflops, slow_gpu=5 if i == 7 else None))
        )
        write_json(root / "rack1" / f"node{i:02d}.json", doc)
    write_json(root / "rack2" / "old.json", report_doc(with_smoke(healthy(driver="570.86.15"))))
    broken = change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""})
    write_json(root / "rack2" / "broken.json", report_doc(with_smoke(broken), expect_gpus=8))
    (root / "rack2" / "corrupt.json").write_text('{"schema_version": "1", "facts": {')
    write_json(root / "rack2" / "package.json", {"name": "left-pad", "version": "1.3.0"})
    write_json(root / "rack2" / "list.json", [1, 2, 3])
    newer = report_doc(healthy(gpus=1))
    newer["schema_version"] = newer["facts"]["schema_version"] = "3"
    write_json(root / "rack2" / "newer.json", newer)
    return root


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory):
    return make_fleet(tmp_path_factory.mktemp("fleet"))


def test_fleet_json_groups_flags_and_skips(fleet_dir):
    """One document: majority stack, the old-driver node odd, the broken one failing, the node
    with a half-speed GPU slow, and each junk file skipped with its reason (exit 1)."""
    result = invoke("fleet", str(fleet_dir), "--json")
    assert result.exit_code == 1, result.output
    s = json.loads(result.stdout)
    assert s["nodes"] == 14 and s["counts"] == {"healthy": 13, "problems": 1}
    majority = s["stacks"][0]
    assert majority["majority"] and majority["nodes"] == 13
    assert (
        majority["fingerprint"]["driver"] == "580.65.06"
        and majority["fingerprint"]["gpu_count"] == "8"
    )
    odd = {o["node"].split("/")[-1]: o for o in s["odd_ones_out"]}
    assert list(odd) == ["old.json"] and odd["old.json"]["differs"] == {
        "driver": ["570.86.15", "580.65.06"]
    }
    assert [f["root_cause"] for f in s["failing"]] == ["cuda-visible-devices-hides-all"]
    slow = [(o["node"].split("/")[-1], o["metric"]) for o in s["outliers"]]
    assert slow == [("node07.json", "float32_tflops")]
    reasons = {Path(k["path"]).name: k["reason"] for k in s["skipped"]}
    assert set(reasons) == {"corrupt.json", "package.json", "list.json", "newer.json"}
    assert "not a JSON document" in reasons["corrupt.json"]
    assert "schema version 3" in reasons["newer.json"] and "reads 1" in reasons["newer.json"]


def test_fleet_text_names_the_same_nodes(fleet_dir):
    """The text view carries the headline and the same odd, failing and slow nodes."""
    result = invoke("fleet", str(fleet_dir))
    assert result.exit_code == 1
    out = result.stdout
    assert out.startswith("Fleet: 14 node(s) in 2 stack(s); 13 healthy, 1 with problems")
    assert "differs in: driver 570.86.15 vs 580.65.06" in out
    assert "broken.json  root cause: cuda-visible-devices-hides-all" in out
    assert (
        "node07.json  float32_tflops 32.25 vs median 64 (-50 %, z -11.17; 14 nodes with 8 x" in out
    )
    assert "Skipped files (4):" in out


def test_fleet_all_healthy_exits_0_and_junk_alone_exits_3(tmp_path):
    """Exit codes for scripts: 0 all healthy; 3 when nothing readable; 2 when no files at all."""
    for i in range(3):
        write_json(tmp_path / "ok" / f"n{i}.json", report_doc(healthy(gpus=2)))
    assert invoke("fleet", str(tmp_path / "ok")).exit_code == 0
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "x.json").write_text("not json")
    junk = invoke("fleet", str(tmp_path / "junk"), "--json")
    assert junk.exit_code == 3 and json.loads(junk.stdout)["skipped"][0]["path"].endswith("x.json")
    (tmp_path / "empty").mkdir()
    empty = invoke("fleet", str(tmp_path / "empty"))
    assert empty.exit_code == 2 and "no report files" in empty.stderr
    missing = invoke("fleet", str(tmp_path / "ok"), str(tmp_path / "nope.json"), "--json")
    assert missing.exit_code == 3 and "no such file" in missing.stdout


def test_bare_facts_files_are_judged(tmp_path):
    """A `--save` facts file has no verdict: the fleet view judges it with today's rules."""
    broken = change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""})
    node = load_node(write_json(tmp_path / "f.json", broken.to_dict()))
    assert node.status == "problems" and node.root_cause == "cuda-visible-devices-hides-all"


def test_bus_bandwidth_outlier_among_same_gpu_count(tmp_path):
    """busbw is compared among nodes with the same GPU model and count only."""
    docs = [
        report_doc(with_smoke(healthy(), tflops=64.0, busbw=b)) for b in (300, 305, 298, 302, 120)
    ]
    docs += [report_doc(with_smoke(healthy(gpus=2), tflops=64.0, busbw=50.0)) for _ in range(3)]
    nodes = [load_node(write_json(tmp_path / f"n{i}.json", d)) for i, d in enumerate(docs)]
    s = summarise(nodes)
    assert [(Path(o["node"]).name, o["metric"]) for o in s["outliers"]] == [
        ("n4.json", "busbw_gbs")
    ]
    assert s["outliers"][0]["class"] == "8 x NVIDIA H100 80GB HBM3"


def test_mad_needs_peers_and_a_real_drop():
    """Too few peers, or a tiny spread in an even fleet, flags nothing; MAD 0 still works."""
    assert low_outliers({"a": 1.0, "b": 1.0, "c": 0.1}) == []
    even = {f"n{i}": 100.0 + i * 0.01 for i in range(20)} | {"low": 97.0}
    assert low_outliers(even) == []
    flat = {f"n{i}": 100.0 for i in range(10)} | {"low": 60.0}
    assert [o.name for o in low_outliers(flat)] == ["low"]
