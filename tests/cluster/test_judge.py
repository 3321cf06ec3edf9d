"""The cluster findings as pure functions of worker records and node reports (no processes)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import change, healthy, judge
from tfdoctor.cluster.document import build_document, exit_code
from tfdoctor.cluster.judge import _ifname_matches, record
from tfdoctor.exit_codes import ExitCode


def worker(index: int, *, host: str = "node", iface: str = "eth0", tf: str = "2.21.0",
           compute: float = 0.001, nccl: dict[str, str] | None = None, spread: float = 0.001,
           outcome: str = "completed", **events: Any) -> dict[str, Any]:
    base = {
        "hello": {"task": f"worker:{index}", "hostname": f"{host}{index}", "ip": f"10.0.0.{index}",
                  "interface": iface, "pid": 100 + index, "nccl_env": nccl or {}},
        "import": {"version": tf},
        "strategy": {"collective": "RING", "replicas": 2},
        "allreduce": {"results": [{"bytes": 4096, "seconds": 0.001, "algbw_gbs": 0.004,
                                   "busbw_gbs": 0.004, "exact": True, "wrong_elements": 0,
                                   "got_first": 3.0, "expected_first": 3.0}]},
        "skew": {"spread_s": spread},
        "compute": {"compute_seconds": [compute] * 5},
        "steps": {"step_seconds": [0.02] * 5},
    }
    base.update(events)
    return record(index, f"10.0.0.{index}:2222", base, outcome=outcome, phase="end")


def node(**sections: Any) -> dict[str, Any]:
    facts = change(healthy(), **sections) if sections else healthy()
    return judge(facts).to_dict(exit_code=0)


def ids(workers: list[dict[str, Any]], nodes: list[Any] | None = None) -> list[str]:
    doc = build_document("local", workers, nodes or [node() for _ in workers], 1.0, 60.0)
    return [f["id"] for f in doc["findings"] if f["severity"] != "info"]


def test_a_healthy_pair_has_no_problem_and_exits_0():
    """Same stack, same settings, exact sums, even steps: nothing to report, exit 0."""
    doc = build_document("local", [worker(0), worker(1)], [node(), node()], 1.0, 60.0)
    assert doc["verdict"]["status"] == "healthy" and exit_code(doc) == ExitCode.OK
    assert [f["id"] for f in doc["findings"]] == ["cluster-allreduce-measured", "cluster-nccl-not-run"]


def test_straggler_is_named_with_its_ratio():
    """Only the local compute time names a straggler (synchronous steps all wait for it); a
    3 ms step against 1 ms is noise, not a straggler (the 10 ms floor)."""
    doc = build_document("local", [worker(0), worker(1), worker(2, compute=0.05), worker(3, compute=0.003)],
                         [node()] * 4, 1.0, 60.0)
    f = next(f for f in doc["findings"] if f["id"] == "cluster-straggler")
    assert f["message"].startswith("worker:2 is a straggler: its compute step takes 50.0x")
    assert sum(f["id"] == "cluster-straggler" for f in doc["findings"]) == 1
    assert exit_code(doc) == ExitCode.OK and exit_code(doc, "warning") == ExitCode.PROBLEMS


@pytest.mark.parametrize(
    "spec, iface, ok",
    [("eth", "eth0", True), ("^lo,docker", "eth0", True), ("^lo", "lo", False),
     ("=eth0", "eth0", True), ("=eth", "eth0", False), ("ib", "eth0", False)],
)
def test_nccl_socket_ifname_follows_nccl_syntax(spec, iface, ok):
    """Prefixes, ^ to exclude, = for exact names, as NCCL reads NCCL_SOCKET_IFNAME."""
    assert _ifname_matches(spec, iface) is ok


def test_network_settings_that_differ_or_miss_the_address():
    """NCCL_* differing between workers, an ifname that excludes the address's interface, and
    loopback addresses on a multi-host cluster are each named."""
    got = ids([worker(0, nccl={"NCCL_SOCKET_IFNAME": "ib"}), worker(1, iface="lo")])
    assert set(got) == {"cluster-nccl-ifname-mismatch", "cluster-address-loopback",
                        "cluster-nccl-env-differs"}


def test_clock_skew_over_a_second_is_a_warning():
    """The spread of clocks read after one barrier bounds the skew."""
    assert ids([worker(0, spread=2.5), worker(1, spread=2.5)]) == ["cluster-clock-skew"]


def test_stacks_that_differ_between_nodes():
    """Another driver branch or cuDNN on one node is named from the nodes' static reports."""
    other = node(driver={"driver_version": "550.54.15"})
    got = ids([worker(0), worker(1)], [node(), other])
    assert got == ["cluster-stack-differs"]


