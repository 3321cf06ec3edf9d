"""The JSON contract: the schema's facts part is generated from facts.py, its report envelope is
written by hand; every report we make matches it, and documents written by hand (documents/)
check what generating from the code cannot: that the code reads and writes what a person wrote."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers import change, healthy, judge
from schema_gen import FACTS_DOC, SCHEMA, render_facts_doc, render_schema
from tfdoctor.facts import (
    Facts,
    LogCause,
    NvmlSample,
    ProbeIssue,
    RecipeResult,
    SmokeDevice,
    SmokeFacts,
)
from tfdoctor.host import Host
from tfdoctor.smoke.runner import run_smoke

CURRENT = json.loads(SCHEMA.read_text(encoding="utf-8"))
DOCUMENTS = Path(__file__).resolve().parent / "documents"
"""Documents written by hand (tests/contract/test_schema_outputs.py checks them with check-jsonschema)."""
VALIDATOR = jsonschema.Draft202012Validator(CURRENT)
TFDOCTOR = Path(sys.executable).parent / "tfdoctor"


def errors(doc: dict[str, Any]) -> list[str]:
    """Every validation error, `path: message`, so a failure says where the drift is."""
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


def error_paths(doc: dict[str, Any]) -> set[tuple]:
    """Paths of every error, including those inside anyOf branches (nullable sections)."""
    found, stack = set(), list(VALIDATOR.iter_errors(doc))
    while stack:
        e = stack.pop()
        found.add(tuple(e.absolute_path))
        stack.extend(e.context or ())
    return found


def smoke_facts() -> SmokeFacts:
    """A smoke run with every nested type filled: devices, recipes, causes, NVML samples."""
    cause = LogCause(
        id="cudnn-version-mismatch",
        line="Loaded runtime CuDNN library: 9.1.0",
        subject="9.1.0 vs 9.3.0",
        recipe="conv2d",
    )
    sample = NvmlSample(
        gpu=0,
        t=1_790_000_000.25,
        sm_clock_mhz=1980,
        sm_clock_max_mhz=1980,
        power_w=512.5,
        power_limit_w=700.0,
        utilization_pct=97,
        temperature_c=61,
        throttle_reasons=("sw_power_cap",),
        pcie_gen=5,
        pcie_gen_max=5,
        pcie_width=16,
        pcie_width_max=16,
    )
    return SmokeFacts(
        python="/venv/bin/python",
        outcome="crashed",
        exit="SIGSEGV",
        seconds=12.5,
        limit_seconds=None,
        tf_version="2.21.0",
        is_cuda_build=True,
        devices=(SmokeDevice("CPU:0", "CPU"), SmokeDevice("GPU:0", "GPU", "NVIDIA H100 80GB HBM3", "9.0")),
        recipes=(
            RecipeResult(
                name="matmul",
                device="GPU:0",
                status="passed",
                seconds=1.5,
                metrics={"rel_error": 1e-6, "tflops": 512},
                info={"dtype": "float32"},
                log_lines=3,
                nvml=(sample,),
            ),
            RecipeResult(
                name="conv2d",
                device="GPU:0",
                status="crashed",
                seconds=0.4,
                detail="the child was killed by SIGSEGV",
                log_tail=("F0000 ...",),
                log_lines=40,
                causes=(cause,),
            ),
            RecipeResult(name="xla", status="not-run", detail="the child stopped before it"),
        ),
        causes=(cause,),
        log_tail=("Loaded runtime CuDNN library: 9.1.0",),
        log_lines=40,
        garbage=("hello from sitecustomize",),
        nvml_error=None,
        survivors=(),
    )


def variants() -> dict[str, Facts]:
    """Healthy, and changed machines that exercise nulls, errors and optional sections."""
    base = healthy()
    return {
        "healthy": base,
        "no-tensorflow": replace(base, tensorflow=None, xla=None, libraries=()),
        "no-driver": change(
            base,
            driver={
                "nvml_error": "NVML_ERROR_LIBRARY_NOT_FOUND",
                "gpus": (),
                "device_count": None,
                "errors": {"device_count": "NVML_ERROR_UNKNOWN"},
            },
            cuda_driver={
                "init_result": "CUDA_ERROR_NO_DEVICE",
                "device_count": 0,
                "errors": {"cuDeviceGetCount": "CUDA_ERROR_NOT_INITIALIZED"},
            },
        ),
        "probe-issues": replace(
            base,
            probe_issues=(ProbeIssue("nvml", "timeout", "after 10 s"),),
            env={"CUDA_VISIBLE_DEVICES": "0,1"},
        ),
        "shadowed-lib": replace(
            base,
            libraries=(
                replace(
                    base.libraries[0],
                    found_via="rpath",
                    origin="system",
                    version_source="filename",
                    other_copies=("/usr/lib/x86_64-linux-gnu/libcudart.so.12",),
                    search_path=("/opt/lib",),
                ),
            ),
        ),
        "smoke": replace(base, smoke=smoke_facts()),
    }


def test_schema_is_current():
    """The facts `$defs` are what facts.py says today: a field added, retyped or documented shows
    here. (Freshness only: validity is judged against documents written by hand, below.)"""
    assert SCHEMA.read_text(encoding="utf-8") == render_schema(CURRENT), (
        "run: python tests/contract/schema_gen.py"
    )


def test_facts_doc_is_current():
    """docs/facts.md lists every field with its type and docstring, as facts.py has them."""
    assert FACTS_DOC.read_text(encoding="utf-8") == render_facts_doc(), (
        "run: python tests/contract/schema_gen.py"
    )


def test_schema_is_valid_draft_2020_12():
    """Consumers load the schema with any 2020-12 validator; a malformed keyword would be ignored silently."""
    jsonschema.Draft202012Validator.check_schema(CURRENT)
    assert CURRENT["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_every_def_is_used():
    """A `$defs` entry nothing refers to is a stale hand-written copy of something generated."""
    text = json.dumps({k: v for k, v in CURRENT.items()})
    for name in CURRENT["$defs"]:
        assert f'"#/$defs/{name}"' in text, f"$defs/{name} is not referenced"


@pytest.mark.parametrize("name", list(variants()))
def test_reports_validate(name):
    """Reports of healthy and broken machines, with and without smoke results, match the schema:
    the envelope (verdict, findings, outcomes, asks) is written by hand in the schema, so this
    compares what build_report writes with it."""
    facts = variants()[name]
    doc = json.loads(json.dumps(judge(facts, expect_gpus=8).to_dict(exit_code=1)))
    assert errors(doc) == []


def test_hand_written_facts_validate_and_round_trip():
    """A facts document written by hand (the facts of documents/fixed-venv-h100.report.json: an
    H100 venv after the preload fix, found_via "preload" and "tensorflow") is what `--save` writes
    and `replay` reads: the Facts def alone accepts it, and Facts reads it and writes it back
    unchanged. (Validating Facts.to_dict() against a schema generated from the same dataclasses
    could never fail; this can, from either side.)"""
    facts_only = {"$schema": CURRENT["$schema"], "$defs": CURRENT["$defs"], "$ref": "#/$defs/Facts"}
    validator = jsonschema.Draft202012Validator(facts_only)
    written = json.loads((DOCUMENTS / "fixed-venv-h100.report.json").read_text(encoding="utf-8"))["facts"]
    assert [e.message for e in validator.iter_errors(written)] == []
    back = json.loads(json.dumps(Facts.from_dict(written).to_dict()))
    assert without_new_nulls(back, written) == written


def empty(value: Any) -> bool:
    """Null, false, an empty list or object, or an object of such: what a field added later
    defaults to."""
    return value is None or value is False or value in ([], {}) or (
        isinstance(value, dict) and all(empty(v) for v in value.values()))


def without_new_nulls(doc: Any, written: Any) -> Any:
    """`doc` less the keys `written` lacks whose value is empty: an optional field added after the
    document was written (the schema accepts it absent) reads back empty, nothing else may."""
    if isinstance(doc, dict) and isinstance(written, dict):
        return {k: without_new_nulls(v, written.get(k)) for k, v in doc.items()
                if k in written or not empty(v)}
    if isinstance(doc, list) and isinstance(written, list) and len(doc) == len(written):
        return [without_new_nulls(d, w) for d, w in zip(doc, written, strict=True)]
    return doc


@pytest.mark.parametrize("python", [sys.executable, "/no/such/python"])
def test_real_smoke_run_validates(python):
    """SmokeFacts from the real runner (import fails here; or the child cannot start) match the schema."""
    smoke = run_smoke(Host(python=python), budget=30.0, per_recipe=20.0)
    assert smoke.outcome in ("completed", "exited", "could-not-start")
    doc = json.loads(json.dumps(judge(replace(healthy(), smoke=smoke)).to_dict(exit_code=1)))
    assert errors(doc) == []


@pytest.mark.parametrize("args", [["--quick"], []], ids=["quick", "with-smoke"])
def test_real_run_validates(args):
    """The installed console script's --json output on this machine (no GPU, no TF) matches the schema."""
    proc = subprocess.run([str(TFDOCTOR), *args, "--json"], capture_output=True, text=True, timeout=120)
    doc = json.loads(proc.stdout)
    assert doc["verdict"]["exit_code"] == proc.returncode
    assert errors(doc) == []


