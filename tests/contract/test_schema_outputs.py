"""The shipped schemas, checked by the real check-jsonschema program (what a platform team runs)
against documents written by hand (tests/contract/documents: a report of a fixed venv with
found_via "preload" and "tensorflow", a cluster document; and damaged copies that must fail) and
against what the tool writes: a venv after `fix --apply` of the preload fix, a `triage --json`
and a `cluster --json` run on that venv, and a report whose library TensorFlow's own loader
found (found_via "tensorflow", through the real probe_libraries). None of these documents comes from
the schema generator, so a value the code writes and the schema lacks fails here (issue 21, item 6)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakegpu.e2e import E2EMachine, build, load_document, make_template_venv
from fakegpu.layout import Layout
from helpers import healthy, judge, need
from tfdoctor.facts import LoaderAnswer, TfLoaderFacts
from tfdoctor.host import Host
from tfdoctor.probes.libraries import probe_libraries

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = Path(__file__).resolve().parent / "documents"
REPORT_SCHEMA = ROOT / "docs" / "report.schema.json"
CLUSTER_SCHEMA = ROOT / "docs" / "cluster.schema.json"
SCENARIOS = ROOT / "tests" / "scenarios"
BIN = Path(sys.executable).parent
TFDOCTOR = BIN / "tfdoctor"
CHECKER = BIN / "check-jsonschema"
MUST_FAIL = json.loads((DOCUMENTS / "must-fail.json").read_text(encoding="utf-8"))


def hand(name: str) -> dict[str, Any]:
    return json.loads((DOCUMENTS / name).read_text(encoding="utf-8"))


def schema_for(doc: dict[str, Any]) -> Path:
    return CLUSTER_SCHEMA if doc.get("kind") == "cluster" else REPORT_SCHEMA


def check(doc: dict[str, Any], path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema --schemafile <the shipped schema> on `doc` written to `path`."""
    need(CHECKER.exists(), f"{CHECKER} missing: ./install.sh --dev installs it")
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return subprocess.run([str(CHECKER), "--schemafile", str(schema_for(doc)), str(path)],
                          capture_output=True, text=True, timeout=120)


def assert_valid(doc: dict[str, Any], path: Path) -> None:
    done = check(doc, path)
    assert done.returncode == 0, done.stdout + done.stderr


def pointer_set(doc: Any, pointer: str, value: Any) -> None:
    """Set the JSON Pointer (RFC 6901) `pointer` of `doc` to `value`."""
    keys = [k.replace("~1", "/").replace("~0", "~") for k in pointer.split("/")[1:]]
    for key in keys[:-1]:
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    if isinstance(doc, list):
        doc[int(keys[-1])] = value
    else:
        doc[keys[-1]] = value


def found_via(report: dict[str, Any]) -> set[str | None]:
    return {lib["found_via"] for lib in report["facts"]["libraries"]}


# --- documents written by hand -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["fixed-venv-h100.report.json", "two-workers.cluster.json"])
def test_hand_written_documents_pass(name, tmp_path):
    """What docs/facts.md and docs/cluster.md promise, written out by hand, passes: a venv after
    the preload fix (cuSOLVER found_via "preload", cuPTI "tensorflow") and a two-node job."""
    doc = hand(name)
    if name.endswith(".report.json"):
        assert found_via(doc) == {"preload", "tensorflow"}
    assert_valid(doc, tmp_path / name)


def test_a_cluster_document_holding_the_fixed_node_report_passes(tmp_path):
    """Each node's report is checked with the report part copied into cluster.schema.json: the
    fixed venv's found_via values must pass there too, not only in report.schema.json."""
    doc = hand("two-workers.cluster.json")
    doc["nodes"][0] = hand("fixed-venv-h100.report.json")
    assert_valid(doc, tmp_path / "cluster.json")


@pytest.mark.parametrize("case", MUST_FAIL, ids=[c["why"] for c in MUST_FAIL])
def test_hand_damaged_documents_fail(case, tmp_path):
    """A value no code writes fails, and check-jsonschema names where: a schema that accepted
    anything would pass the tests above."""
    doc = copy.deepcopy(hand(case["document"]))
    for pointer, name in case.get("embed", {}).items():
        pointer_set(doc, pointer, hand(name))
    for pointer, value in case["set"].items():
        pointer_set(doc, pointer, value)
    done = check(doc, tmp_path / "damaged.json")
    assert done.returncode == 1, done.stdout + done.stderr
    last = list(case["set"])[-1].rsplit("/", 1)[-1]
    assert last in done.stdout, done.stdout


# --- documents the tool writes -----------------------------------------------------------------