def test_a_dead_worker_explains_the_others_collective_errors():
    """The died worker is the root cause; the peers' collective errors are its consequence."""
    failed = worker(0, outcome="error", error={"detail": "UnavailableError: x\nCollective ops "
                                                         "is aborted by: reset by peer"})
    dead = record(1, "10.0.0.1:2222", {}, outcome="died", exit="SIGKILL", phase="strategy")
    doc = build_document("local", [failed, dead], [node(), node()], 1.0, 60.0)
    assert doc["verdict"]["root_cause"] == "cluster-worker-died"
    consequence = next(f for f in doc["findings"] if f["id"] == "cluster-collective-failed")
    assert consequence["caused_by"] == "cluster-worker-died"
    assert "aborted by: reset by peer" in consequence["message"]
    assert exit_code(doc) == ExitCode.PROBLEMS


def test_a_worker_that_never_reported_leaves_the_verdict_incomplete():
    """No report from a node is not healthy: exit 3 when nothing else failed."""
    doc = build_document("tf-config", [worker(0), worker(1)], [node(), None], 1.0, 60.0)
    assert doc["verdict"]["status"] == "incomplete" and exit_code(doc) == ExitCode.INCOMPLETE


def test_a_nodes_interconnect_is_judged_once_for_the_workers_it_hosts():
    """Two workers on one 2-GPU node with a link down: one node-nvlink-down, named by the first
    worker on that node, and it is an error of the cluster verdict."""
    topo = {"gpus": [{"index": 0, "pcie_gen": 5, "pcie_width": 16}] * 2,
            "nvlink": [[True] * 18, [True] * 17 + [False]],
            "p2p": {"read": [[None, "ok"], ["ok", None]], "nvlink": [[None, "ok"], ["ok", None]]}}
    doc = build_document("local", [worker(0), worker(1)], [node(), node()], 1.0, 60.0, [topo, topo])
    found = [f for f in doc["findings"] if f["id"] == "node-nvlink-down"]
    assert len(found) == 1 and found[0]["message"].startswith("worker:0's node: NVLink links down")
    assert doc["verdict"]["root_cause"] == "node-nvlink-down" and exit_code(doc) == ExitCode.PROBLEMS


def test_every_cluster_finding_id_is_documented():
    """Finding ids are a public contract: each one the code can emit has a row in docs/cluster.md."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = "".join((root / "doctor/tfdoctor/cluster" / f).read_text() for f in ("judge.py", "topology.py"))
    emitted = set(re.findall(r'"((?:cluster|node)-[a-z0-9-]+)"', code)) - {"cluster-node"}
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", (root / "docs/cluster.md").read_text(), re.M))
    assert emitted and emitted <= documented, emitted - documented


def test_a_worker_without_tensorflow_is_named_as_such():
    """An import failure is not a collective failure: its own id, and the root cause."""
    broken = record(1, "10.0.0.1:2222", {"error": {"detail": "ModuleNotFoundError: No module named "
                                                             "'tensorflow'"}},
                    outcome="error", phase="hello")
    doc = build_document("local", [worker(0, outcome="error", error={"detail": "x"}), broken],
                         [node(), node()], 1.0, 60.0)
    assert doc["verdict"]["root_cause"] == "cluster-tf-import-failed"
    assert "No module named 'tensorflow'" in doc["findings"][0]["message"]


def test_ports_must_match_the_workers():
    """--ports with another count than --workers is a usage error before anything starts."""
    from click.testing import CliRunner
    from tfdoctor.cli import cli

    result = CliRunner().invoke(cli, ["cluster", "--workers", "2", "--ports", "23456"])
    assert result.exit_code == ExitCode.USAGE and "1 port(s) for 2 worker(s)" in result.stderr