def test_real_tf_run_validates(tf_cpu_python):
    """--quick --json against a real tensorflow-cpu venv fills tensorflow, libraries and xla."""
    proc = subprocess.run(
        [str(TFDOCTOR), "--quick", "--json", "--python", tf_cpu_python],
        capture_output=True,
        text=True,
        timeout=120,
    )
    doc = json.loads(proc.stdout)
    assert doc["facts"]["tensorflow"] is not None
    assert errors(doc) == []


def _set(doc: dict[str, Any], path: tuple, value: Any) -> None:
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


@pytest.mark.parametrize(
    "path, value",
    [
        (("facts", "driver", "unknown_key"), "x"),
        (("facts", "smoke", "recipes", 0, "nvml", 0, "fan_pct"), 40),
        (("facts", "driver", "device_count"), "8"),
        (("facts", "driver", "gpus", 0, "index"), True),
        (("facts", "driver", "gpus", 0, "memory_total_mib"), 81559.5),
        (("facts", "libraries", 0, "found_via"), "somewhere"),
        (("facts", "libraries", 0, "other_copies"), "/lib/libcudart.so.12"),
        (("facts", "tensorflow", "sonames", "cudnn"), 9),
        (("facts", "smoke", "outcome"), "exploded"),
        (("facts", "smoke", "recipes", 0, "metrics", "tflops"), "fast"),
        (("facts", "smoke", "causes", 0, "id"), "Not Kebab"),
        (("facts", "probe_issues"), [{"probe": "nvml", "kind": "hang", "message": ""}]),
    ],
    ids=lambda v: "/".join(map(str, v)) if isinstance(v, tuple) else None,
)
def test_schema_catches_drift(path, value):
    """An unknown key or a wrong type anywhere in facts fails, and the error points at it."""
    doc = json.loads(json.dumps(judge(variants()["smoke"]).to_dict(exit_code=1)))
    assert errors(doc) == []
    bad = copy.deepcopy(doc)
    _set(bad, path, value)
    assert errors(bad), f"schema accepted {path} = {value!r}"
    paths = error_paths(bad)
    assert any(p[: len(path) - 1] == path[:-1] for p in paths), paths  # at or below the parent


def test_schema_catches_a_missing_field():
    """to_dict writes every field, so a missing one means a consumer is reading another format."""
    doc = json.loads(json.dumps(judge(healthy()).to_dict(exit_code=0)))
    del doc["facts"]["cuda_driver"]["is_stub"]
    assert any("is_stub" in e for e in errors(doc))