@pytest.fixture(scope="module")
def fixed_venv(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., subprocess.CompletedProcess[str]]:
    """TF 2.21 with its [and-cuda] wheels on a fake H100 node (tests/scenarios tf221_runpath_gap:
    cuSOLVER and cuRAND off TensorFlow's RUNPATH), after the real `tfdoctor fix --apply`;
    returns a runner of the console script on that machine."""
    base = tmp_path_factory.mktemp("fixed-venv")
    doc = load_document(SCENARIOS / "cases" / "tf221_runpath_gap.json")
    e2e: E2EMachine = build(base / "machine", doc, make_template_venv(base / "template"),
                            SCENARIOS / "tf")
    env = e2e.env | {"XDG_STATE_HOME": str(base / "state"), "HOME": str(base / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(TFDOCTOR), *args], capture_output=True, text=True, env=env,
                              timeout=300)

    run.python = str(e2e.python)  # type: ignore[attr-defined]
    applied = run("fix", "--python", run.python, "--apply", "--yes", "--json")  # type: ignore[attr-defined]
    assert applied.returncode == 0, applied.stderr[-3000:]
    assert "cuda-library-missing" in json.loads(applied.stdout)["before"]
    return run


def test_report_of_the_fixed_venv_passes(fixed_venv, tmp_path):
    """`tfdoctor --quick --json` after the preload fix: cuSOLVER and cuRAND now load by the
    preload (found_via "preload"), and the document passes the shipped report schema."""
    done = fixed_venv("--quick", "--json", "--python", fixed_venv.python)
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    libs = {lib["name"]: lib["found_via"] for lib in doc["facts"]["libraries"]}
    assert libs["cusolver"] == libs["curand"] == "preload", libs
    assert_valid(doc, tmp_path / "report.json")


def test_cluster_document_of_the_fixed_venv_passes(fixed_venv, tmp_path):
    """`tfdoctor cluster --json` on that venv (its fake TensorFlow cannot import, so the job
    fails; the node reports still arrive, with the preload) passes cluster.schema.json."""
    done = fixed_venv("cluster", "--no-tui", "--json", "--workers", "2", "--timeout", "60",
                      "--python", fixed_venv.python)
    assert done.returncode == 1, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    assert doc["kind"] == "cluster" and len(doc["nodes"]) == 2
    assert all("preload" in found_via(node) for node in doc["nodes"]), "node reports missing"
    assert_valid(doc, tmp_path / "cluster.json")


@pytest.mark.parametrize("ticket", ["tests/field/cases/awsdlc-6418.txt",
                                    "tests/triage/data/collect_env/vllm9293_wsl2.txt",
                                    "tests/field/cases/tensorflow-62626.txt"])
def test_triage_document_passes(ticket, tmp_path):
    """`tfdoctor triage --json` of a real ticket (a TensorFlow log read as a smoke run of
    outcome "ticket", a toolkit the user claims; a WSL 2 collect_env; the cuDNN TensorFlow's log
    says it loaded) passes the report schema."""
    done = subprocess.run([str(TFDOCTOR), "triage", "--json", str(ROOT / ticket)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (1, 3), done.stderr[-3000:]
    assert_valid(json.loads(done.stdout), tmp_path / "triage.json")


def test_report_where_tensorflows_loader_overrules_the_model_passes(tmp_path):
    """found_via "tensorflow" through the real probe: TF 2.21 whose RUNPATH misses cuSOLVER
    (stub libraries laid out as pip installs them), and TensorFlow's own loader answering that it
    opens the pip copy (the answer a full run's loader child gives, injected here: no real
    TensorFlow). probe_libraries takes TensorFlow's answer; the report passes the schema."""
    layout = Layout(tmp_path / "root")
    layout.tensorflow()
    for name, version in {"cudart": "12.5.82", "cusolver": "11.6.3", "cudnn": "9.3.0"}.items():
        layout.pip(name, version)
    cusolver = str(layout.site / "nvidia" / "cusolver" / "lib" / "libcusolver.so.11")
    loader = TfLoaderFacts(loader="tsl::internal::DsoLoader", answers=(
        LoaderAnswer("cusolver", "GetCusolverDsoHandle", path=cusolver),))
    host = Host(env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, root=layout.root,
                python=sys.executable, own_python=sys.executable, timeout=20.0)
    issues: list = []
    tf = layout.tf_facts(sonames={"cudart": "libcudart.so.12", "cusolver": "libcusolver.so.11",
                                  "cudnn": "libcudnn.so.9"})
    libs = {lib.name: lib for lib in probe_libraries(host, issues, layout.python_facts(), tf, loader)}
    assert (libs["cusolver"].found_via, libs["cusolver"].model_disagrees) == ("tensorflow", True)
    facts = replace(healthy(), libraries=tuple(libs.values()), tf_loader=loader)
    doc = json.loads(json.dumps(judge(facts).to_dict(exit_code=0)))
    assert "tf-loader-disagrees" in {f["id"] for f in doc["findings"]}
    assert_valid(doc, tmp_path / "report.json")
