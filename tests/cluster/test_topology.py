"""Inside a node: NVLink states and P2P status read through the real NVML child (nvidia-ml-py's
own loader) from the NVML stub with recorded topologies, and the all-reduce busbw judged
against them. No GPU here: the topologies are recorded shapes, not measurements."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from stubs.build import install_stub
from stubs.catalogue import NVML_SONAME, stub
from tfdoctor.cluster.topology import expected_busbw, judge_topology, probe_topology

TOPOLOGIES = Path(__file__).with_name("topologies")


def probe(name: str, tmp_path: Path) -> dict:
    lib = install_stub(stub("nvml.c", NVML_SONAME), tmp_path / "lib")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LD_LIBRARY_PATH": str(lib.parent),
           "TFDOCTOR_FAKE_NVML": str(TOPOLOGIES / name)}
    return probe_topology(env)


def ids(topo: dict, busbw: float | None = None, **env: str) -> list[str]:
    return [f.id for f in judge_topology(topo, env, busbw)]


def test_healthy_hgx_reads_every_link_and_pair(tmp_path):
    """18 active links per GPU and P2P OK for all 56 pairs, through the real NVML calls."""
    topo = probe("hgx-h100-healthy.json", tmp_path)
    assert "error" not in topo, topo
    assert len(topo["nvlink"]) == 8 and all(links == [True] * 18 for links in topo["nvlink"])
    assert topo["p2p"]["read"][0] == [None] + ["ok"] * 7
    assert topo["p2p"]["nvlink"][7][0] == "ok"
    expected, why = expected_busbw(topo)
    assert expected == pytest.approx(18 * 25 * 0.8) and why.startswith("NVLink, 18 active")
    assert ids(topo, busbw=380.0) == []


def test_an_nvlink_node_at_pcie_speed_names_the_link_down(tmp_path):
    """Two links of GPU 3 down: an error of its own, and 40 GB/s busbw on an NVLink node is
    below the topology with the link named as the likely cause."""
    topo = probe("hgx-h100-link-down.json", tmp_path)
    assert topo["nvlink"][3] == [True] * 16 + [False, False]
    findings = list(judge_topology(topo, {}, 40.0, where="worker:0"))
    assert [f.id for f in findings] == ["node-nvlink-down", "node-allreduce-below-topology"]
    assert "GPU 3 (2 of 18)" in findings[0].message
    assert "an NVLink link down" in (findings[1].hint or "")


@pytest.mark.parametrize("name", sorted(p.name for p in TOPOLOGIES.glob("*.json")))
def test_probed_topologies_match_the_cluster_schema(name, tmp_path):
    """What the real NVML child reads from each recorded topology is a `topology[]` entry of
    docs/cluster.schema.json (the recorded documents here have only the no-NVML error form)."""
    import json

    import jsonschema

    schema = json.loads((TOPOLOGIES.parents[2] / "docs" / "cluster.schema.json").read_text())
    one = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/cluster_topology"}
    topo = probe(name, tmp_path)
    assert "error" not in topo, topo
    assert [e.message for e in jsonschema.Draft202012Validator(one).iter_errors(topo)] == []


def test_pcie_node_behind_an_iommu(tmp_path):
    """No NVLink (NOT_SUPPORTED), P2P blocked by the IOH topology: the P2P finding with the
    iommu=pt hint, and the expectation falls back to PCIe gen 4 x16."""
    topo = probe("pcie-l40s-iommu.json", tmp_path)
    assert topo["nvlink"] == [[], [], [], []]
    expected, why = expected_busbw(topo)
    assert why == "PCIe gen 4 x16 (32 GB/s)" and expected == pytest.approx(25.6)
    findings = list(judge_topology(topo, {"NCCL_P2P_DISABLE": "1"}, 5.0))
    assert [f.id for f in findings] == ["node-p2p-unavailable", "node-nccl-p2p-disabled",
                                        "node-allreduce-below-topology"]
    assert "iommu=pt" in (findings[0].hint or "") and "6 pair(s)" in findings[0].message


def test_no_nvml_is_no_finding(tmp_path):
    """This machine's real state: no driver library, so nothing to judge (never a crash)."""
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": str(tmp_path)}
    topo = probe_topology(env)
    assert topo["error"] == "NVML_ERROR_LIBRARY_NOT_FOUND"
    assert ids(topo, busbw=1.0) == []
