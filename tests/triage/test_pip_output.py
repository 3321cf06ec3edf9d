"""pip's, poetry's and setuptools' own conflict messages, pip's install line, conda build strings and
/proc/cpuinfo flags, on real text (each excerpt names the report it was taken from)."""

# ruff: noqa: E501  (real log lines are long)
from __future__ import annotations

from tfdoctor.triage.recognisers import pip_output


def seen(text: str) -> list[tuple[str, object]]:
    return [(o.path, o.value if o.path != "log.cause" else (o.value.id, o.value.subject))
            for o in pip_output.recognise(text.splitlines())]


def test_pip_resolver_conflict_lines() -> None:
    """https://github.com/tensorflow/tensorflow/issues/56815: the installed protobuf and TF's range."""
    out = seen("tensorflow 2.9.1 requires protobuf<3.20,>=3.9.2, but you have protobuf 4.21.2 which is incompatible.")
    assert ("python.package", ("protobuf", "4.21.2")) in out
    assert ("tensorflow.distribution", ("tensorflow", "2.9.1")) in out
    assert ("log.cause", ("pip-dependency-conflict",
                          "protobuf 4.21.2 (tensorflow 2.9.1 requires protobuf<3.20,>=3.9.2)")) in out


def test_resolution_impossible_block_poetry_and_buildkit_prefix() -> None:
    """https://github.com/tensorflow/tensorflow/issues/60216 (pip), reflex-dev/reflex#2001 (poetry),
    uber/petastorm#715 (a Docker BuildKit log prefix)."""
    for line, dep in (("    tensorflow 2.12.0 depends on numpy<1.24 and >=1.22", "numpy"),
                      (" and tensorflow (2.14.0) depends on wrapt (>=1.11.0,<1.15), tensorflow (>=2.14.0) requires",
                       "wrapt"),
                      ("#30 26.12     tensorflow 2.5.0 depends on numpy~=1.19.2", "numpy"),
                      # jax-ml/jax#21335: PubGrub's (poetry, uv) form names the extra too
                      ("Because tensorflow[and-cuda] (2.15.0) depends on nvidia-nccl-cu12 (2.16.5)",
                       "nvidia-nccl-cu12")):
        out = seen(line)
        causes = [v for p, v in out if p == "log.cause"]
        assert causes and causes[0][0] == "pip-dependency-conflict" and causes[0][1].startswith(dep), out


def test_setuptools_and_successfully_installed() -> None:
    """neurodata/ProgLearn#402 (setuptools) and tensorflow/tensorflow#52922 (pip's install line)."""
    out = seen("error: numpy 1.18.5 is installed but numpy~=1.19.2 is required by {'tensorflow'}")
    assert ("python.package", ("numpy", "1.18.5")) in out
    out = seen("Successfully installed keras-2.7.0 tensorflow-2.6.2 tensorflow-estimator-2.7.0 wrapt-1.13.3")
    assert ("python.package", ("keras", "2.7.0")) in out
    assert ("tensorflow.distribution", ("tensorflow", "2.6.2")) in out


def test_conda_build_string_and_cpuinfo_flags() -> None:
    """jupyter/docker-stacks#1616 (conda's cpu_ build) and a /proc/cpuinfo flags line without AVX
    (tensorflow/tensorflow#45744)."""
    out = seen("  tensorflow                       2.7.0-cpu_py39h4655687_0 --> 2.7.0-cuda112py39h01bd6f0_0")
    assert ("tensorflow.is_cuda_build", False) in out and ("tensorflow.version", "2.7.0") in out
    out = seen("flags           : fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov sse sse2 ssse3 sse4_1 lm")
    assert ("platform.cpu_flags", ("sse4_1",)) in out and ("platform.machine", "x86_64") in out


def test_prose_and_commands_are_not_conflicts() -> None:
    """A sentence about dependencies and a pip command say nothing."""
    assert seen("My tensorflow setup depends on numpy, please help\npip install tensorflow==2.15") == []


def test_the_wheels_pip_fetches_are_what_it_installs() -> None:
    """pip's "Downloading <wheel>" and "Using cached <wheel>" (keras-team/keras-hub#1321; pip before
    20.3 printed the whole URL): the wheel's own file name (PEP 427) names the release it installs.
    A source archive or a line cut before the wheel's name says nothing."""
    assert seen("Downloading tensorflow_text-2.15.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (5.2 MB)") \
        == [("intent.pip_install", ("tensorflow-text==2.15.0",))]
    assert seen("  Downloading https://files.pythonhosted.org/packages/ab/cd/tensorflow_gpu-2.4.0-cp38-cp38-manylinux2010_x86_64.whl (394.8MB)") \
        == [("intent.pip_install", ("tensorflow-gpu==2.4.0",))]
    assert seen("Using cached tensorflow-2.12.0-cp310-cp310-win_amd64.whl (1.9 kB)") \
        == [("intent.pip_install", ("tensorflow==2.12.0",))]
    assert seen("Downloading tensorflow-2.12.0.tar.gz (10 kB)") == []
    assert seen("Downloading tensorflow_text-2.15.0-cp310") == []
