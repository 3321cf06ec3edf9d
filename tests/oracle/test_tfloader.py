"""The loader oracle's parsing, judging and containment, against a stand-in framework library.

fake_framework.c exports TSL-mangled DsoLoader functions that answer OK, with an absl StatusRep,
with an inlined status code, or crash / hang, so every path of the child and its parent runs
without TensorFlow (the real wheels are in test_tfloader_real.py).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from tfdoctor.facts import LoaderAnswer, ProbeIssue, TensorFlowFacts, TfLoaderFacts
from tfdoctor.host import Host
from tfdoctor.probes import tfloader
from tfdoctor.probes.tfloader import judge, probe_tf_loader, reconcile

SOURCE = Path(__file__).with_name("fake_framework.c")
TF = TensorFlowFacts(version="2.21.0", is_cuda_build=True)


def build(tmp_path: Path, *defines: str) -> str:
    out = tmp_path / f"libtensorflow_framework{''.join(defines)}.so.2"
    subprocess.run(["cc", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", *defines, "-o",
                    str(out), str(SOURCE)], check=True)
    return str(out)


def ask(framework: str, timeout: float = 10.0) -> tuple[TfLoaderFacts | None, list[ProbeIssue]]:
    issues: list[ProbeIssue] = []
    host = Host(env={"PATH": "/usr/bin:/bin"}, python=sys.executable, timeout=timeout)
    return probe_tf_loader(host, issues, framework, TF), issues


def by_name(facts: TfLoaderFacts | None) -> dict[str, LoaderAnswer]:
    assert facts is not None
    return {a.name: a for a in facts.answers}


@pytest.mark.parametrize("abi, loader", [
    ([], "tsl::internal::DsoLoader"),
    (["-DOLD_ABSL"], "tsl::internal::DsoLoader"),
    (["-DPRE_ABSL"], "stream_executor::internal::DsoLoader"),
], ids=["tf-2.21-abseil", "tf-2.17-abseil", "tf-2.11-status"])
def test_reads_ok_error_and_inlined_status(tmp_path, abi, loader):
    """OK answers name the file through dlinfo; error statuses keep TF's message or code, in
    each Status encoding and loader namespace TensorFlow releases have shipped."""
    facts, issues = ask(build(tmp_path, *abi))
    answers = by_name(facts)
    assert facts is not None and facts.loader == loader and facts.error is None
    assert answers["cudart"].path and answers["cudart"].path.endswith("libm.so.6")
    assert answers["cublas"].error and "libcublas.so.12: cannot open shared object" in answers["cublas"].error
    assert answers["cufft"].error == "status code 5"
    assert answers["cudnn"].path and answers["cudnn"].path.endswith("libc.so.6")
    assert "curand" not in answers  # a function the framework lacks is not asked
    assert issues == []


@pytest.mark.parametrize("define, kind", [("-DCRASH", "crash"), ("-DHANG", "timeout")])
def test_a_crash_or_hang_costs_only_that_call(tmp_path, define, kind):
    """A call that kills the child keeps the answers before it, and a fresh child asks the rest."""
    facts, issues = ask(build(tmp_path, define), timeout=3.0)
    answers = by_name(facts)
    assert answers["cudnn"].path is None and answers["cudnn"].function == "GetCudnnDsoHandle"
    assert answers["cudnn"].error and "in GetCudnnDsoHandle" in answers["cudnn"].error
    assert answers["cudart"].path and answers["nccl"].error  # before and after the bad call
    assert [i.kind for i in issues] == [kind] and "GetCudnnDsoHandle" in issues[0].message


def test_no_loader_symbols_falls_back(tmp_path):
    """A framework without DsoLoader symbols (an unknown release) says so and answers nothing."""
    facts, issues = ask("libm.so.6")
    assert facts is not None and facts.loader is None and facts.answers == ()
    assert facts.error and "no DsoLoader symbols" in facts.error


def test_unloadable_framework(tmp_path):
    """A framework that does not load is an error on the facts, not an exception."""
    bad = tmp_path / "libtensorflow_framework.so.2"
    bad.write_text("not ELF")
    facts, _ = ask(str(bad))
    assert facts is not None and facts.error and "not asked" in facts.error


def test_no_tensorflow_no_answer():
    """Without a CUDA TensorFlow or its framework the oracle is not run at all."""
    host = Host(python=sys.executable)
    assert probe_tf_loader(host, [], None, TF) is None
    assert probe_tf_loader(host, [], "/x.so", None) is None


CANNOT = ("Could not load dynamic library 'libcusolver.so.11'; dlerror: libcusolver.so.11: "
          "cannot open shared object file: No such file or directory")


@pytest.mark.parametrize("model, answer, disagrees", [
    ("/a/libcusolver.so.11", LoaderAnswer("cusolver", "f", path="/a/../a/libcusolver.so.11"), False),
    (None, LoaderAnswer("cusolver", "f", path="/a/libcusolver.so.11"), True),
    ("/b/libcusolver.so.11", LoaderAnswer("cusolver", "f", path="/a/libcusolver.so.11"), True),
    (None, LoaderAnswer("cusolver", "f", error=CANNOT), False),
    ("/a/libcusolver.so.11", LoaderAnswer("cusolver", "f", error=CANNOT), True),
    # The file was found; a dependency of it was not: the model's resolution stands.
    ("/a/libcusolver.so.11", LoaderAnswer("cusolver", "f", error=(
        "Could not load dynamic library 'libcusolver.so.11'; dlerror: libnvJitLink.so.12: cannot "
        "open shared object file")), False),
    # A crash or an ABI surprise is no answer: the model stands.
    ("/a/libcusolver.so.11", LoaderAnswer("cusolver", "f", error="crashed: SIGSEGV in f"), False),
    (None, LoaderAnswer("cusolver", "f", error="status code 5"), False),
])
def test_judge(model, answer, disagrees):
    """TensorFlow wins only where it really answered, and only where it differs from the model."""
    verdict = judge("libcusolver.so.11", model, answer)
    assert (verdict is not None) == disagrees
    if verdict is not None:
        assert verdict.model_path == model
        assert verdict.path == answer.path and verdict.error == (None if answer.path else CANNOT)


def test_reconcile_ignores_libraries_the_model_does_not_have():
    """The driver (GetCudaDriverDsoHandle) and nvshmem of an older TF have no model entry."""
    loader = TfLoaderFacts("tsl::internal::DsoLoader", (
        LoaderAnswer("cuda", "GetCudaDriverDsoHandle", path="/x/libcuda.so.1"),
        LoaderAnswer("cudnn", "GetCudnnDsoHandle", path="/x/libcudnn.so.9"),))
    verdicts = reconcile({"cudnn": "libcudnn.so.9"}, {"cudnn": None}, loader)
    assert set(verdicts) == {"cudnn"} and verdicts["cudnn"].path == "/x/libcudnn.so.9"
    assert reconcile({"cudnn": "libcudnn.so.9"}, {"cudnn": None}, None) == {}


def test_child_and_parent_name_the_same_functions():
    """The parent maps a crashed call back to its library with a copy of the child's table."""
    spec = importlib.util.spec_from_file_location("child", tfloader.CHILD)
    assert spec and spec.loader
    child = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child)
    assert {f"Get{middle}DsoHandle": name for name, middle in child.FUNCTIONS} == tfloader.FUNCTION_NAMES


def test_parse_lines_skips_noise():
    """A sitecustomize that prints is ignored; only JSON objects count."""
    assert tfloader.parse_lines('hello\n{"loader": "x"}\n[1]\n{"done": true}\n') == [
        {"loader": "x"}, {"done": True}]
