"""TensorFlow's own DSO loader as the judge of which CUDA libraries load (the full run only).

`_tfloader_child.py` runs in the target interpreter, loads libtensorflow_framework (no
`import tensorflow`) and calls `DsoLoader::Get*DsoHandle()`: each dlopen() then happens inside
TensorFlow's own object, with its RUNPATH, exactly as at import. `reconcile` compares those
answers with tfdoctor's static model (libresolve.py); where they differ TensorFlow wins, and the
library is marked `model_disagrees` (a finding: the model is wrong for this layout).

Not in --quick: a child that maps the 1 GB framework costs 0.3-0.5 s on its own, the whole of
the quick run's budget (benchmarks/bench.py quick).

Releases: run on the real framework of one wheel of every family from 2.0 (tensorflow-gpu) to
2.22rc0 (tests/oracle/test_tfloader_releases.py): stream_executor::internal to 2.11, tsl::internal
from 2.12; tensorflow::Status to 2.12, then older and newer Abseil Status; the copy-on-write
std::string of the manylinux2010 wheels to 2.8; TF 2.10's wider StatusOr. Anything else falls
back to the model and says so (tf-loader-unavailable).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfdoctor.facts import LoaderAnswer, ProbeIssue, TensorFlowFacts, TfLoaderFacts
from tfdoctor.host import Host
from tfdoctor.probes import libresolve

CHILD = Path(__file__).with_name("_tfloader_child.py")
PROBE = "tf-loader"
FUNCTION_NAMES = {
    "GetCudaRuntimeDsoHandle": "cudart", "GetCublasDsoHandle": "cublas",
    "GetCublasLtDsoHandle": "cublasLt", "GetCufftDsoHandle": "cufft", "GetCurandDsoHandle": "curand",
    "GetCusolverDsoHandle": "cusolver", "GetCusparseDsoHandle": "cusparse",
    "GetCuptiDsoHandle": "cupti", "GetCudnnDsoHandle": "cudnn", "GetNcclDsoHandle": "nccl",
    "GetNvshmemDsoHandle": "nvshmem", "GetCudaDriverDsoHandle": "cuda",
}
"""Loader function -> short name: the child's FUNCTIONS table, read backwards (a test pins them)."""
ATTEMPTS = 3
"""Children started at most: each crash or hang skips the call it happened in and asks the rest."""


def probe_tf_loader(host: Host, issues: list[ProbeIssue], framework: str | None,
                    tf: TensorFlowFacts | None) -> TfLoaderFacts | None:
    """TensorFlow's loader answers for the framework at `framework`; None without a CUDA TF."""
    if tf is None or not framework:
        return None
    answers: dict[str, LoaderAnswer] = {}
    loader: str | None = None
    error: str | None = None
    skip: list[str] = []
    for _ in range(ATTEMPTS):
        result = host.run([host.python, "-I", str(CHILD), framework, *skip], timeout=host.timeout)
        records = parse_lines(result.stdout)
        for record in records:
            if "load_error" in record:
                error = f"TensorFlow's loader not asked: {record['load_error']}"
            elif "loader" in record:
                loader = str(record["loader"])
            elif "name" in record and "function" in record:
                answers[str(record["name"])] = answer_of(record)
        if result.ok or any(r.get("done") for r in records):
            break
        step = step_of(result.stderr)
        why = "timed out" if result.timed_out else (
            f"crashed: {result.signal_name}" if result.signal_name else result.describe_failure())
        issues.append(ProbeIssue(PROBE, "timeout" if result.timed_out else "crash",
                                 f"{CHILD.name} {why} in {step or 'startup'}"))
        error = f"{why} in {step or 'startup'}"
        if not step or not step.startswith("Get"):
            break  # it died loading the framework itself: nothing left to skip to
        name = FUNCTION_NAMES.get(step, step)
        answers[name] = LoaderAnswer(name=name, function=step, error=error)
        skip.append(step)
    else:
        error = error or "gave up after repeated crashes"
    return TfLoaderFacts(loader=loader, answers=tuple(answers.values()), error=error)


def parse_lines(stdout: str) -> list[dict[str, Any]]:
    """The child's JSON objects, one a line; anything else (a chatty sitecustomize) is skipped."""
    out = []
    for line in stdout.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def step_of(stderr: str) -> str | None:
    """The last "@step NAME" the child announced."""
    steps = [line[6:].strip() for line in stderr.splitlines() if line.startswith("@step ")]
    return steps[-1] if steps else None


def answer_of(record: Mapping[str, Any]) -> LoaderAnswer:
    path, error = record.get("path"), record.get("error")
    if record.get("abi") == "unexpected":
        error = f"unexpected ABI: {error}"
    return LoaderAnswer(name=str(record["name"]), function=str(record["function"]),
                        path=str(path) if path else None, error=str(error) if error else None)


@dataclass(frozen=True, slots=True)
class Verdict:
    """TensorFlow's answer where it differs from the model: the path it opened, or its error."""

    path: str | None
    error: str | None
    model_path: str | None


def judge(soname: str, model_path: str | None, answer: LoaderAnswer) -> Verdict | None:
    """None when TensorFlow's answer agrees with the model (or says nothing reliable)."""
    if answer.path:
        if model_path and os.path.realpath(model_path) == os.path.realpath(answer.path):
            return None
        return Verdict(libresolve.tidy(answer.path), None, model_path)
    error = answer.error or ""
    # Only TF's own status counts; a crash or an ABI surprise leaves the model's answer standing.
    if not error.startswith("Could not load dynamic library"):
        return None
    # "dlerror: libcusolver.so.11: cannot open ..." means no file by that name on TF's path; any
    # other dlerror (a missing dependency, a bad ELF header) means the file was found.
    if model_path and f"dlerror: {soname}: cannot open shared object file" in error:
        return Verdict(None, error, model_path)
    return None


def reconcile(sonames: Mapping[str, str], model: Mapping[str, str | None],
              loader: TfLoaderFacts | None) -> dict[str, Verdict]:
    """Short name -> TensorFlow's verdict, for the libraries where it disagrees with the model."""
    if loader is None:
        return {}
    out = {}
    for answer in loader.answers:
        if answer.name in sonames and answer.name in model:
            verdict = judge(sonames[answer.name], model[answer.name], answer)
            if verdict is not None:
                out[answer.name] = verdict
    return out
