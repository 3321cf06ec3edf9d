"""The cluster document's JSON contract: docs/cluster.schema.json is generated (its report part
from report.schema.json, worker outcomes from the code), closed, and real cluster documents
match it, checked by jsonschema and by the real check-jsonschema program."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers import healthy, judge, need
from schema_gen import CLUSTER_SCHEMA, SCHEMA, render_cluster_schema
from tfdoctor.cluster.document import build_document
from tfdoctor.cluster.judge import record
from tfdoctor.cluster.workers import OUTCOMES

CURRENT = json.loads(CLUSTER_SCHEMA.read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(CURRENT)
RECORDED = Path(__file__).resolve().parents[1] / "cluster" / "fixtures" / "cluster-straggler.json"
"""A real `tfdoctor cluster --json` run: 2 tensorflow-cpu workers, worker 1 slowed by the test hook."""


def errors(doc: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


def recorded() -> dict[str, Any]:
    return json.loads(RECORDED.read_text(encoding="utf-8"))


def faulty() -> dict[str, Any]:
    """A document of a broken job built by the real cluster code: a worker that died before
    reporting, its node report missing, one node whose interconnect could not be read."""
    events = {
        "hello": {
            "task": "worker:0",
            "hostname": "n0",
            "ip": "10.0.0.1",
            "interface": "eth0",
            "pid": 10,
            "nccl_env": {"NCCL_DEBUG": "INFO"},
        },
        "import": {"version": "2.21.0", "is_cuda_build": True, "seconds": 3.0},
        "strategy": {"collective": "NCCL", "replicas": 2},
    }
    workers = [
        record(0, "10.0.0.1:2222", events, outcome="blocked", phase="strategy"),
        record(1, "10.0.0.2:2222", {}, outcome="died", exit="SIGKILL", log=("oom",)),
    ]
    nodes = [judge(healthy()).to_dict(exit_code=0), None]
    doc = build_document("tf-config", workers, nodes, 20.0, 18.0, [{"error": "NVML_ERROR_UNKNOWN"}, None])
    doc["verdict"]["exit_code"] = 1
    return json.loads(json.dumps(doc))


def test_cluster_schema_is_current():
    """The report part is today's report.schema.json and the outcomes are the code's: a field
    added to the report, or a new worker outcome, shows here."""
    report = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert CLUSTER_SCHEMA.read_text(encoding="utf-8") == render_cluster_schema(CURRENT, report), (
        "run: python tests/contract/schema_gen.py"
    )
    assert CURRENT["$defs"]["cluster_worker"]["properties"]["outcome"]["enum"] == list(OUTCOMES)


def test_cluster_schema_is_valid_draft_2020_12_and_closed():
    """Any 2020-12 validator loads it; every object of the cluster part rejects unknown keys."""
    jsonschema.Draft202012Validator.check_schema(CURRENT)
    assert CURRENT["additionalProperties"] is False
    for name, d in CURRENT["$defs"].items():
        if name.startswith("cluster_") and d.get("type") == "object":
            assert d["additionalProperties"] is False and d["required"] == list(d["properties"]), name
    text = json.dumps(
        {k: v for k, v in CURRENT.items() if k != "$defs"}
        | {"$defs": {k: v for k, v in CURRENT["$defs"].items() if k.startswith("cluster_")}}
    )
    for name in CURRENT["$defs"]:
        if name.startswith("cluster_"):
            assert f'"#/$defs/{name}"' in text, f"$defs/{name} is not referenced"


@pytest.mark.parametrize("doc", [recorded, faulty], ids=["recorded-real-run", "faulty-job"])
def test_cluster_documents_validate(doc):
    """A real run's document (nodes, topology errors, straggler) and a broken job's (null node,
    dead worker, consequences with caused_by) match the schema."""
    assert errors(doc()) == []


def test_check_jsonschema_accepts_the_real_document_and_rejects_a_damaged_one(tmp_path):
    """The real check-jsonschema program (what a platform team runs) with the schema file as is:
    no reference to fetch, the recorded document passes, a damaged one fails."""
    checker = Path(sys.executable).parent / "check-jsonschema"
    need(checker.exists(), f"{checker} missing: ./install.sh --dev installs it")
    ok = subprocess.run(
        [str(checker), "--schemafile", str(CLUSTER_SCHEMA), str(RECORDED)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    damaged = recorded()
    damaged["workers"][1]["outcome"] = "fine"
    bad_file = tmp_path / "damaged.json"
    bad_file.write_text(json.dumps(damaged))
    bad = subprocess.run(
        [str(checker), "--schemafile", str(CLUSTER_SCHEMA), str(bad_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1 and "outcome" in bad.stdout + bad.stderr


def _set(doc: Any, path: tuple, value: Any) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


@pytest.mark.parametrize(
    "path, value",
    [
        (("extra",), 1),
        (("kind",), "report"),
        (("launcher",), "mpi"),
        (("schema_version",), "1"),
        (("verdict", "status"), "fine"),
        (("findings", 0, "severity"), "fatal"),
        (("workers", 0, "gpu_count"), 8),
        (("workers", 1, "outcome"), "exploded"),
        (("workers", 0, "collective"), "GLOO"),
        (("workers", 0, "step_seconds"), [0.1, "slow"]),
        (("workers", 0, "allreduce", 0, "bytes"), "4096"),
        (("workers", 0, "allreduce", 0, "busbw"), 1.0),
        (("nodes", 0, "facts", "driver", "unknown_key"), "x"),
        (("nodes", 1), "no report"),
        (("topology", 0, "error"), 5),
        (("topology", 0, "nvlink"), []),
    ],
    ids=lambda v: "/".join(map(str, v)) if isinstance(v, tuple) else None,
)
def test_schema_catches_drift(path, value):
    """An unknown key or a wrong value anywhere (top level, a worker, a size, a node's own
    report, a topology) fails validation."""
    bad = copy.deepcopy(recorded())
    _set(bad, path, value)
    assert errors(bad), f"schema accepted {path} = {value!r}"


def test_schema_catches_a_missing_field():
    """Every key is always written: a missing one means a consumer is reading another format."""
    for path in (("workers", 0), ("workers", 0, "allreduce", 0), ()):
        bad = copy.deepcopy(recorded())
        target = bad
        for key in path:
            target = target[key]
        target.pop(sorted(target)[0])
        assert errors(bad), path
