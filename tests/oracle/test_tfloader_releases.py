"""TensorFlow's own DsoLoader in every release family the compat tables cover (2.0 to 2.22rc0).

tests/envs/setup.sh keeps the real libtensorflow_framework.so.2 of one wheel per family. The real
loader probe (probes/tfloader.py and its child) asks each one, first with no CUDA library to be
found, then with a directory of stand-in libraries named as TensorFlow asked. The child must read
every answer: the loader's namespace (stream_executor::internal to 2.11, tsl::internal from 2.12),
each status message in both std::string ABIs (the copy-on-write one of the manylinux2010 wheels,
to 2.8), TF 2.10's wider StatusOr, and each handle's path. The sonames TensorFlow asks for must
be the compat table's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import need
from packaging.version import Version
from tfdoctor import compat
from tfdoctor.facts import TensorFlowFacts, TfLoaderFacts
from tfdoctor.host import Host
from tfdoctor.probes.tfloader import probe_tf_loader

ENVS = Path(os.environ.get("TFDOCTOR_TEST_ENVS", Path.home() / ".cache" / "tfdoctor" / "test-envs"))
RELEASES = ("2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.4.0", "2.5.0", "2.6.0", "2.7.0", "2.8.0", "2.9.0",
            "2.10.0", "2.11.0", "2.12.0", "2.13.0", "2.14.0", "2.15.0", "2.16.2", "2.17.1", "2.18.0",
            "2.19.0", "2.20.0", "2.21.0", "2.22.0rc0")
"""The wheels tests/envs/setup.sh keeps frameworks of (2.0: tensorflow-gpu; the rest: tensorflow)."""
ASKED = re.compile(r"Could not load dynamic library '([^']+)'; dlerror: \1: cannot open shared object file")


def framework(version: str) -> str:
    path = ENVS / "frameworks" / version / "tensorflow" / "libtensorflow_framework.so.2"
    need(path.is_file(), f"{path} missing: run tests/envs/setup.sh")
    return str(path)


def ask(version: str, ld_library_path: str | None = None) -> TfLoaderFacts:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "CONDA_PREFIX")}
    if ld_library_path:
        env["LD_LIBRARY_PATH"] = ld_library_path
    issues: list = []
    host = Host(env=env, python=sys.executable, own_python=sys.executable, timeout=60)
    loader = probe_tf_loader(host, issues, framework(version), TensorFlowFacts(version=version))
    assert issues == [] and loader is not None and loader.error is None, (issues, loader)
    return loader


def stand_in(directory: Path, soname: str) -> Path:
    """An empty shared library with this soname, as dlopen will take it."""
    path = directory / soname
    subprocess.run(["cc", "-shared", "-x", "c", "-", "-o", str(path), f"-Wl,-soname,{soname}"],
                   input="int tfdoctor_stand_in;\n", text=True, check=True)
    return path


@pytest.mark.parametrize("version", RELEASES)
def test_tensorflows_own_loader_answers_in_every_release(version, tmp_path):
    loader = ask(version)
    tsl = Version(compat.tf_release(version).version) >= Version("2.12")
    assert loader.loader == ("tsl" if tsl else "stream_executor") + "::internal::DsoLoader"
    asked: dict[str, str] = {}
    for answer in loader.answers:
        if answer.name == "nvjitlink":
            continue
        if answer.path:  # found anyway: cuPTI's fallback to plain libcupti.so, from the ldconfig cache
            assert answer.name == "cupti" and answer.path.endswith("/libcupti.so"), answer
            continue
        match = ASKED.search(answer.error or "")
        assert match, answer  # the whole message, read from TensorFlow's Status
        asked[answer.name] = match[1]
    assert {"cudart", "cublas", "cufft", "cusolver", "cusparse", "cudnn", "cuda"} <= set(asked)
    table = compat.tf_release(version).sonames
    assert {k: v for k, v in asked.items() if k in table} == {k: table[k] for k in asked if k in table}
    assert asked["cuda"] == "libcuda.so.1"

    for soname in asked.values():
        stand_in(tmp_path, soname)
    found = {a.name: a.path for a in ask(version, str(tmp_path)).answers if a.name in asked}
    assert found == {name: str(tmp_path / soname) for name, soname in asked.items()}


def test_every_family_of_the_tables_has_a_framework_here():
    """A new row in compat_tables/tensorflow.toml needs its framework in setup.sh and above."""
    assert {compat.tf_release(v).version for v in RELEASES} == set(compat.known_tf_versions())
